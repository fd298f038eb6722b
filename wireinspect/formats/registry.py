"""The formats wireinspect reads, as one explicit tuple, and how an input's format is chosen.

Each format module declares its :class:`~wireinspect.formats.base.Format` descriptors; this module
imports them directly (a format that fails to import fails loudly) and lists them in the order
``wireinspect formats`` prints them.
"""

from __future__ import annotations

from wireinspect.formats.base import Format
from wireinspect.formats.jafka.format import FORMATS as JAFKA
from wireinspect.formats.kafka.logformat import KAFKA_LOG
from wireinspect.formats.kafka.protocol.streamdump import KAFKA_STREAM
from wireinspect.formats.kafka.sidecar import FORMATS as KAFKA_SIDECARS
from wireinspect.formats.rocketmq.format import FORMATS as ROCKETMQ
from wireinspect.inputs.capture.pcapformat import PCAP

FORMATS: tuple[Format, ...] = (KAFKA_LOG, *KAFKA_SIDECARS, *JAFKA, *ROCKETMQ, PCAP, KAFKA_STREAM)


def all_formats() -> tuple[Format, ...]:
    """Every format, in the order ``wireinspect formats`` lists them."""
    return FORMATS


def get_format(fid: str) -> Format | None:
    for f in FORMATS:
        if f.id == fid:
            return f
    return None


NAMED = 95  # the confidence of a format that recognises a file by its name alone (leader-epoch-checkpoint)


def claims_name(name: str) -> bool:
    """True when some format recognises the file ``name`` by its name alone (confidence 95 or more with
    no bytes), so that its text must not be read as a hex dump (a checkpoint such as "0\n1\n0 0")."""
    import os

    base = os.path.basename(name or "")
    return any(f.sniff(b"", base) >= NAMED for f in FORMATS)


def choose_format(head: bytes, name: str) -> Format | None:
    """The format that claims ``head``/``name`` most confidently, or ``None``."""
    best, score = None, 0
    for f in FORMATS:
        s = f.sniff(head, name)
        if s > score:
            best, score = f, s
    return best
