"""The stream protocols a capture's conversations are decoded with: one explicit tuple, imported
directly (a protocol that fails to import fails loudly). The interface is in :mod:`wireinspect.inputs.capture`."""

from __future__ import annotations

from wireinspect.errors import EncodeError
from wireinspect.formats.jafka.stream import PROTOCOL as JAFKA
from wireinspect.formats.kafka.protocol.stream import KAFKA
from wireinspect.formats.rocketmq.stream import PROTOCOL as ROCKETMQ

STREAM_PROTOCOLS: tuple = (KAFKA, ROCKETMQ, JAFKA)
_BY_ID = {p.id: p for p in STREAM_PROTOCOLS}


def stream_protocols() -> tuple:
    return STREAM_PROTOCOLS


def protocol_named(pid) -> object | None:
    """The protocol whose ``id`` is ``pid`` (None when there is none)."""
    return _BY_ID.get(pid)


def protocol_of_unit(u):
    """The protocol a captured unit was decoded with (its conversation's, else its own ``protocol``)."""
    conv = getattr(u, "conversation", None)
    return _BY_ID.get(getattr(conv, "protocol", None) or getattr(u, "protocol", None))


def protocol_of(obj: dict):
    """The protocol that encodes a ``dump --json`` object of a capture (its ``"protocol"``, Kafka by
    default); EncodeError when it has no encoder."""
    pid = obj.get("protocol") or "kafka"
    p = _BY_ID.get(pid)
    if p is None or getattr(p, "encode", None) is None:
        raise EncodeError(f".protocol: no stream protocol {pid!r} with an encoder")
    return p
