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
import tempfile

from wireinspect.errors import EncodeError, InputError
from wireinspect.layout import EncodeContext


def _objects(stream):
    """``(line number, object)`` for every non-blank line; a line that is not a JSON object is an EncodeError
    (the caller names the input)."""
    for n, line in enumerate(stream, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise EncodeError(f"line {n}: not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise EncodeError(f"line {n}: expected a JSON object, got {type(obj).__name__}")
        yield n, obj


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
    """Temporary files, one per (input path, stream), renamed into place by :meth:`commit`."""

    def __init__(self, out: str, force: bool):
        self.out = out
        self.force = force
        self.as_dir = out.endswith(os.sep) or os.path.isdir(out)
        self.tmpdir = out if self.as_dir else (os.path.dirname(out) or ".")
        self.files: dict = {}  # (path, stream) -> (file object, temporary name)
        self.order: list = []

    def write(self, key, data: bytes) -> None:
        f = self.files.get(key)
        if f is None:
            if self.as_dir:
                os.makedirs(self.out, exist_ok=True)
            if not os.path.isdir(self.tmpdir):
                raise InputError(f"{self.tmpdir}: no such directory")
            fd, tmp = tempfile.mkstemp(prefix=".wireinspect-", suffix=".tmp", dir=self.tmpdir)
            f = self.files[key] = (os.fdopen(fd, "wb"), tmp)
            self.order.append(key)
        f[0].write(data)

    def targets(self) -> dict:
        """``{(path, stream): output path}``."""
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
            out[(path, stream)] = os.path.join(self.out, name)
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
        written = []
        for key in self.order:
            f, tmp = self.files[key]
            f.flush()
            os.fsync(f.fileno())
            f.close()
            os.makedirs(os.path.dirname(targets[key]) or ".", exist_ok=True)
            os.replace(tmp, targets[key])
            written.append(targets[key])
        self.files.clear()
        return written

    def discard(self) -> None:
        for f, tmp in self.files.values():
            f.close()
            try:
                os.unlink(tmp)
            except OSError:
                pass
        self.files.clear()


def encode_stream(stream, out: str, *, forced=None, ctx: EncodeContext, force: bool = False) -> list[str]:
    """Encode every object of the JSON Lines ``stream`` into ``out``.

    Returns the files written. Raises EncodeError (``line N: .path.in.object: why``) or InputError;
    then nothing is written."""
    outputs = Outputs(out, force)
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
            try:
                chunks = fmt.encode(obj, ctx)
            except EncodeError as e:
                raise EncodeError(f"line {line}: {e}") from None
            for stream_name, data in chunks:
                outputs.write((path, stream_name), data)
        return outputs.commit(protected)
    finally:
        outputs.discard()
