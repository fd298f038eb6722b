"""Stream dumps as inputs: the bytes of one direction of a connection saved raw (Wireshark "Follow TCP
Stream" saved as raw, a hex dump of one, a single frame on stdin), or both directions as
``tshark -z follow,tcp,raw`` text (:mod:`.follow`), decoded by one stream protocol.

This module knows no particular protocol: :func:`stream_dump_format` declares the Format of a
protocol that has a ``dump`` (:class:`wireinspect.streams.StreamDump`: its id, descriptions, how its
raw dumps are sniffed and which direction one holds); :mod:`wireinspect.catalog` lists the result
(``kafka-stream``).
"""

from __future__ import annotations

from wireinspect.errors import InputError
from wireinspect.formats.base import Format
from wireinspect.formats.common import encode_unparsed
from wireinspect.inputs.capture.follow import FOLLOW, FOLLOW_TEXT_MAX, follow_raw_events
from wireinspect.inputs.source import Source
from wireinspect.streams import Conversation, Event, stream_name

CHUNK = 1 << 20  # bytes per data event of a raw dump
DIRECTION_HEAD = 1 << 16  # bytes a protocol sees to tell a raw dump's direction


def stream_units(source: Source, opts, protocol, records: bool | None = None):
    """Units of a stream dump of ``protocol`` (one direction raw, or both from ``tshark -z
    follow,tcp,raw`` text), in stream order, after the capture filters (``--api``,
    ``--correlation-id``). A raw dump's direction is ``protocol.dump.direction``'s guess. Follow text
    is read whole: larger than ``FOLLOW_TEXT_MAX`` bytes is an :class:`InputError`."""
    from wireinspect.inputs.capture.connections import with_records
    from wireinspect.inputs.capture.filters import Filters

    opts = with_records(opts, records)
    filters = Filters(opts)
    head = source.read(0, 512)
    conv = Conversation(0, source=source.name)
    dec = protocol.decoder(conv, opts)
    conv.protocol = protocol.id
    if FOLLOW.match(head):
        if source.size > FOLLOW_TEXT_MAX:
            raise InputError(f"{source.name}: follow,tcp,raw text larger than {FOLLOW_TEXT_MAX >> 20} MiB; "
                             "save the stream raw instead")
        n0, n1, gen = follow_raw_events(source.read(0, source.size).decode("utf-8", "replace"))
        conv.client, conv.server = n0, n1
        events = iter(gen)
    else:
        direction = protocol.dump.direction(source.read(0, DIRECTION_HEAD), source.size)

        def one_direction():
            p = 0
            while p < source.size:
                chunk = source.read(p, CHUNK)
                if not chunk:
                    break
                yield Event(direction, "data", p, chunk, len(chunk))
                p += len(chunk)
            yield Event(direction, "end", p)
        events = one_direction()
    for ev in events:
        for u in dec.feed(ev):
            if filters.unit_ok(u):
                yield u
    for u in dec.close():
        if filters.unit_ok(u):
            yield u


def encode_stream(obj: dict, ctx, protocol) -> list:
    """A stream dump's object -> ``[(stream, bytes)]``: ``None`` for a one-direction dump; for
    ``tshark -z follow,tcp,raw`` text (both directions: its connection names the two nodes) the
    direction, so that each direction's bytes come back apart (the text itself is not rebuilt). An
    ``unparsed`` range comes back in chunks (:func:`~wireinspect.formats.common.encode_unparsed`: a
    file's zeros are never one allocation); every other object through ``protocol.encode``. Raises
    :class:`~wireinspect.errors.EncodeError`."""
    conn = obj.get("connection")
    both = isinstance(conn, dict) and (conn.get("client") is not None or conn.get("server") is not None)
    stream = stream_name(obj, with_index=False) if both else None  # part of a file name: checked
    if isinstance(obj, dict) and obj.get("type") == "unparsed":
        chunks = encode_unparsed(obj, ctx)
    else:
        chunks = [protocol.encode(obj, ctx)]
    return [(stream, c) for c in chunks if c]


def stream_dump_format(protocol) -> Format:
    """The Format of ``protocol``'s stream dumps, from its ``dump`` (a
    :class:`~wireinspect.streams.StreamDump`): follow text sniffs 90, raw bytes as ``dump.sniff``
    says; ``units``/``check`` are :func:`stream_units` (``check`` decodes frames' contents only with
    ``--deep``); ``encode`` is :func:`encode_stream`."""
    dump = protocol.dump

    def sniff(head: bytes, name: str) -> int:
        if FOLLOW.match(head):
            return 90
        return dump.sniff(head, name)

    return Format(
        id=dump.id,
        description=dump.description,
        recognised_by=dump.recognised_by,
        sniff=sniff,
        units=lambda src, opts: stream_units(src, opts, protocol),
        check=lambda src, opts: stream_units(src, opts, protocol, opts.deep),
        honours=dump.honours,
        encode=lambda obj, ctx: encode_stream(obj, ctx, protocol),
    )
