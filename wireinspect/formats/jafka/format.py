"""Formats for Kafka 0.7 / Jafka: log files (``jafka-log``) and raw request streams
(``jafka-requests``), with their encoders (``wireinspect encode``)."""

from __future__ import annotations

import os
import re

from wireinspect.formats.base import Format, MessageColumns
from wireinspect.formats.common import encode_unparsed
from wireinspect.inputs.source import Source

LOG_NAME = re.compile(r"^([0-9]{20})\.(kafka|jafka)$")
MAX_MESSAGE_SNIFF = 1 << 20


def log_name(name: str):
    """``(file base offset, dialect)`` from a log file name, or ``(None, None)``."""
    m = LOG_NAME.match(os.path.basename(name or ""))
    if not m:
        return None, None
    return int(m.group(1)), "jafka" if m.group(2) == "jafka" else "kafka07"


def first_message_ok(head: bytes) -> bool:
    """Does ``head`` start with a complete magic 0/1 message (:data:`~.messages.MESSAGE`) whose payload
    checksum matches?"""
    if len(head) < 10:
        return False
    size = int.from_bytes(head[:4], "big", signed=True)
    magic = head[4]
    if magic not in (0, 1) or not 5 <= size <= len(head) - 4:
        return False
    if magic == 1 and (size < 6 or head[5] & 0xFC):
        return False
    from wireinspect.formats.jafka.messages import MESSAGE  # only for a head that passed the checks above

    d = MESSAGE.decode(head, 0, 4 + size)
    return d.complete and MESSAGE.verify_crcs(head, d)["checksum"] == d.values["checksum"]


def _log_sniff(head: bytes, name: str) -> int:
    base, _ = log_name(name)
    if base is not None:
        return 95
    return 70 if first_message_ok(head) else 0


def _dialect(source: Source, opts) -> tuple[int, str]:
    """The log's base offset and dialect, from its name (``.jafka``: Jafka; else Kafka 0.7)."""
    base, dialect = log_name(source.path or source.name)
    return base or 0, dialect or "kafka07"


def _log_units(source: Source, opts):
    from wireinspect.formats.jafka.messages import iter_log

    base, dialect = _dialect(source, opts)
    return iter_log(source, file_base=base, dialect=dialect, records=not opts.headers_only, limit=opts.max_decompressed,
                    max_entry=opts.max_batch, max_records=opts.max_records)


def _log_check(source: Source, opts):
    from wireinspect.formats.jafka.messages import iter_log

    base, dialect = _dialect(source, opts)
    return iter_log(source, file_base=base, dialect=dialect, records=opts.deep, limit=opts.max_decompressed,
                    max_entry=opts.max_batch, max_records=opts.max_records)


def _log_encode(obj: dict, ctx) -> list:
    """A ``jafka-log`` object -> ``[(None, bytes)]``: a ``message`` through
    :func:`~wireinspect.formats.jafka.messages.encode_log_unit`, an ``unparsed`` range through
    :func:`~wireinspect.formats.common.encode_unparsed` (``rawBytes`` or ``rawZeros``)."""
    from wireinspect.formats.jafka.messages import encode_log_unit

    if isinstance(obj, dict) and obj.get("type") == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    return encode_log_unit(obj, ctx)


def _requests_sniff(head: bytes, name: str) -> int:
    from wireinspect.formats.jafka.stream import PROTOCOL

    return min(PROTOCOL.sniff(head[:64]), 35)


def _requests_units(source: Source, opts):
    from wireinspect.formats.jafka.stream import iter_requests

    return iter_requests(source, opts)


def _requests_encode(obj: dict, ctx) -> list:
    from wireinspect.formats.jafka.stream import encode_unit

    if isinstance(obj, dict) and obj.get("type") == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    data = encode_unit(obj, ctx)
    return [(None, data)] if data else []


JAFKA_LOG = Format(
    id="jafka-log",
    description="Kafka 0.7 / Jafka log file: message sets of magic 0/1 messages, offsets are byte positions",
    recognised_by="name NNNNNNNNNNNNNNNNNNNN.kafka (Kafka 0.7) or .jafka (Jafka), or a first message "
                  "(size, magic 0/1, CRC-32 of the payload) that checks out",
    sniff=_log_sniff,
    units=_log_units,
    check=_log_check,
    recoverable=True,
    honours=frozenset({"headers_only", "content", "offsets"}),
    entry_types=frozenset({"message"}),
    encode=_log_encode,
    encode_types=frozenset({"message", "unparsed"}),
)

JAFKA_REQUESTS = Format(
    id="jafka-requests",
    description="Kafka 0.7 / Jafka client-to-broker bytes: size + requestType framed requests (PRODUCE, FETCH, "
                "MULTIFETCH, MULTIPRODUCE, OFFSETS, CREATE, DELETE)",
    recognised_by="a first request whose size, type 0..6 and topic string agree (weak; use --format)",
    sniff=_requests_sniff,
    units=_requests_units,
    encode=_requests_encode,
    encode_types=frozenset({"request", "response", "unparsed", "note"}),
)

FORMATS = (JAFKA_LOG, JAFKA_REQUESTS)


# A Kafka 0.7/Jafka message as a row of spark scan's records: its payload is the value, its offset (the
# byte offset of the entry, what a FETCH names) the offset; a compressed wrapper has no row of its own.
MESSAGE_COLUMNS = MessageColumns("jafka", frozenset({"message"}), "payload", ("payload",), {"offset": "offset"},
                                 records_mean_wrapper=True)
