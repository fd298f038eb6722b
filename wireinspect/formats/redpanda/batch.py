"""One Redpanda record batch: the little-endian header (:data:`~.header.HEADER`), both CRC-32Cs, and
the Kafka records inside, read by the Kafka record loop.

Sources: ``src/v/storage/parser.cc`` (what the broker's parser checks: 61 header bytes, not all zero,
``header_crc``), ``src/v/storage/log_replayer.cc`` (recovery also checks ``crc``, Kafka's CRC over the
big-endian header fields and the records), ``src/v/model/record_utils.cc``.

:class:`RedpandaBatch` is a :class:`wireinspect.formats.kafka.records.Batch` whose ``header`` is the
Kafka form of the Redpanda header (:func:`~.header.kafka_form`): the record loop, the record JSON and
tree, the decompression of every codec and the record checks are Kafka's (positions from byte 17 on
are the same in both headers). ``rp`` holds the 13 values in Redpanda's order; the JSON and the tree
use Redpanda's names.
"""

from __future__ import annotations

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_RECORDS
from wireinspect.codec.crc import crc32c
from wireinspect.formats.kafka.records import (Batch, add_attribute_nodes, batch_display, check_header, crc_display,
                                              decode_attributes)
from wireinspect.formats.redpanda.header import (AT, HEADER, HEADER_SIZE, NAMES, SPANS, STRUCT, batch_type_name,
                                                 header_crc, kafka_crc_start, kafka_form)
from wireinspect.inputs.source import checksum
from wireinspect.model import Node, Problem


class RedpandaBatch(Batch):
    """A parsed Redpanda batch. ``position``/``length``: its span in the input (bytes); ``rp``: the
    13 header values in :data:`~.header.NAMES` order (``None`` when fewer than 61 bytes were there:
    ``partial`` holds them); ``header``: their Kafka form; ``header_crc_ok``/``crc_ok``: the two
    verdicts (``None`` when not computed); ``path``: the input's path and ``topic``: the topic
    directory's name (``None`` when the path is not ``<namespace>/<topic>/<partition>_<revision>/``):
    what says which internal topic (``__consumer_offsets``...) a batch belongs to."""

    type = "redpanda_batch"
    __slots__ = ("rp", "header_crc_ok", "header_crc_computed", "path", "topic")

    def __init__(self, position):
        super().__init__(position)
        self.rp = None
        self.header_crc_ok = None
        self.header_crc_computed = None
        self.path = None
        self.topic = None

    @property
    def valid(self) -> bool:
        """Kept by Redpanda's recovery (``log_replayer``): complete, header_crc and crc match."""
        return bool(self.header_crc_ok) and bool(self.crc_ok)

    def header_json(self) -> dict:
        d = {"type": self.type, "position": self.position, "length": self.length}
        if self.rp:
            h = self.rp
            d.update(zip(NAMES, h))
            d["batchTypeName"] = batch_type_name(h[3])
            d["lastOffset"] = h[2] + h[6]
            d.update(decode_attributes(h[5]))
            d["headerCrcValid"] = self.header_crc_ok
            d["crcValid"] = self.crc_ok
        else:
            d.update(HEADER.decode(self.partial, 0, len(self.partial), self.position).values)
            d.pop("records", None)
        return d

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: see :mod:`wireinspect.formats.redpanda.encode`."""
        from wireinspect.formats.redpanda.encode import batch_raw_json

        return batch_raw_json(self, read, enc)

    def tree_head(self) -> Node:
        """The root node of :meth:`to_tree` without its children (``dump --summary``)."""
        self.parse_records()
        node = Node("batch", self.position, self.length, type=self.type, problems=list(self.problems))
        h = self.rp
        node.display = ("truncated Redpanda batch" if not h else
                        f"{batch_type_name(h[3])}  " + batch_display(h[2], h[6], h[5], h[12], self.control_text()))
        return node

    def to_tree(self) -> Node:
        """The field tree, every node at its absolute byte position."""
        node = self.tree_head()
        if not self.rp:
            d = HEADER.decode(self.partial, 0, len(self.partial), self.position)
            HEADER.add_nodes(node, d)
            return node
        h = self.rp
        base = self.position
        for (name, off, size), value in zip(SPANS, h):
            child = node.add(name, base + off, size, value)
            if name == "header_crc":
                child.display = crc_display(value, self.header_crc_ok, self.header_crc_computed)
            elif name == "crc":
                child.display = crc_display(value, self.crc_ok, self.crc_computed)
            elif name == "batch_type":
                child.display = f"{value} ({batch_type_name(value)})"
            elif name == "attrs":
                add_attribute_nodes(child, value, base + off, size)
            elif name == "last_offset_delta":
                node.add("lastOffset", base + off, size, h[2] + value, derived=True)
        if self.records is not None:
            node.children.append(self._records_tree())
        return node


def _header_checks(b: RedpandaBatch, buf, pos: int, base: int) -> None:
    h = b.rp
    b.header_crc_computed = header_crc(buf, pos)
    b.header_crc_ok = b.header_crc_computed == h[0]
    if not b.header_crc_ok:
        b.problems.append(Problem("header_crc_mismatch", base + pos, f"stored header_crc 0x{h[0]:08x}, computed "
                                  f"0x{b.header_crc_computed:08x}: Redpanda's parser stops here",
                                  expected=h[0], actual=b.header_crc_computed))


def parse_batch(buf, pos: int = 0, base: int = 0, *, records: bool | str = True, limit: int = DEFAULT_LIMIT,
                max_records: int = DEFAULT_MAX_RECORDS, internal: str | None = None) -> RedpandaBatch:
    """Parse the Redpanda batch at ``buf[pos]`` (absolute position ``base + pos``). ``buf`` may end
    before the batch does (``truncated``). Never raises on bad bytes. ``records``: ``True`` decode
    them, ``False`` skip them, ``"lazy"`` when a projection first needs them; ``limit`` bounds the
    decompressed bytes, ``max_records`` the records decoded; ``internal``: the internal-topic kind
    whose keys and values the records hold (Kafka's ``Batch.internal``, e.g. ``"offsets"``)."""
    b = RedpandaBatch(base + pos)
    b.internal = internal
    avail = len(buf) - pos
    if avail < HEADER_SIZE:
        b.length = max(avail, 0)
        b.partial = bytes(buf[pos:])
        b.problems.append(Problem("truncated", base + pos, f"Redpanda batch header needs {HEADER_SIZE} bytes, only "
                                  f"{avail} remain", expected=HEADER_SIZE, actual=avail))
        return b
    h = STRUCT.unpack_from(buf, pos)
    b.rp = h
    b.header = kafka_form(h)
    _header_checks(b, buf, pos, base)
    size = h[1]
    problems = b.problems
    if size < HEADER_SIZE:
        b.length = HEADER_SIZE
        problems.append(Problem("bad_length", base + pos + AT["size_bytes"], f"size_bytes {size} is smaller than "
                                f"the {HEADER_SIZE}-byte header", actual=size))
        return b
    if size > avail:
        b.length = avail
        problems.append(Problem("truncated", base + pos + AT["size_bytes"], f"batch of {size} bytes runs past the "
                                f"end of the data ({avail} bytes left)", expected=size, actual=avail))
    else:
        b.length = size
        b.crc_computed = crc32c(buf[pos + HEADER_SIZE:pos + size], kafka_crc_start(h))
        b.crc_ok = b.crc_computed == h[4]
        if not b.crc_ok:
            k = b.header
            problems.append(Problem("crc_mismatch", base + pos + AT["crc"], f"batch offsets {k[0]}..{k[0] + k[6]}: "
                                    f"stored crc 0x{h[4]:08x}, computed "
                                    f"0x{b.crc_computed:08x} (Kafka's CRC-32C over the big-endian header and the "
                                    "records)", expected=h[4], actual=b.crc_computed))
    check_header(b, b.header, problems)
    if records:
        b._lazy = (buf, pos, base, limit, max_records)  # Batch.parse_records runs the Kafka record loop
        if records is True:
            b.parse_records()
    return b


def parse_big(source, pos: int, size: int, records: bool) -> RedpandaBatch:
    """A batch larger than ``--max-batch``: header checked, crc computed over the source in chunks,
    records not decoded (a ``records_not_decoded`` problem when they were asked for)."""
    head = source.read(pos, HEADER_SIZE)
    b = parse_batch(head, 0, pos, records=False)
    b.problems = [p for p in b.problems if p.code != "truncated"]
    b.length = size
    value = checksum(source, pos + HEADER_SIZE, pos + size, crc32c, kafka_crc_start(b.rp))
    b.crc_computed = value
    b.crc_ok = value == b.rp[4]
    if not b.crc_ok:
        k = b.header
        b.problems.append(Problem("crc_mismatch", pos + AT["crc"], f"batch offsets {k[0]}..{k[0] + k[6]}: "
                                  f"stored crc 0x{b.rp[4]:08x}, computed "
                                  f"0x{value:08x}", expected=b.rp[4], actual=value))
    if records:
        b.problems.append(Problem("records_not_decoded", pos, f"batch of {size} bytes is larger than --max-batch; "
                                  "its header and crc were checked, its records not decoded", actual=size))
    return b
