"""Kafka's text sidecar files, with byte positions for every line and token.

* ``leader-epoch-checkpoint`` (``LeaderEpochCheckpointFile``) and the offset checkpoints
  ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``replication-offset-checkpoint``, ``cleaner-offset-checkpoint`` (``OffsetCheckpointFile``): the
  ``CheckpointFile`` frame, line 1 the version ``0``, line 2 the entry count, then one entry per
  line, fields split on whitespace: ``<epoch int32> <startOffset int64>`` or ``<topic> <partition
  int32> <offset int64>``.
* ``partition.metadata`` (``PartitionMetadataFile``): ``version: 0`` and ``topic_id: <Uuid>`` (base64
  URL-safe, 16 bytes, not zero), each line split on ``:\\s+``.
* ``.kafka_cleanshutdown`` (``CleanShutdownFileHandler``): JSON ``{"version":0,"brokerEpoch":N}``;
  empty before Kafka 3.5.
* ``meta.properties`` (``MetaProperties``): Java properties; ``version`` 0 (``broker.id``) or 1
  (``node.id``, ``cluster.id``).
* ``quorum-state`` (``FileQuorumStateStore``, ``QuorumStateData``): JSON with ``data_version`` 0 or 1.

Every file is one :class:`TextFile` unit; lines are entries ``{"line", "linePosition",
"lineLength", <fields>}``. Problems carry the byte position of the offending line (or token).
Never raises on bad bytes. A ``.tmp`` left by an interrupted write is read as the file it replaces.

Limits (memory stays bounded whatever the file): a text file is read up to :data:`MAX_TEXT` bytes
(16 MiB; the rest is the problem ``file_too_large``, and the head is decoded up to its last line
break), at most :data:`MAX_LINES` entry lines are kept (``too_many_entries``), a JSON file over
:data:`MAX_JSON` (1 MiB: Kafka's are under 1 KiB) is not parsed, nor one nested deeper than
:data:`MAX_JSON_DEPTH` (``json_too_deep``). A JSON number Python cannot hold or print (more than 4300
digits, a float overflowing to infinity, ``NaN``/``Infinity``) and a string holding a lone UTF-16
surrogate (``"\\ud800"``, which no UTF-8 output can carry) are kept as escaped text, with the problems
``bad_json_number`` and ``bad_json_string``. Integers in checkpoints and properties longer than an
int64's 19 digits are not converted at all (``malformed_line``/``bad_value``).
"""

from __future__ import annotations

import base64
import json
import os
import re

from wireinspect.codec.text import quote
from wireinspect.codec.bytesfmt import raw_encoder
from wireinspect.errors import EncodeError
from wireinspect.formats.kafka.sidefile import SideFile
from wireinspect.formats.kafka.sidetables import tail_chunks, tail_json
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import Int
from wireinspect.model import Node

MAX_TEXT = 16 << 20
MAX_LINES = 1 << 18
MAX_JSON = 1 << 20
MAX_JSON_DEPTH = 64
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)
_INT = re.compile(rb"[+-]?[0-9]+")
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n|$)")
_TOKEN = re.compile(rb"\S+")
_TOPIC = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
OFFSET_CHECKPOINT_SUFFIX = "-offset-checkpoint"  # how Kafka names its OffsetCheckpointFiles
EPOCH_COLUMNS = (("epoch", "int32"), ("startOffset", "int64"))  # LeaderEpochCheckpointFile
OFFSET_COLUMNS = (("topic", "topic"), ("partition", "int32"), ("offset", "int64"))  # OffsetCheckpointFile


class Line:
    """One line: ``number`` (from 0), byte ``position`` and ``length`` (without its terminator),
    ``fields`` as ``(name, position, length, value)``."""

    __slots__ = ("number", "position", "length", "fields")

    def __init__(self, number, position, length):
        self.number, self.position, self.length = number, position, length
        self.fields = []


class TextFile(SideFile):
    """A decoded text file. ``lines``: the entry lines (header lines are ``fields``); ``text_end``:
    the end of the bytes decoded (None: the whole file; less at a NUL byte or past a size limit)."""

    def __init__(self, type_, length, title):
        super().__init__(type_, length, title)
        self.lines: list[Line] = []
        self.text_end: int | None = None

    def raw_json(self, read, enc) -> dict:
        """``dump --raw``: ``fileBytes``, the exact bytes decoded (line endings, spacing, comments,
        JSON spacing: what the fields do not say), and ``zeroTail``/``tailBytes`` for the bytes past
        them (after a NUL byte, past the size limit)."""
        end = self.length if self.text_end is None else min(self.text_end, self.length)
        d = {"fileBytes": raw_encoder()(read(0, end))}
        d.update(tail_json(read, end, self.length, enc))
        return d

    @property
    def count(self) -> int:
        return len(self.lines)

    def entries_json(self, enc) -> list:
        out = []
        for ln in self.lines:
            d = {"line": ln.number + 1, "linePosition": ln.position, "lineLength": ln.length}
            d.update((name, v) for name, _, _, v in ln.fields)
            out.append(d)
        return out

    def entry_nodes(self) -> list[Node]:
        kids = []
        for ln in self.lines:
            n = Node(f"lines[{ln.number}]", ln.position, ln.length, type="line",
                     display=f"line {ln.number + 1}")
            for name, p, length, v in ln.fields:
                n.add(name, p, length, v)
            kids.append(n)
        return kids


def iter_lines(buf: bytes):
    """``(position, bytes without terminator)`` of each line as Java's ``readLine`` splits them
    (``\\n``, ``\\r``, ``\\r\\n``), one at a time."""
    for m in _LINE.finditer(buf):
        raw = m.group()
        if not raw:
            break
        yield m.start(), raw.rstrip(b"\r\n")


def split_lines(buf: bytes, limit: int | None = None):
    """``[(position, bytes without terminator)]``: the first ``limit`` lines (all when None)."""
    out = []
    for ln in iter_lines(buf):
        if limit is not None and len(out) >= limit:
            break
        out.append(ln)
    return out


def _int(tok: bytes, bounds) -> int | None:
    """Java ``Integer.parseInt``/``Long.parseLong``: ASCII digits with an optional sign, in range.
    A token longer than any int64 (20 characters with its sign) is refused before conversion."""
    if len(tok) > 20 or not _INT.fullmatch(tok):
        return None
    v = int(tok)
    return v if bounds[0] <= v <= bounds[1] else None


def _show(raw: bytes, limit: int = 60) -> str:
    text = raw[:limit].decode("utf-8", "backslashreplace")
    return quote(text) + ("…" if len(raw) > limit else "")


def _tokens(pos: int, raw: bytes):
    """Whitespace-split tokens with absolute spans; ``None`` if the line starts with whitespace
    (Java's ``split`` then yields an empty first field)."""
    if raw[:1].isspace():
        return None
    return [(pos + m.start(), m.group()) for m in _TOKEN.finditer(raw)]


def _header_int(t: TextFile, lines, i: int, name: str) -> int | None:
    pos, raw = lines[i]
    v = _int(raw, INT32)
    if v is None:
        t.problem("malformed_line", pos, f"line {i + 1}: {name} {_show(raw)} is not an integer")
        return None
    t.fields.append((name, pos, len(raw), v))
    return v


def _too_many(t: TextFile, pos: int, kept: int, found: int) -> None:
    t.problem("too_many_entries", pos, f"{found} entry lines; only the first {kept} were decoded (limit "
              f"{MAX_LINES} lines)", expected=kept, actual=found)


def parse_checkpoint(buf: bytes, type_: str, title: str, columns) -> TextFile:
    """Decode the ``CheckpointFile`` frame: version, count, entries of ``columns`` ((name, kind) with
    kind ``"int32"``, ``"int64"`` or ``"topic"``). Lines are read one at a time; at most
    :data:`MAX_LINES` entry lines are decoded (the others are only counted).

    Problems: ``empty_file``, ``truncated`` (no count line), ``malformed_line`` (what Kafka rejects
    with 'Malformed line in checkpoint file'), ``unknown_version``, ``bad_count``,
    ``entries_count_mismatch``, ``bad_topic_name``, ``too_many_entries``.
    """
    t = TextFile(type_, len(buf), title)
    if not buf:
        t.problem("empty_file", 0, "empty file: Kafka writes at least a version and a count (it reads this as no "
                  "entries)")
        return t
    lines = iter_lines(buf)
    head = split_lines(buf, 2)
    next(lines, None)
    version = _header_int(t, head, 0, "version")
    if version is None:
        return t
    if version != 0:
        t.problem("unknown_version", head[0][0], f"line 1: version {version}, expected 0 (Kafka: 'Unrecognised "
                  "version')", expected=0, actual=version)
        return t
    if len(head) < 2:
        t.problem("truncated", len(buf), "the file ends after its version line: no entry count (Kafka reads it as "
                  "no entries)")
        return t
    next(lines, None)
    count = _header_int(t, head, 1, "count")
    if count is None:
        return t
    if count < 0:
        t.problem("bad_count", head[1][0], f"line 2: negative entry count {count}", actual=count)
    bounds = {"int32": INT32, "int64": INT64}
    found = 0
    cut = None
    for i, (pos, raw) in enumerate(lines, 2):
        found += 1
        if found > MAX_LINES:
            cut = pos if cut is None else cut
            continue
        toks = _tokens(pos, raw)
        if toks is None or len(toks) != len(columns):
            t.problem("malformed_line", pos, f"line {i + 1}: {_show(raw)} is not {len(columns)} fields "
                      f"({' '.join(n for n, _ in columns)})")
            continue
        ln = Line(i, pos, len(raw))
        for (name, kind), (p, tok) in zip(columns, toks):
            v = tok.decode("utf-8", "backslashreplace") if kind == "topic" else _int(tok, bounds[kind])
            if v is None:
                t.problem("malformed_line", p, f"line {i + 1}: {name} {_show(tok)} is not an {kind}")
                break
            if kind == "topic" and not _TOPIC.match(v):
                t.problem("bad_topic_name", p, f"line {i + 1}: {_show(tok)} is not a valid topic name")
            ln.fields.append((name, p, len(tok), v))
        else:
            t.lines.append(ln)
    if cut is not None:
        _too_many(t, cut, MAX_LINES, found)
    if count >= 0 and found != count:
        t.problem("entries_count_mismatch", head[1][0], f"line 2 declares {count} entries, {found} lines follow "
                  "(Kafka: 'Expected [n] entries in checkpoint file')", expected=count, actual=found)
    return t


def _value(ln: Line, name: str):
    for n, _, _, v in ln.fields:
        if n == name:
            return v
    return None


def parse_leader_epoch_checkpoint(buf: bytes) -> TextFile:
    """``leader-epoch-checkpoint``: entries ``(epoch, startOffset)``; besides the frame's problems:
    ``bad_value`` (negative), ``epoch_not_increasing``, ``offset_not_increasing``."""
    t = parse_checkpoint(buf, "leader_epoch_checkpoint", "leader epoch checkpoint", EPOCH_COLUMNS)
    prev = None
    for ln in t.lines:
        epoch, start = _value(ln, "epoch"), _value(ln, "startOffset")
        if epoch < 0 or start < 0:
            t.problem("bad_value", ln.position, f"line {ln.number + 1}: negative epoch or startOffset")
        if prev is not None:
            if epoch <= prev[0]:
                t.problem("epoch_not_increasing", ln.position, f"line {ln.number + 1}: epoch {epoch} after "
                          f"epoch {prev[0]}", expected=prev[0] + 1, actual=epoch)
            if start <= prev[1]:
                t.problem("offset_not_increasing", ln.position, f"line {ln.number + 1}: startOffset {start} after "
                          f"{prev[1]}", expected=prev[1] + 1, actual=start)
        prev = (epoch, start)
    return t


def parse_offset_checkpoint(buf: bytes, name: str = "") -> TextFile:
    """An offset checkpoint: entries ``(topic, partition, offset)``; besides the frame's problems:
    ``bad_value`` (negative partition or offset), ``duplicate_partition``."""
    t = parse_checkpoint(buf, "offset_checkpoint", name or "offset checkpoint", OFFSET_COLUMNS)
    if name:
        t.info["checkpoint"] = name
    seen = {}
    for ln in t.lines:
        key = (_value(ln, "topic"), _value(ln, "partition"))
        if key[1] < 0 or _value(ln, "offset") < 0:
            t.problem("bad_value", ln.position, f"line {ln.number + 1}: negative partition or offset")
        if key in seen:
            t.problem("duplicate_partition", ln.position, f"line {ln.number + 1}: {key[0]}-{key[1]} already on line "
                      f"{seen[key]}")
        seen.setdefault(key, ln.number + 1)
    return t


def _java_split(raw: bytes, pattern: bytes):
    parts = re.split(pattern, raw)
    while parts and not parts[-1]:
        parts.pop()
    return parts


def decode_uuid(text: str) -> bytes | None:
    """Kafka ``Uuid.fromString``: URL-safe base64 (padding optional) of exactly 16 bytes."""
    if len(text) > 24 or not re.fullmatch(r"[A-Za-z0-9_-]+={0,2}", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except ValueError:
        return None
    return raw if len(raw) == 16 else None


def parse_partition_metadata(buf: bytes) -> TextFile:
    """``partition.metadata``: ``version: 0`` then ``topic_id: <Uuid>``.

    Problems: ``empty_file``, ``malformed_line``, ``unexpected_key`` (Kafka does not check the keys),
    ``unknown_version``, ``bad_topic_id`` (not a 16-byte URL-safe base64 value, or the zero UUID),
    ``trailing_bytes`` (more lines).
    """
    t = TextFile("partition_metadata", len(buf), "partition metadata")
    if not buf:
        t.problem("empty_file", 0, "empty file (Kafka fails to read it: malformed line)")
        return t
    lines = split_lines(buf, 3)
    for i, (key, name) in enumerate((("version", "version"), ("topic_id", "topicId"))):
        if i >= len(lines):
            t.problem("truncated", len(buf), f"no line {i + 1} ({key})")
            return t
        pos, raw = lines[i]
        parts = _java_split(raw, rb":\s+")
        if len(parts) != 2:
            t.problem("malformed_line", pos, f"line {i + 1}: {_show(raw)} is not \"{key}: <value>\"")
            return t
        if parts[0] != key.encode():
            t.problem("unexpected_key", pos, f"line {i + 1}: key {_show(parts[0])}, expected {quote(key)}")
        vpos = pos + len(raw) - len(parts[1])
        text = parts[1].decode("utf-8", "backslashreplace")
        if i == 0:
            v = _int(parts[1], INT32)
            if v is None:
                t.problem("malformed_line", vpos, f"line 1: version {_show(parts[1])} is not an integer")
                return t
            t.fields.append((name, vpos, len(parts[1]), v))
            if v != 0:
                t.problem("unknown_version", vpos, f"version {v}, expected 0 (Kafka: 'Unrecognized version of "
                          "partition metadata file')", expected=0, actual=v)
                return t
        else:
            t.fields.append((name, vpos, len(parts[1]), text))
            raw_id = decode_uuid(text)
            if raw_id is None:
                t.problem("bad_topic_id", vpos, f"topic_id {_show(parts[1])} is not a base64 UUID of 16 bytes")
            elif raw_id == bytes(16):
                t.problem("bad_topic_id", vpos, "topic_id is the zero UUID (Kafka: 'Invalid topic ID in partition "
                          "metadata file')")
            else:
                t.info["topicIdHex"] = raw_id.hex()
    if len(lines) > 2 and buf[lines[2][0]:].strip():
        t.problem("trailing_bytes", lines[2][0], f"{len(buf) - lines[2][0]} bytes follow the topic_id line",
                  actual=len(buf) - lines[2][0])
    return t


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|"
                             r"(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


class _BadNumber(str):
    """A JSON number literal Python cannot hold or print, kept as its text."""


def _json_int(text: str):
    # int() refuses more than 4300 digits (and printing such an int fails the same way)
    return _BadNumber(text) if len(text) > 4000 else int(text)


def _json_float(text: str):
    v = float(text) if len(text) <= 4000 else float("inf")
    return v if v - v == 0 else _BadNumber(text)  # inf/nan: not JSON, and not what was written


def _too_deep(text: str) -> int | None:
    """Character index where the nesting of ``text`` first exceeds :data:`MAX_JSON_DEPTH`, else None
    (strings are skipped, so brackets inside them do not count)."""
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def _clean_json(t: TextFile, doc, text: str, raw: bytes):
    """``doc`` with every :class:`_BadNumber` and every string holding a lone surrogate replaced by
    printable text (numbers as their literal, surrogates escaped as ``\\udXXX``), each with a problem
    at the byte position of its first occurrence in ``raw``. Depth is bounded by :func:`_too_deep`."""
    seen = set()

    def where(pattern: bytes) -> int:
        i = raw.find(pattern)
        return max(i, 0)

    def fix(v):
        if isinstance(v, _BadNumber):
            if v not in seen:
                seen.add(v)
                t.problem("bad_json_number", where(v.encode()), f"number {_show(v.encode())} ({len(v)} "
                          "characters) cannot be held as a number: kept as text")
            return str(v)
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                fixed = v.encode("utf-8", "backslashreplace").decode("utf-8")
                if "surrogate" not in seen:
                    seen.add("surrogate")
                    m = _LONE_SURROGATE.search(text)
                    at = len(text[:m.start()].encode("utf-8", "surrogatepass")) if m else 0
                    t.problem("bad_json_string", at, f"string {quote(fixed[:60])} holds a lone UTF-16 surrogate (not "
                              "Unicode text, which Kafka's JSON writer never produces): kept escaped")
                return fixed
            return v
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {fix(k): fix(x) for k, x in v.items()}
        return v

    return fix(doc)


def _json_file(buf: bytes, type_: str, title: str) -> tuple[TextFile, object]:
    """Parse a small JSON file (at most :data:`MAX_JSON` bytes, nesting at most
    :data:`MAX_JSON_DEPTH`) into an object whose values can all be printed as UTF-8 JSON."""
    t = TextFile(type_, len(buf), title)
    if len(buf) > MAX_JSON:
        t.problem("file_too_large", MAX_JSON, f"{len(buf)} bytes: a JSON file of Kafka holds a few hundred; files "
                  f"over {MAX_JSON} bytes are not parsed", expected=MAX_JSON, actual=len(buf))
        return t, None
    try:
        text = buf.decode("utf-8")
    except UnicodeDecodeError as e:
        t.problem("malformed_json", e.start, f"not UTF-8 at byte {e.start}")
        return t, None
    deep = _too_deep(text)
    if deep is not None:
        at = len(text[:deep].encode("utf-8"))
        t.problem("json_too_deep", at, f"arrays/objects nested deeper than {MAX_JSON_DEPTH} levels (Kafka's "
                  "files nest 3): not parsed", expected=MAX_JSON_DEPTH)
        return t, None
    try:
        doc = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_BadNumber)
    except json.JSONDecodeError as e:
        at = len(text[:e.pos].encode("utf-8"))
        t.problem("malformed_json", at, f"not JSON: {e.msg} at line {e.lineno} column {e.colno}")
        return t, None
    doc = _clean_json(t, doc, text, buf)
    if not isinstance(doc, dict):
        t.problem("malformed_json", 0, f"a JSON {type(doc).__name__}, not an object")
        return t, None
    t.info["content"] = doc
    return t, doc


def _need(t: TextFile, doc: dict, keys, versions, vkey: str) -> None:
    for k in keys:
        if k not in doc:
            t.problem("missing_key", 0, f"no {quote(k)}")
    v = doc.get(vkey)
    if vkey in doc and v not in versions:
        t.problem("unknown_version", 0, f"{vkey} {quote(v)}, expected one of {list(versions)}", actual=v)


def parse_clean_shutdown(buf: bytes) -> TextFile:
    """``.kafka_cleanshutdown``: the broker shut down cleanly (log recovery is skipped at startup).
    Empty: the marker of Kafka before 3.5 (a note). Problems: ``malformed_json``, ``missing_key``,
    ``unknown_version``."""
    if not buf.strip():
        t = TextFile("clean_shutdown", len(buf), "clean shutdown marker")
        t.note("empty_marker", 0, "empty clean-shutdown marker (as written before Kafka 3.5, without brokerEpoch)")
        return t
    t, doc = _json_file(buf, "clean_shutdown", "clean shutdown marker")
    if doc is not None:
        _need(t, doc, ("version", "brokerEpoch"), (0,), "version")
    return t


def parse_quorum_state(buf: bytes) -> TextFile:
    """``quorum-state`` (KRaft): problems ``malformed_json``, ``missing_key``, ``unknown_version``."""
    t, doc = _json_file(buf, "quorum_state", "KRaft quorum state")
    if doc is not None:
        _need(t, doc, ("leaderEpoch", "data_version"), (0, 1), "data_version")
    return t


def parse_meta_properties(buf: bytes) -> TextFile:
    """``meta.properties``: ``key=value`` lines (``#``/``!`` comments); one entry per property (at
    most :data:`MAX_LINES`). Problems: ``missing_key``, ``unknown_version``, ``bad_value`` (an id that
    is not an int32, digits beyond 20 characters not even converted), ``too_many_entries``."""
    t = TextFile("meta_properties", len(buf), "log directory meta.properties")
    props = {}
    kept = found = 0
    for i, (pos, raw) in enumerate(iter_lines(buf)):
        s = raw.lstrip()
        if not s or s[:1] in (b"#", b"!"):
            continue
        found += 1
        if found > MAX_LINES:
            if found == MAX_LINES + 1:
                cut = pos
            continue
        kept += 1
        m = re.match(rb"\s*([^=:\s]+)\s*[=:\s]\s*(.*)$", raw)
        key, value = (m.group(1), m.group(2)) if m else (s, b"")
        k, v = key.decode("utf-8", "backslashreplace"), value.decode("utf-8", "backslashreplace")
        ln = Line(i, pos, len(raw))
        ln.fields = [("key", pos, len(key), k), ("value", pos + len(raw) - len(value), len(value), v)]
        t.lines.append(ln)
        props[k] = (v, ln.position)
    if found > kept:
        _too_many(t, cut, kept, found)
    version = props.get("version", (None, 0))[0]
    if version is None:
        t.problem("missing_key", 0, "no \"version\" property")
        return t
    need = {"0": ("broker.id",), "1": ("node.id", "cluster.id")}.get(version)
    if need is None:
        t.problem("unknown_version", props["version"][1], f"version {quote(version)}, expected 0 or 1", actual=version)
        return t
    for k in need:
        if k not in props:
            t.problem("missing_key", 0, f"version {version} needs {quote(k)}")
    for k in ("broker.id", "node.id"):
        if k in props and _int(props[k][0].encode(), INT32) is None:
            t.problem("bad_value", props[k][1], f"{k} {quote(props[k][0])} is not an integer")
    return t


def read_text(source, limit: int | None = None) -> tuple[bytes, bool]:
    """``(head, cut)``: the whole source when it has at most ``limit`` bytes, else its first ``limit``
    bytes up to their last line break (``cut`` True). Reads once, at most ``limit`` bytes
    (default :data:`MAX_TEXT`)."""
    limit = MAX_TEXT if limit is None else limit
    if source.size <= limit:
        return source.read(0, source.size), False
    head = source.read(0, limit)
    end = max(head.rfind(b"\n"), head.rfind(b"\r")) + 1
    return (head[:end] if end else head), True


def _too_large(t: TextFile, size: int, decoded: int, limit: int) -> None:
    t.length = size
    t.problem("file_too_large", decoded, f"{size} bytes, over the {limit}-byte limit for this kind of file: only the "
              f"first {decoded} bytes were decoded", expected=limit, actual=size)


def _units(parse, json_file: bool = False):
    """A ``Format.units``: ``parse`` of the file's head (see :func:`read_text`) up to its first NUL
    byte (``text_nul``); a JSON file over :data:`MAX_JSON` is not parsed at all."""
    def units(source, opts):
        limit = MAX_JSON if json_file else MAX_TEXT
        if json_file and source.size > MAX_JSON:
            t = TextFile(parse.__name__.removeprefix("parse_"), source.size, "JSON file")
            _too_large(t, source.size, 0, MAX_JSON)
            t.text_end = 0
            return [t]
        buf, cut = read_text(source, limit)
        nul = buf.find(b"\0")
        if nul >= 0:  # a torn or preallocated write: the text ends at its first NUL
            buf = buf[:nul]
        t = parse(buf)
        t.text_end = len(buf)
        if nul >= 0:
            t.length = source.size
            t.problem("text_nul", nul, f"a NUL byte at position {nul}: Kafka writes none in this text file (a torn "
                      "or preallocated write?); nothing from there on was decoded", actual=source.size - nul)
        if cut:
            _too_large(t, source.size, len(buf), limit)
        t.finish()
        return [t]
    return units


def _offset_units(source, opts):
    name = os.path.basename(source.path or source.name).removesuffix(".tmp")
    buf, cut = read_text(source)
    # the checkpoint's name when it is one of Kafka's (textformats.OFFSET_CHECKPOINTS, which the descriptor
    # recognises: recovery-point-, log-start-, replication-, cleaner-offset-checkpoint; imports go from the
    # descriptor to this reader, never back)
    t = parse_offset_checkpoint(buf, name if name.endswith(OFFSET_CHECKPOINT_SUFFIX) else "")
    t.text_end = len(buf)
    if cut:
        _too_large(t, source.size, len(buf), MAX_TEXT)
    t.finish()
    return [t]


# -- encode ------------------------------------------------------------------------------------
# What Kafka writes (``CheckpointFile``, ``PartitionMetadataFile``, ``CleanShutdownFileHandler``,
# ``FileQuorumStateStore``: Jackson's compact JSON, ``MetaProperties``: ``key=value`` lines), from
# the same names the decoders give the fields. ``fileBytes`` (dump --raw) is written as it is when
# the fields are those it decodes to: line endings, spacing, comments and JSON spacing come back.

_INT32, _INT64 = Int("int32", "i"), Int("int64", "q")
_KIND = {"int32": _INT32, "int64": _INT64}
_POSITIONAL = frozenset({"path", "format", "position", "length", "problems", "notes", "fileBytes", "tailBytes",
                         "zeroTail"})


def _num(obj: dict, key: str, kind: Int, where: str) -> str:
    if key not in obj or obj[key] is None:
        raise EncodeError(f"{where}.{key}: missing ({kind.type_name})")
    kind.pack(obj[key], f"{where}.{key}")  # range and type, as a binary field
    return str(obj[key])


def _token(obj: dict, key: str, where: str, pattern=None) -> str:
    v = obj.get(key)
    if v is None:
        raise EncodeError(f"{where}.{key}: missing (a string)")
    if not isinstance(v, str):
        raise EncodeError(f"{where}.{key}: expected a string, got {type(v).__name__}")
    if not v or re.search(r"\s", v) or (pattern is not None and not re.fullmatch(pattern, v)):
        raise EncodeError(f"{where}.{key}: {v[:60]!r} cannot be written as one token of this file")
    return v


def _entry_list(obj: dict) -> list:
    entries = obj.get("entries", [])
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise EncodeError(f".entries: expected a list, got {type(entries).__name__}")
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise EncodeError(f".entries[{i}]: expected an object, got {type(e).__name__}")
    return entries


def _keep_count(ctx) -> bool:
    return ctx.keep_lengths or ctx.keep_crc


def _write_checkpoint(obj: dict, ctx, columns) -> bytes:
    """``CheckpointFile``: version, count, one entry per line, fields separated by one space, ``\\n``."""
    entries = _entry_list(obj)
    version = _num(obj, "version", _INT32, "") if obj.get("version") is not None else "0"
    if _keep_count(ctx) and obj.get("count") is not None:
        count = _num(obj, "count", _INT32, "")
    else:
        count = str(len(entries))
    lines = [version, count]
    for i, e in enumerate(entries):
        where = f".entries[{i}]"
        lines.append(" ".join(_token(e, name, where) if kind == "topic" else _num(e, name, _KIND[kind], where)
                              for name, kind in columns))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _write_partition_metadata(obj: dict, ctx) -> bytes:
    """``PartitionMetadataFileFormatter.toFile``: ``version: V\ntopic_id: ID``, no newline at the end (as
    Kafka writes it); one more when the object's ``length`` says the file had one."""
    version = _num(obj, "version", _INT32, "") if obj.get("version") is not None else "0"
    topic = _token(obj, "topicId", "")
    text = f"version: {version}\ntopic_id: {topic}".encode("utf-8")
    return text + b"\n" if obj.get("length") == len(text) + 1 else text


def _write_json(obj: dict, ctx) -> bytes:
    """Jackson's compact JSON of ``content`` (no ``content``: the empty clean-shutdown marker)."""
    doc = obj.get("content")
    if doc is None:
        if obj.get("type") == "clean_shutdown":
            return b""
        raise EncodeError(".content: missing (the file's JSON object)")
    if not isinstance(doc, dict):
        raise EncodeError(f".content: expected an object, got {type(doc).__name__}")
    try:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as e:
        raise EncodeError(f".content: cannot be written as JSON: {e}") from None


def _write_properties(obj: dict, ctx) -> bytes:
    """``key=value`` per entry, ``\\n`` after each (no comment: Java's date comment is not data)."""
    out = []
    for i, e in enumerate(_entry_list(obj)):
        key = _token(e, "key", f".entries[{i}]", r"[^=:#!\s][^=:\s]*")
        value = e.get("value", "")
        if not isinstance(value, str) or "\n" in value or "\r" in value or value[:1].isspace():
            raise EncodeError(f".entries[{i}].value: {value!r} cannot be written as a property value")
        out.append(f"{key}={value}\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def _recount(raw: bytes, unit: TextFile) -> bytes:
    """``raw`` with its count line recomputed (the number of lines after it), as Kafka writes it."""
    count = next((f for f in unit.fields if f[0] == "count"), None)
    if count is None:
        return raw
    found = sum(1 for _ in iter_lines(raw)) - 2
    if found == count[3]:
        return raw
    return raw[:count[1]] + str(found).encode() + raw[count[1] + count[2]:]


def _fields_of(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in _POSITIONAL and not k.endswith("Iso")}


def _text_encoder(units, write):
    """A ``Format.encode`` for a text sidecar: ``fileBytes`` as they are when the object's fields
    are what they decode to (by ``units``, the format's own decoder; the count line of a checkpoint
    recomputed unless ``--keep-crc``/``--keep-lengths``), else ``write(obj, ctx)``, Kafka's text of the
    fields; then ``zeroTail``/``tailBytes``. Raises EncodeError (``.entries[3].epoch: ...``)."""
    def encode(obj: dict, ctx) -> list:
        tail = tail_chunks(obj, ctx, padding=False)
        data = None
        if obj.get("fileBytes") is not None:
            raw = ctx.raw(obj["fileBytes"], ".fileBytes")
            path = obj.get("path") if isinstance(obj.get("path"), str) else ""
            (unit,) = units(BytesSource(raw, os.path.basename(path) or "file"), None)
            mine = json.loads(json.dumps(unit.to_json(lambda b: base64.b64encode(b).decode())))
            if _fields_of(mine) == _fields_of(obj):
                data = raw if _keep_count(ctx) else _recount(raw, unit)
        if data is None:
            data = write(obj, ctx)
        return [(None, b) for b in (data, *tail) if b]
    return encode


def _checkpoint_writer(columns):
    return lambda obj, ctx: _write_checkpoint(obj, ctx, columns)


_LEADER_EPOCH_UNITS = _units(parse_leader_epoch_checkpoint)
_PARTITION_METADATA_UNITS = _units(parse_partition_metadata)
_CLEAN_SHUTDOWN_UNITS = _units(parse_clean_shutdown, json_file=True)
_META_PROPERTIES_UNITS = _units(parse_meta_properties)
_QUORUM_STATE_UNITS = _units(parse_quorum_state, json_file=True)


TEXT_HOOKS = {
    "kafka-leader-epoch-checkpoint": (_LEADER_EPOCH_UNITS, _text_encoder(_LEADER_EPOCH_UNITS,
                                                                         _checkpoint_writer(EPOCH_COLUMNS))),
    "kafka-offset-checkpoint": (_offset_units, _text_encoder(_offset_units, _checkpoint_writer(OFFSET_COLUMNS))),
    "kafka-partition-metadata": (_PARTITION_METADATA_UNITS, _text_encoder(_PARTITION_METADATA_UNITS,
                                                                          _write_partition_metadata)),
    "kafka-clean-shutdown": (_CLEAN_SHUTDOWN_UNITS, _text_encoder(_CLEAN_SHUTDOWN_UNITS, _write_json)),
    "kafka-meta-properties": (_META_PROPERTIES_UNITS, _text_encoder(_META_PROPERTIES_UNITS, _write_properties)),
    "kafka-quorum-state": (_QUORUM_STATE_UNITS, _text_encoder(_QUORUM_STATE_UNITS, _write_json)),
}
"""``(units, encode)`` of each text sidecar format, by format id: the hooks of the descriptors in
:data:`~.textformats.TEXT_FORMATS` (which recognise the files by name and import this module when they
run a hook)."""
