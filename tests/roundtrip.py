"""Round trips through the CLI, in process: ``dump --json --raw`` then ``encode``."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from wireinspect.cli import cli


def dump_json(path, *args) -> tuple[int, str]:
    """``dump --json --raw PATH ARGS`` -> (exit status, JSON Lines text)."""
    r = CliRunner().invoke(cli, ["dump", "--json", "--raw", *args, str(path)])
    return r.exit_code, r.stdout


def encode_text(text: str, out, *args) -> tuple[int, str]:
    """``encode ARGS - -o OUT`` with ``text`` on stdin -> (exit status, stderr)."""
    r = CliRunner().invoke(cli, ["encode", *args, "-", "-o", str(out)], input=text)
    return r.exit_code, r.stderr


def roundtrip(path, tmp_path, *encode_args, dump_args=()) -> bytes:
    """The bytes ``encode`` gives back for ``path`` (asserting both commands ran)."""
    code, text = dump_json(path, *dump_args)
    assert code in (0, 1), text
    out = tmp_path / ("rt-" + os.path.basename(str(path)))
    code, err = encode_text(text, out, *encode_args)
    assert code == 0, err
    return out.read_bytes()


def objects(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def lines(objs) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


def encode_in_process(fid: str, data: bytes, name: str, *, keep_crc: bool = True) -> dict:
    """What ``dump --json --raw`` then ``encode`` give for ``data`` read as format ``fid``, without the
    CLI: ``{stream name or None: bytes}`` (the objects go through JSON text, as between the commands)."""
    from wireinspect.catalog import get_format
    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.inputs.source import BytesSource
    from wireinspect.layout import EncodeContext
    from wireinspect.formats.options import Options
    from wireinspect.render.jsonl import dumps

    fmt = get_format(fid)
    enc = bytes_encoder("base64")
    src = BytesSource(data, name, name)
    ctx = EncodeContext(keep_crc=keep_crc)
    out: dict = {}
    for n, unit in enumerate(fmt.units(src, Options()), 1):
        d = unit.to_json(enc)
        d["format"] = fid
        d["path"] = name  # as dump writes it (a text sidecar's fields depend on its name)
        more = getattr(unit, "raw_json", None)
        if more is not None:
            d.update(more(src.read, enc))
        obj = json.loads(dumps(d))
        ctx.line = n
        for stream, chunk in fmt.encode(obj, ctx):
            out[stream] = out.get(stream, b"") + chunk
    return out
