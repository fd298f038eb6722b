"""The two units every format shares: :class:`Unparsed` (bytes that hold no valid entry or frame) and
:class:`Note` (a finding that covers no bytes), with the one encoder of unparsed ranges.

Every walk and stream splitter yields these (Kafka log segments, Kafka 0.7/Jafka logs and streams,
RocketMQ store files and remoting streams, Kafka protocol streams, captures): there is no second
copy of either in a format.

``unparsed`` JSON (``dump --json``)::

    {"type": "unparsed", ["protocol", "connection", "direction",] "position", "length", "problems",
     "records": [], ["note",] ["notes"]}

``protocol``/``connection``/``direction`` are there for a capture's (or stream dump's) units, whose
positions are byte positions in that direction's stream; ``note`` is a display text some store files
give (RocketMQ: ``"unused entries to the end of the file: 400 zero bytes"``); ``notes`` are findings
that are not damage (``mid_stream_start``). Its problem says what the bytes are: ``garbage``,
``zero_fill`` (a preallocated or torn tail), ``truncated``, ``bad_length``, ``unparsed_bytes``...; none
for RocketMQ's unused preallocated space.

Raw keys (``dump --json --raw``): ``rawBytes`` (the bytes as stored; for a stream, the bytes the
stream holds: a TCP gap's missing bytes are not in them) or ``rawZeros`` (their number, when they are
all zero). :func:`encode_unparsed` writes them back; without either it writes ``length`` zero bytes
when the object's ``problems`` say zero fill (``zero_fill`` only, or none), else it is an error.

``note`` JSON: ``{"type": "note", ["protocol", "connection", "direction",] "position", "length",
["message",] "problems", ["notes"]}``; a capture's file-level finding is the same unit with
``"type": "capture"`` (its ``position`` is a capture *file* position). Notes stand for no bytes.
"""

from __future__ import annotations

from wireinspect.codec.bytesfmt import raw_encoder
from wireinspect.formats.unit import UnitBase
from wireinspect.model import Node

MAX_ZEROS = 1 << 31
"""The most zero bytes one unparsed range of a file stands for (a Kafka segment is at most 2 GiB,
positions being int32; a RocketMQ commit-log file 1 GiB): encode refuses more."""

STREAM_KEEP_MAX = 64 << 20
"""Bytes of one unparsed stretch of a stream kept for ``dump --json --raw`` (a capture's stream bytes
are not in the capture file at their positions, so they are kept as the stream is split); past it,
none are kept and encode refuses the stretch. Also the most zero bytes a stream's range stands for."""

_ZERO_CHUNK = bytes(1 << 20)


def stream_fields(d: dict, unit) -> dict:
    """Add ``protocol``, ``connection`` and ``direction`` of a stream unit (``unit.protocol`` set) to ``d``."""
    d["protocol"] = unit.protocol
    conn = unit.connection
    if conn is None and unit.conversation is not None:
        cj = getattr(unit.conversation, "connection_json", None)
        conn = cj() if cj is not None else None
    d["connection"] = conn
    d["direction"] = unit.direction
    return d


class _Stream(UnitBase):
    """Where a unit sits in a capture: ``protocol``, ``conversation``, ``direction`` (UnitBase: None
    for a file's units), set by the stream decoders, and ``connection``."""

    connection = None  # the connection's JSON; default: the conversation's


def _stream_place(unit, protocol, conversation, direction) -> None:
    """A capture's (or stream dump's) unit says which protocol, connection and direction it is in."""
    if protocol is not None:
        unit.protocol = protocol
    if conversation is not None:
        unit.conversation = conversation
    if direction is not None:
        unit.direction = direction


class Unparsed(_Stream):
    """Bytes that hold no valid entry: garbage, a zero-filled stretch, a torn tail, free space, the
    bytes a stream splitter skipped while resynchronising.

    ``position``/``length`` in bytes (absolute in the input, or in a stream's direction);
    ``problems``: what is wrong (none for expected space); ``preview``: up to 64 of the bytes (tree).
    ``data``: the bytes when they are not the input's at ``position`` (a stream's: a TCP gap inside
    the stretch is not in them); ``dropped``: True when a stream did not keep them (longer than
    :data:`STREAM_KEEP_MAX`). ``zeros``: True/False when the caller knows whether the range is all
    zero (else ``raw_json`` reads it to tell). ``note``: display text; ``notes``: findings that are
    not damage; ``what``: what the bytes hold no valid one of (tree text)."""

    type = "unparsed"
    entries = 0  # holds no entry: ``verify`` counts no batch for it
    valid = False  # never an entry the broker keeps (even RocketMQ's unused space, with no problem)

    def __init__(self, position: int, length: int, problems: list, preview: bytes = b"", *, note: str = "",
                 data=None, dropped: bool = False, zeros: bool | None = None, notes: list | None = None,
                 what: str = "valid entry", protocol=None, conversation=None, direction=None):
        self.position, self.length, self.problems, self.preview = position, length, problems, preview
        self.note, self.data, self.dropped, self.zeros = note, data, dropped, zeros
        self.notes = notes or []
        self.what = what
        _stream_place(self, protocol, conversation, direction)

    @property
    def raw_bytes(self):
        """A stream's stretch: a method giving the bytes it kept (``dump --hexdump``, ``view``); None
        for a file's (its bytes are the input's at ``position``) and for a stream's it did not keep."""
        data = self.data
        return None if data is None else (lambda: bytes(data))

    def raw_json(self, read, enc) -> dict:
        """``dump --json --raw``: ``rawZeros`` (a number of zero bytes) or ``rawBytes`` (the bytes);
        nothing when the range is empty or a stream did not keep its bytes. ``read(position, n)``
        reads the input (not used for a stream's units, which hold their bytes)."""
        if self.data is not None:
            data = bytes(self.data)
            if data and data.count(0) == len(data):
                return {"rawZeros": len(data)}
            return {"rawBytes": raw_encoder()(data)}
        if self.dropped or self.length <= 0:
            return {}
        zeros = self.zeros
        if zeros is None:
            zeros = all_zero(read, self.position, self.position + self.length)
        if zeros:
            return {"rawZeros": self.length}
        return {"rawBytes": raw_encoder()(bytes(read(self.position, self.length)))}

    def to_json(self, enc) -> dict:
        d = {"type": "unparsed"}
        if self.protocol is not None:
            stream_fields(d, self)
        d.update(position=self.position, length=self.length, problems=[p.to_dict() for p in self.problems],
                 records=[])
        if self.note:
            d["note"] = self.note
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def to_tree(self) -> Node:
        what = self.note or f"{self.length} bytes that hold no {self.what}"
        if self.notes and not self.problems:
            what += ": " + "; ".join(n.message for n in self.notes)
        if self.protocol is not None and self.direction:
            what = f"{self.direction} {what}"
        return Node("unparsed", self.position, self.length, self.preview or None, display=what,
                    problems=list(self.problems), type="unparsed")


class Note(_Stream):
    """A finding that belongs to no entry or frame and covers no bytes of its own: a TCP gap between
    frames, a missing handshake (``notes``), a capture file's damaged block (``type`` ``"capture"``).
    ``message``: its text (JSON ``message`` when given); ``problems``: damage; ``notes``: findings
    that are not damage."""

    entries = 0  # a finding, not an entry: ``verify`` counts no batch for it
    valid = True  # a finding, not an entry the broker judges

    def __init__(self, position: int, length: int, problems: list, message: str = "", *,
                 type: str = "note", notes: list | None = None, display: str | None = None,  # noqa: A002
                 protocol=None, conversation=None, direction=None):
        self.type = type
        self.position, self.length, self.problems, self.message = position, length, problems, message
        self.notes = notes or []
        self.display = display
        _stream_place(self, protocol, conversation, direction)

    def to_json(self, enc) -> dict:
        d = {"type": self.type}
        if self.protocol is not None:
            stream_fields(d, self)
        d.update(position=self.position, length=self.length)
        if self.message:
            d["message"] = self.message
        d["problems"] = [p.to_dict() for p in self.problems]
        if self.notes:
            d["notes"] = [p.to_dict() for p in self.notes]
        return d

    def to_tree(self) -> Node:
        text = self.display or self.message or "; ".join(n.message for n in self.notes) or self.type
        if self.protocol is not None and self.direction and not self.display:
            text = f"{self.direction} {text}"
        return Node(self.type, self.position, self.length, display=text, problems=list(self.problems),
                    type=self.type)


def all_zero(read, start: int, end: int, chunk: int = 1 << 20) -> bool:
    """Are the input's bytes ``[start, end)`` all zero (``read(position, n)``, 1 MiB at a time)?"""
    p = start
    while p < end:
        b = read(p, min(chunk, end - p))
        if not b or b.count(0) != len(b):
            return False
        p += len(b)
    return True


def zero_chunks(n: int) -> list:
    """``n`` zero bytes as chunks sharing one 1 MiB buffer (never one allocation of ``n``)."""
    full, rest = divmod(n, len(_ZERO_CHUNK))
    return [_ZERO_CHUNK] * full + ([bytes(rest)] if rest else [])


def _count(value, key: str, most: int, what: str) -> int:
    from wireinspect.errors import EncodeError

    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise EncodeError(f".{key}: {value!r} is not a length of {what} (0..{most} bytes)")
    return value


def encode_unparsed(obj: dict, ctx, max_zeros: int = MAX_ZEROS) -> list:
    """An ``unparsed`` object -> its bytes as a list of chunks: ``rawBytes``, else ``rawZeros`` zero
    bytes, else ``length`` zero bytes when its ``problems`` say zero fill (``zero_fill`` only, or an
    empty list: RocketMQ's unused space), else nothing for an empty range. ``max_zeros``: the most
    zero bytes written (:data:`MAX_ZEROS` for files, :data:`STREAM_KEEP_MAX` for a stream). Raises
    EncodeError (``.rawBytes: missing: ...`` when the bytes were not zeros and are not given)."""
    from wireinspect.errors import EncodeError

    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    if obj.get("rawBytes") is not None:
        return [ctx.raw(obj["rawBytes"], ".rawBytes")]
    if "rawZeros" in obj:
        return zero_chunks(_count(obj.get("rawZeros"), "rawZeros", max_zeros, "zero fill"))
    length = obj.get("length")
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise EncodeError(f".length: expected a byte count, got {length!r}")
    if length == 0:
        return []
    probs = obj.get("problems")
    if isinstance(probs, list) and all(isinstance(p, dict) and p.get("code") == "zero_fill" for p in probs):
        if length > max_zeros:
            raise EncodeError(f".length: {length} zero bytes is more than one range holds ({max_zeros})")
        return zero_chunks(length)
    raise EncodeError(f".rawBytes: missing: the bytes of an unparsed range of {length} bytes that were not zeros "
                      "are only in dump --json --raw output")


def unparsed_bytes(obj: dict, ctx, max_zeros: int = STREAM_KEEP_MAX) -> bytes:
    """:func:`encode_unparsed` as one bytes value (a stream protocol's ``encode``; at most
    :data:`STREAM_KEEP_MAX` zero bytes by default)."""
    return b"".join(encode_unparsed(obj, ctx, max_zeros))


NOTE_TYPES = frozenset({"note", "stream", "capture"})
"""Object types that stand for no bytes (``"stream"``: the Kafka stream notes of JSON written before
they became ``"note"``)."""


def stream_encoder(frames: dict, what: str):
    """A stream protocol's ``encode(obj, ctx) -> bytes``: ``frames`` maps the object types that are its
    frames to their encoders ``(obj, ctx) -> bytes``; an ``unparsed`` range gives its bytes
    (:func:`unparsed_bytes`) and a note none, the same in every protocol. Raises EncodeError (``what``
    names the stream in the message for an unknown type)."""
    from wireinspect.errors import EncodeError

    def encode(obj: dict, ctx) -> bytes:
        if not isinstance(obj, dict):
            raise EncodeError(f".: expected an object, got {type(obj).__name__}")
        t = obj.get("type")
        fn = frames.get(t)
        if fn is not None:
            return fn(obj, ctx)
        if t == "unparsed":
            return unparsed_bytes(obj, ctx)
        if t in NOTE_TYPES:
            return b""
        raise EncodeError(f".type: {t!r} is not a unit of {what} ({', '.join(frames)}, unparsed, note)")
    return encode


def directory_units(source, opts, check, unit_class, format_id: str, noun: str = "partition directory") -> list:
    """The units of a directory format: ``[check(source.path, opts=opts)]``, or one ``unit_class(path)``
    with a ``not_a_directory`` problem (``unit.fproblem``) when ``source`` is not a directory (``noun``:
    what the format reads, for the message)."""
    import os

    path = source.path
    if not path or not os.path.isdir(path):
        unit = unit_class(path or source.name)
        unit.fproblem("not_a_directory", os.path.basename(source.name), 0, f"{source.name}: {format_id} reads a "
                      f"{noun}, not a file")
        return [unit]
    return [check(path, opts=opts)]
