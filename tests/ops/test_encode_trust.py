"""``encode`` of hostile or lossy JSON (issue 20): nothing written outside ``-o``, exit 2 naming the line
and the JSON path instead of an internal error, no temporary file left by a failed write, a bound on what
one line expands to, outputs with the umask's mode, and round trips that give the bytes back or refuse."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.roundtrip import dump_json, encode_text, lines, objects
from wireinspect.cli import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"


def _first(path, **edits) -> dict:
    code, text = dump_json(path)
    assert code in (0, 1), text
    obj = objects(text)[0]
    obj.update(edits)
    return obj


def _tree(top) -> set:
    return {os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs} | \
        {os.path.relpath(d, top) + "/" for d, _, _ in os.walk(top)}


def _encode_file(tmp_path, objs, *args, name="evil.jsonl"):
    """``encode evil.jsonl -o out/`` run from ``tmp_path/in`` -> (exit status, stderr)."""
    src = tmp_path / "in"
    src.mkdir(exist_ok=True)
    text = objs if isinstance(objs, str) else lines(objs)
    (src / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    cwd = os.getcwd()
    os.chdir(src)
    try:
        r = CliRunner().invoke(cli, ["encode", *args, name, "-o", "out/"])
    finally:
        os.chdir(cwd)
    return r.exit_code, r.stderr


# -- item 1: names built from input data -------------------------------------------------------------
@pytest.mark.parametrize("sample,edit", [
    ("capture/librdkafka.pcap", lambda o: o["connection"].update(index="/../../PLANTED")),
    ("capture/librdkafka.pcap", lambda o: o.update(direction="/../../PLANTED")),
    ("rocketmq/producer.pcap", lambda o: o.update(direction="/../../../PLANTED")),
    ("rocketmq/producer.pcap", lambda o: o["connection"].update(index=-1)),
], ids=["kafka-index", "kafka-direction", "rocketmq-direction", "rocketmq-negative-index"])
def test_a_stream_name_from_the_json_never_leaves_the_output_directory(tmp_path, sample, edit):
    obj = _first(SAMPLES / sample)
    edit(obj)
    before = _tree(tmp_path) | {"in/", "in/evil.jsonl"}
    code, err = _encode_file(tmp_path, [obj])
    assert code == 2, err
    assert "line 1: .connection.index" in err or "line 1: .direction" in err
    assert _tree(tmp_path) - before <= {"in/out/"}, "nothing but the output directory is created"
    assert not (tmp_path / "in" / "out").exists() or os.listdir(tmp_path / "in" / "out") == []


def test_an_output_path_is_checked_to_resolve_inside_the_directory(tmp_path):
    """A link inside -o leading out (planted before the run) is refused, whatever made the name."""
    from wireinspect.outputs import inside

    out = tmp_path / "out"
    out.mkdir()
    os.symlink(tmp_path, out / "up")
    assert inside(str(out), str(out / "a" / "b")) == str((out / "a" / "b").resolve())
    for bad in (out / ".." / "x", out / "up" / "x", pathlib.Path("/etc/passwd")):
        with pytest.raises(ValueError, match="outside the output directory"):
            inside(str(out), str(bad))


# -- item 5: bad JSON is exit 2 with the line and the place --------------------------------------------
def _gzip_batch():
    return _first(SAMPLES / "v2-gzip" / "00000000000000000000.log")


def _internal_record(tmp_path):
    from tests.formats.kafka.internal.fixtures import load

    d = tmp_path / "__transaction_state-1"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(load("java-server__transaction_state.log"))
    return _first(d / "00000000000000000000.log")


@pytest.mark.parametrize("case", ["nested", "problems", "compression", "controlType", "keyDecoded.type",
                                  "protocol", "header-surrogate", "group-surrogate", "status-name", "not-utf8"])
def test_bad_json_is_a_usage_error_naming_line_and_path(tmp_path, case):
    good = lines([_gzip_batch()])
    if case == "nested":
        text, want = "[" * 1000 + "]" * 1000 + "\n", "line 2: not JSON wireinspect reads: nested deeper"
    elif case == "problems":
        text, want = lines([_gzip_batch() | {"problems": 5}]), "line 2: .problems: expected a list or null, got int"
    elif case == "compression":
        text, want = lines([_gzip_batch() | {"compression": ["none"]}]), "line 2: .compression: expected a string"
    elif case == "controlType":
        obj = _first(SAMPLES / "transactional" / "00000000000000000000.log")
        obj["records"][0]["controlType"] = {"x": 1}
        text, want = lines([obj]), "line 2: .records[0].controlType: expected a string or null, got dict"
    elif case == "keyDecoded.type":
        obj = _internal_record(tmp_path)
        obj["records"][0]["keyDecoded"]["type"] = ["TransactionLogKey"]
        text, want = lines([obj]), "line 2: .records[0].keyDecoded.type: expected a string or null, got list"
    elif case == "protocol":
        text, want = lines([_first(SAMPLES / "capture" / "librdkafka.pcap", protocol={"x": 1})]), \
            "line 2: .protocol: expected a string or null, got dict"
    elif case == "header-surrogate":
        obj = _gzip_batch()
        obj["records"][0]["headers"][0][0] = "k\ud800"
        text, want = lines([obj]), "line 2: .records[0].headers[0][0]: lone surrogate"
    elif case == "group-surrogate":
        obj = _internal_record(tmp_path)
        obj["records"][0]["keyDecoded"]["data"]["transactionalId"] = "\udfff"
        text, want = lines([obj]), "line 2: .records[0].keyDecoded.data.transactionalId: lone surrogate"
    elif case == "status-name":
        obj = _internal_record(tmp_path)
        obj["records"][0]["valueDecoded"]["data"]["TransactionStatusName"] = [1]
        text, want = lines([obj]), ".records[0].valueDecoded.data.TransactionStatusName: expected a string"
    else:
        text, want = '{"type": "batch", "key": "\xff"}\n', "line 2: not UTF-8"
    if case == "not-utf8":
        src = tmp_path / "in"
        src.mkdir()
        (src / "evil.jsonl").write_bytes(good.encode() + b'{"type": "\xff"}\n')
        r = CliRunner().invoke(cli, ["encode", str(src / "evil.jsonl"), "-o", str(src / "out/")])
        code, err = r.exit_code, r.stderr
    else:
        code, err = _encode_file(tmp_path, good + text)
    assert code == 2, err
    assert want in err
    assert "internal error" not in err
    assert not (tmp_path / "in" / "out").exists() or not list((tmp_path / "in" / "out").iterdir())


def test_a_line_that_expands_past_the_bound_is_refused(tmp_path):
    zeros = {"type": "unparsed", "position": 0, "length": 2147483648, "problems": [], "format": "kafka-log",
             "rawZeros": 2147483648}
    code, err = _encode_file(tmp_path, [_gzip_batch(), zeros])
    assert code == 2 and "line 2: encodes to more than 268435456 bytes (--max-line-output" in err
    assert not (tmp_path / "in" / "out").exists() or os.listdir(tmp_path / "in" / "out") == []
    zeros.update(length=4096, rawZeros=4096)
    code, err = _encode_file(tmp_path, [zeros], "--max-line-output", "1K", name="small.jsonl")
    assert code == 2 and "line 1: encodes to more than 1024 bytes" in err
    code, err = _encode_file(tmp_path, [zeros], "--max-line-output", "4K", name="fits.jsonl")
    assert code == 0, err


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    """A full disk, stood in for by a file size limit (ulimit -f): exit 2 naming the output, nothing left."""
    zeros = {"type": "unparsed", "position": 0, "length": 8 << 20, "problems": [], "format": "kafka-log",
             "rawZeros": 8 << 20}
    (tmp_path / "z.jsonl").write_text(lines([zeros]))
    out = tmp_path / "out"
    out.mkdir()
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)); "
            "from wireinspect.cli import main; sys.argv = ['wireinspect', 'encode', sys.argv[1], '-o', sys.argv[2]]; "
            "main()")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "z.jsonl"), str(out / "z.log")],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert "z.log: File too large" in r.stderr
    assert os.listdir(out) == []


def test_outputs_get_the_mode_the_umask_gives(tmp_path):
    old = os.umask(0o027)
    try:
        code, err = encode_text(lines([_gzip_batch()]), tmp_path / "a.log")
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE(os.stat(tmp_path / "a.log").st_mode) == 0o640
    old = os.umask(0o022)
    try:
        code, err = encode_text(lines([_gzip_batch()]), str(tmp_path / "d") + os.sep)
    finally:
        os.umask(old)
    assert code == 0, err
    assert {stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "d").rglob("*") if p.is_file()} == {0o644}


# -- item 7: a round trip gives the bytes back, or refuses ------------------------------------------
def _sample_files():
    return sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix not in (".py", ".json", ".md", ".pcap"))


@pytest.mark.parametrize("mode", ["text", "hex", "base64"])
@pytest.mark.parametrize("path", _sample_files(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_round_trip_in_every_bytes_mode_gives_the_file_back_or_refuses(path, mode, tmp_path):
    code, text = dump_json(path, "--bytes", mode)
    assert code in (0, 1), text
    out = tmp_path / "back"
    code, err = encode_text(text, out, "--keep-crc", "--bytes", mode)
    if code == 2:
        assert "line " in err and not out.exists(), err
        return
    assert code == 0, err
    assert out.read_bytes() == path.read_bytes()


def test_raw_keys_are_base64_whatever_bytes_says():
    for mode in ("text", "hex"):
        code, text = dump_json(SAMPLES / "v2-gzip" / "00000000000000000000.log", "--bytes", mode)
        raw = objects(text)[0]["rawRecords"]
        import base64

        assert base64.b64decode(raw, validate=True)[:2] == b"\x1f\x8b"  # the gzip payload as stored


def test_a_text_value_that_cannot_give_its_bytes_back_is_refused(tmp_path):
    obj = _first(SAMPLES / "v2-none" / "00000000000000000000.log")
    obj.pop("rawRecords", None)
    obj["records"][0]["value"] = "caf\\xe9"  # what --bytes text writes for b"caf\xe9"
    code, err = encode_text(lines([obj]), tmp_path / "o.log", "--bytes", "text")
    assert code == 2 and "line 1: .records[0].value: not text: a \\xNN escape" in err


def test_a_value_no_check_names_is_still_a_usage_error(tmp_path):
    """A hand edit whose type no check of ops/encode.py names (here ``layout``, a lookup key of the
    Redpanda base index encoder, found by the fuzz campaign as TypeError: unhashable type: 'dict') is
    exit 2 naming the line, never an internal error."""
    import json

    from click.testing import CliRunner

    from wireinspect.cli import cli

    obj = {"type": "redpanda_base_index", "format": "redpanda-base-index", "layout": {"a": 1}, "version": 9}
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(obj) + "\n")
    r = CliRunner().invoke(cli, ["encode", str(src), "-o", str(tmp_path / "out.bin")])
    assert r.exit_code == 2 and "line 1: .layout" in r.stderr, r.output
    assert not (tmp_path / "out.bin").exists()
