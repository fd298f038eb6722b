"""``encode``: ``dump --json`` objects (JSON Lines) back to bytes, through each format's layouts.

Objects are grouped by the input they came from (their ``path``) and, for captures, by TCP stream
(a Kafka or RocketMQ frame names its connection and direction). One group is written to ``OUT``;
several need ``OUT`` to be a directory, where each gets the input's name (its path relative to the
inputs' common folder), with ``.<stream>`` added for a capture's streams. Every output is written to
a temporary file and renamed when the whole input has encoded; on any error nothing is written.
"""

from __future__ import annotations

import json
import os

from wireinspect.errors import EncodeError, InputError
from wireinspect.layout import EncodeContext
from wireinspect.outputs import discard_temporary, fsync_directory, inside, temporary_file, umask_mode


MAX_JSON_DEPTH = 200
"""The deepest nesting of arrays and objects one line may have (``dump`` writes at most about 110: a
decoded value is cut at 100 levels); deeper is a usage error before any encoder walks it."""

_NULL = type(None)
_SHAPE: dict = {
    # key -> (JSON types its value may have (None: any), the shape of its object, or of each item of its
    # array).
    # The keys encoders use to choose what to do (a lookup, a loop), in the objects dump --json writes
    # (docs/json.md); values inside user data (decoded payloads, schemas, fields) are not typed here.
    "type": ((str, _NULL), None), "format": ((str, _NULL), None), "path": ((str, _NULL), None),
    "protocol": ((str, _NULL), None), "direction": ((str, _NULL), None),
    "compression": ((str, _NULL), None), "problems": ((list, _NULL), {"code": ((str, _NULL), None)}),
    "connection": ((dict, _NULL), {"index": ((int, _NULL), None)}), "layout": ((str, _NULL), None),
    "records": (None, None),  # (its items: _RECORD, set below; its own type the encoders check)
}
_DECODED: dict = {"type": ((str, _NULL), None), "schema": ((str, _NULL), None)}
_DECODED["data"] = ((dict, _NULL), {  # an internal record's fields that encode looks up
    "TransactionStatusName": ((str, _NULL), None),
    "members": ((list, _NULL), {"subscriptionDecoded": ((dict, _NULL), _DECODED),
                                "assignmentDecoded": ((dict, _NULL), _DECODED)})})
_RECORD = {"keyDecoded": ((dict, _NULL), _DECODED), "valueDecoded": ((dict, _NULL), _DECODED),
           "controlType": ((str, _NULL), None),
           "problems": _SHAPE["problems"]}
_SHAPE["records"] = (None, _RECORD)
# What an encoder raises on a value of the wrong type or range that no check named (an int where a list
# is read, a list used as a lookup key, a number too large for its field): a usage error all the same.
_EDITED = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError)
_JSON_TYPE = {str: "a string", int: "an integer", list: "a list", dict: "an object", _NULL: "null"}


def _kind(v) -> str:
    return type(v).__name__  # (as the encoders' own messages say it: "expected a list, got int")


def _checked(obj: dict, line: int) -> dict:
    """``obj`` when it can be handed to an encoder: nested at most :data:`MAX_JSON_DEPTH` deep, no
    lone surrogate in any string or key (``"\\ud800"``: no UTF-8 can carry it), and the keys of
    :data:`_SHAPE` of the types encoders rely on. Else an EncodeError ``line N: .json.path: why``. One
    pass, no recursion (the nesting is not trusted yet)."""
    stack = [(obj, "", 1, _SHAPE)]
    while stack:
        v, where, depth, shape = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise EncodeError(f"line {line}: {where or '.'}: nested deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(v, dict):
            for k, x in v.items():
                at = f"{where}.{k}"
                if not k.isascii() and _has_surrogate(k):
                    raise EncodeError(f"line {line}: {where or '.'}: lone surrogate in the key {k!r}")
                sub = None
                if shape is not None and k in shape:
                    types, sub = shape[k]
                    if types is not None and type(x) not in types:
                        want = " or ".join(_JSON_TYPE[t] for t in types)
                        raise EncodeError(f"line {line}: {at}: expected {want}, got {_kind(x)}")
                if isinstance(x, (dict, list)):
                    stack.append((x, at, depth + 1, sub))
                elif isinstance(x, str) and not x.isascii() and _has_surrogate(x):
                    raise EncodeError(f"line {line}: {at}: lone surrogate")
        else:
            for i, x in enumerate(v):
                at = f"{where}[{i}]"
                if isinstance(x, (dict, list)):
                    stack.append((x, at, depth + 1, shape))
                elif isinstance(x, str) and not x.isascii() and _has_surrogate(x):
                    raise EncodeError(f"line {line}: {at}: lone surrogate")
    return obj


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _objects(stream):
    """``(line number, object)`` for every non-blank line of ``stream`` (a binary file: one line in
    memory at a time, UTF-8); a line that is not a JSON object fit for the encoders (:func:`_checked`)
    is an EncodeError (the caller names the input)."""
    n = 0
    for raw in stream:  # (not enumerate: its reused result tuple would keep the last line alive)
        n += 1
        if not raw or raw.isspace():  # (no stripped copy of a long line)
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise EncodeError(f"line {n}: not UTF-8 (byte {e.start} of the line)") from None
        raw = None  # noqa: F841 (one copy of a long line at a time)
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise EncodeError(f"line {n}: not JSON: {e}") from None
        except RecursionError:
            raise EncodeError(f"line {n}: not JSON wireinspect reads: nested deeper than {MAX_JSON_DEPTH} "
                              "levels") from None
        text = None  # noqa: F841
        if not isinstance(obj, dict):
            raise EncodeError(f"line {n}: expected a JSON object, got {_kind(obj)}")
        yield n, _checked(obj, n)


def format_of(obj: dict, forced, line: int):
    """The Format that encodes ``obj``: ``--format``, else its ``format`` key (``dump --raw`` writes
    it), else the one format whose ``encode_types`` holds its ``type``."""
    from wireinspect.catalog import all_formats, get_format

    fid = forced or obj.get("format")
    if fid is not None:
        fmt = get_format(fid) if isinstance(fid, str) else None
        if fmt is None:
            raise EncodeError(f"line {line}: .format: unknown format {fid!r}")
        if fmt.encode is None:
            raise EncodeError(f"line {line}: format {fid} has no encoder")
        return fmt
    kind = obj.get("type")
    takers = [f for f in all_formats() if f.encode is not None and kind in f.encode_types]
    if len(takers) == 1:
        return takers[0]
    if not takers:
        raise EncodeError(f"line {line}: .type: no format encodes objects of type {kind!r}")
    raise EncodeError(f"line {line}: .type: {kind!r} is used by {', '.join(f.id for f in takers)}: "
                      "add a \"format\" key (dump --json --raw writes one) or give --format")


class Outputs:
    """Temporary files, one per (input path, stream), renamed into place by :meth:`commit`, with the
    permission bits the umask gives (:func:`~wireinspect.outputs.umask_mode`). Every target is
    checked to resolve inside ``out`` when ``out`` is a directory
    (:func:`~wireinspect.outputs.inside`). ``max_line``: the most bytes one line may encode to."""

    def __init__(self, out: str, force: bool, max_line: int | None = None):
        self.out = out
        self.force = force
        self.max_line = max_line
        self.as_dir = out.endswith(os.sep) or os.path.isdir(out)
        self.tmpdir = out if self.as_dir else (os.path.dirname(out) or ".")
        self.files: dict = {}  # (path, stream) -> (file object, temporary name)
        self.order: list = []
        self.line = 0
        self.line_bytes = 0

    def start_line(self, line: int) -> None:
        self.line, self.line_bytes = line, 0

    def write(self, key, data: bytes) -> None:
        self.line_bytes += len(data)
        if self.max_line is not None and self.line_bytes > self.max_line:
            raise EncodeError(f"line {self.line}: encodes to more than {self.max_line} bytes "
                              "(--max-line-output; nothing was written)")
        f = self.files.get(key)
        if f is None:
            if self.as_dir:
                os.makedirs(self.out, exist_ok=True)
            if not os.path.isdir(self.tmpdir):
                raise InputError(f"{self.tmpdir}: no such directory")
            f = self.files[key] = temporary_file(self.tmpdir)
            self.order.append(key)
        try:
            f[0].write(data)
        except OSError as e:  # a full disk, a file size limit: name the output, not the input
            if e.filename is None:
                e.filename = self.out
            raise

    def targets(self) -> dict:
        """``{(path, stream): output path}``; InputError for a name that would resolve outside ``out``."""
        keys = self.order or [(None, None)]
        if len(keys) == 1 and not self.as_dir:
            return {keys[0]: self.out}
        paths = [p for p, _ in keys if p]
        common = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths]) if paths else ""
        out = {}
        for path, stream in keys:
            name = os.path.relpath(os.path.abspath(path), common) if path else "encoded.bin"
            if stream is not None:
                name = f"{name}.{stream}"
            target = os.path.join(self.out, name)
            try:
                inside(self.out, target)
            except ValueError as e:
                raise InputError(str(e)) from None
            out[(path, stream)] = target
        return out

    def commit(self, protected: set) -> list[str]:
        targets = self.targets()
        for key, target in targets.items():
            if os.path.abspath(target) in protected:
                raise EncodeError(f"{target}: is the input this JSON was read from; write elsewhere")
            if os.path.lexists(target) and not self.force:
                raise EncodeError(f"{target}: exists (--force replaces it)")
        if not self.files:  # nothing decoded to bytes: an empty output
            self.write((None, None), b"")
            targets = self.targets()
        mode = umask_mode()
        written = []
        for key in self.order:
            f, tmp = self.files[key]
            try:
                f.flush()
                os.fchmod(f.fileno(), mode)
                os.fsync(f.fileno())
                f.close()
            except OSError as e:
                if e.filename is None:
                    e.filename = targets[key]
                raise
            os.makedirs(os.path.dirname(targets[key]) or ".", exist_ok=True)
            if self.as_dir:  # a directory made on the way could be a link planted meanwhile
                try:
                    inside(self.out, targets[key])
                except ValueError as e:
                    raise InputError(str(e)) from None
            os.replace(tmp, targets[key])
            del self.files[key]
            written.append(targets[key])
        for d in {os.path.dirname(os.path.abspath(t)) for t in written}:
            fsync_directory(d)
        return written

    def discard(self) -> None:
        """Remove every temporary file not yet renamed (a failed write, an error on a later line)."""
        for f, tmp in self.files.values():
            discard_temporary(f, tmp)
        self.files.clear()


def encode_object(fmt, obj: dict, ctx: EncodeContext, line: int):
    """``(stream name, bytes)`` pieces of one checked object (:func:`_objects`) by its format's encoder;
    raises EncodeError ``line N: ...`` for anything the object's values make impossible."""
    try:
        yield from fmt.encode(obj, ctx)
    except EncodeError as e:
        if str(e).startswith(f"line {line}: "):
            raise
        raise EncodeError(f"line {line}: {e}") from None
    except _EDITED as e:
        # An object dump --json wrote encodes (tests/roundtrip.py, the fuzz round trips); one whose
        # values have types or ranges no dump writes (a hand edit) reaches here when no check of
        # _SHAPE or of the encoder named its key: still the input's fault (exit 2), not a crash.
        raise EncodeError(f"line {line}: a value of a type or range dump --json does not write "
                          f"({type(e).__name__}: {e})") from None


def encode_stream(stream, out: str, *, forced=None, ctx: EncodeContext, force: bool = False,
                  max_line: int | None = None) -> list[str]:
    """Encode every object of the JSON Lines ``stream`` (a binary file, read a line at a time) into
    ``out``; one line may encode to at most ``max_line`` bytes (None: no bound).

    Returns the files written. Raises EncodeError (``line N: .path.in.object: why``), InputError or
    OSError (a failed write); then nothing is written and no temporary file is left."""
    outputs = Outputs(out, force, max_line)
    if not outputs.as_dir and not force and os.path.lexists(out):  # known before any line is encoded
        raise EncodeError(f"{out}: exists (--force replaces it)")
    protected = set()
    try:
        for line, obj in _objects(stream):
            fmt = format_of(obj, forced, line)
            ctx.line = line
            path = obj.get("path")
            if isinstance(path, str):
                protected.add(os.path.abspath(path))
            else:
                path = None
            outputs.start_line(line)
            for stream_name, data in encode_object(fmt, obj, ctx, line):
                outputs.write((path, stream_name), data)
        return outputs.commit(protected)
    finally:
        outputs.discard()
