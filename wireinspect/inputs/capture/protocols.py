"""The stream protocols a capture's conversations are decoded with. This package knows no particular
protocol: the explicit tuple is ``STREAM_PROTOCOLS`` in :mod:`wireinspect.catalog` (the interface is
in :mod:`wireinspect.streams`), looked up on first use (the catalog lists this package's formats, so
it cannot be imported while this package is)."""

from __future__ import annotations

from wireinspect.errors import EncodeError

_BY_ID: dict = {}


def stream_protocols() -> tuple:
    """``wireinspect.catalog.STREAM_PROTOCOLS``: every stream protocol, in the order ties are broken."""
    from wireinspect.catalog import STREAM_PROTOCOLS

    return STREAM_PROTOCOLS


def _by_id() -> dict:
    if not _BY_ID:
        _BY_ID.update((p.id, p) for p in stream_protocols())
    return _BY_ID


def protocol_named(pid) -> object | None:
    """The protocol whose ``id`` is ``pid`` (None when there is none)."""
    return _by_id().get(pid)


def protocol_of_unit(u):
    """The protocol a captured unit was decoded with (its conversation's, else its own ``protocol``)."""
    conv = u.conversation
    return _by_id().get((conv.protocol if conv is not None else None) or u.protocol)


def protocol_of(obj: dict):
    """The protocol that encodes a ``dump --json`` object of a capture (its ``"protocol"``; without
    one, the first of ``STREAM_PROTOCOLS``, Kafka); EncodeError when it has no encoder."""
    pid = obj.get("protocol") or stream_protocols()[0].id
    p = _by_id().get(pid)
    if p is None or p.encode is None:
        raise EncodeError(f".protocol: no stream protocol {pid!r} with an encoder")
    return p
