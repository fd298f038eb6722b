"""A RocketMQ store's bookkeeping (``checkpoint``, ``abort``, ``lock``, ``config/*.json``) and how files
are recognised (issue 24, items 1 and 6).

Real files: the stores some RocketMQ forks committed with their sources (``store/checkpoint``,
``store/abort``, ``store/lock``, ``store/config/*.json[.bak]``), read from
``<external>/rocketmq-store/<owner>+<repo>/store/`` when present (tests/paths.EXTERNAL; skipped when
absent; not copied into this repository). Provenance (GitHub; each repository carries Apache-2.0's
LICENSE, being a fork of apache/rocketmq):

* Shaoxubao/rocketmq-study @ 3ddce3121ea1c71f2fc3613426d3943c2c16b9bd (checkpoint last changed in
  c4dcaab0cdafbf7a2e984e1997730955f21da476): store/checkpoint (RocketMQ 4.x, physic = logics =
  2019-03-03T15:17:18.066Z, index 0), abort (empty), lock ("lock"), config/ with .bak copies
  (topics.json.bak one version behind);
* liushangqing9803/rocketmq-tech @ dc2815847989bdc77fe879d88ae4c84d2ba283e2: store/checkpoint (2023),
  lock, config/ with .bak copies;
* gxstax/rocketmq @ 2fd17baccb32c12e12e8168ccf645183789b80f4 (checkpoint in
  c831b411418fa1d70b5504611f5326a6e244fede): store/checkpoint, abort, lock, config/ without .bak.

Before this change, the checkpoint was recognised by kafka-log's content guess (byte 16 is 0) and
reported as a damaged magic-0 message with a zero_fill tail, exit 1.
"""

from __future__ import annotations

import json
import os
import struct
import zlib

import pytest
from click.testing import CliRunner

from tests.paths import EXTERNAL, SAMPLES
from wireinspect.catalog import choose_format, claims_name, recognise
from wireinspect.cli import cli
from wireinspect.formats.rocketmq.bookkeeping import (CHECKPOINT_LAYOUT, CONFIG_KINDS, encode_checkpoint,
                                                      iter_checkpoint, iter_config, read_checkpoint, read_config)
from wireinspect.inputs.source import BytesSource
from wireinspect.layout import EncodeContext

REAL = EXTERNAL / "rocketmq-store"
REAL_STORES = ("Shaoxubao+rocketmq-study", "liushangqing9803+rocketmq-tech", "gxstax+rocketmq")
STORE = SAMPLES / "rocketmq" / "store"
T0 = 1_700_000_000_000


def run(*args, input=None):  # noqa: A002 (CliRunner's name)
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def page(*longs) -> bytes:
    """A checkpoint as StoreCheckpoint.flush leaves it: the longs at 0, 8, ... of a zeroed 4096-byte page."""
    b = struct.pack(f">{len(longs)}q", *longs)
    return b + bytes(4096 - len(b))


def real_store(name: str):
    d = REAL / name / "store"
    if not d.is_dir():
        pytest.skip(f"{d} is not present (external fixture; see the module docstring)")
    return d


# -- recognition (item 6) --------------------------------------------------------------------------

CHECKPOINT_2019 = page(1551626238066, 1551626238066, 0)  # the real Shaoxubao checkpoint's values


def test_checkpoint_is_never_a_kafka_segment():
    # byte 16 (indexMsgTimestamp's first byte) is 0: kafka-log's content guess took it for magic 0
    for name in ("/data/store/checkpoint", "store/checkpoint", "/root/rocketmq/storeRoot/checkpoint"):
        rec = recognise(CHECKPOINT_2019, name)
        assert (rec.format.id, rec.by, rec.confidence) == ("rocketmq-checkpoint", "name", 95)
    # elsewhere the name needs the content: a checkpoint page is sure, other bytes a guess that says so
    rec = recognise(CHECKPOINT_2019, "/elsewhere/checkpoint")
    assert (rec.format.id, rec.by, rec.confidence, rec.guessed) == ("rocketmq-checkpoint", "content", 85, False)
    tensorflow = b'model_checkpoint_path: "model.ckpt-1000"\nall_model_checkpoint_paths: "model.ckpt-1000"\n'
    rec = recognise(tensorflow, "/train/run1/checkpoint")
    assert rec.format is None or rec.guessed
    # a copy under another name: guessed by content, and it says so
    rec = recognise(CHECKPOINT_2019, "/tmp/x.bin")
    assert (rec.format.id, rec.by, rec.guessed) == ("rocketmq-checkpoint", "content", True)


def test_kafka_content_guess_weighs_the_first_crc():
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=T0, key=b"k", value=b"v", headers=[])
    v2 = bytes(b.build())
    lb = LegacyRecordBatchBuilder(magic=0, compression_type=0, batch_size=1 << 20)
    lb.append(0, timestamp=None, key=b"k", value=b"v")
    v0 = bytes(lb.build())
    for data, sure in ((v2, 85), (v0, 80)):
        rec = recognise(data, "x.bin")
        assert (rec.format.id, rec.by, rec.confidence, rec.guessed) == ("kafka-log", "content", sure, False)
        bad = bytearray(data)
        bad[-1] ^= 1  # the CRC fails: a weak guess
        rec = recognise(bytes(bad), "x.bin")
        assert rec.format.id == "kafka-log" and rec.guessed and rec.confidence < 40
    assert recognise(v2, "00000000000000000000.log").by == "name"


def test_store_names_are_claimed_by_name_and_place():
    assert claims_name("/s/store/config/topics.json")  # its text is not read as a hex dump
    assert claims_name("/s/store/config/topics.json.bak")
    assert not claims_name("/s/topics.json")
    assert choose_format(b"{}", "/s/topics.json") is None
    assert choose_format(b"{}", "/s/store/config/brokerExtra.json").id == "rocketmq-config"  # 90: *.json in a store
    assert choose_format(b"{}", "/s/app/config/brokerExtra.json") is None
    for name, fid in (("store/abort", "rocketmq-abort"), ("store/lock", "rocketmq-lock"),
                      ("store/commitlog/" + "0" * 20, "rocketmq-commitlog"),
                      ("store/consumequeue/t/0/" + "0" * 20, "rocketmq-consumequeue"),
                      ("store/index/20240101120000000", "rocketmq-index")):
        rec = recognise(CHECKPOINT_2019, name)  # whatever the bytes
        assert (rec.format.id, rec.by) == (fid, "name"), name


def test_guess_is_said_in_dump_and_verify(tmp_path):
    p = tmp_path / "copy.bin"
    p.write_bytes(CHECKPOINT_2019)
    r = run("verify", "--json", p)
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert (d["format"], d["recognition"], d["confidence"]) == ("rocketmq-checkpoint", "content", 50)
    assert [n["code"] for n in d["notes"]] == ["format_guessed"]
    r = run("dump", p)
    assert r.output.splitlines()[1].startswith("note: recognised as rocketmq-checkpoint by its content alone")
    lines = [json.loads(x) for x in run("dump", "--json", p).output.splitlines()]
    assert all(x["recognition"] == "content" and x["confidence"] == 50 for x in lines)
    tree = json.loads(run("dump", "--json", "--tree", p).output.splitlines()[0])
    assert tree["recognition"] == "content"
    # --format settles it: no note, no keys
    r = run("verify", "--json", f"{p}:rocketmq-checkpoint")
    assert "recognition" not in json.loads(r.output) and "notes" not in json.loads(r.output)
    # a segment whose first CRC holds is no guess either
    r = run("verify", "--json", "-", input=(SAMPLES / "transactional" / "00000000000000000000.log").read_bytes())
    assert "recognition" not in json.loads(r.output)
    # named inputs: no note
    assert "recognition" not in json.loads(run("verify", "--json", STORE / "checkpoint").output)


# -- checkpoint (item 1) ---------------------------------------------------------------------------

def test_checkpoint_layout_is_storecheckpoints():
    # StoreCheckpoint: getLong(0), getLong(8), getLong(16), getLong(24), getLong(32)
    assert [f.name for f in CHECKPOINT_LAYOUT.fields] == ["physicMsgTimestamp", "logicsMsgTimestamp",
                                                         "indexMsgTimestamp", "masterFlushedOffset",
                                                         "confirmPhyOffset"]
    assert "StoreCheckpoint" in CHECKPOINT_LAYOUT.source
    u = read_checkpoint(page(T0 + 5000, T0 + 4000, T0 + 3000, 123456, 120000))
    assert u.values == {"physicMsgTimestamp": T0 + 5000, "logicsMsgTimestamp": T0 + 4000,
                        "indexMsgTimestamp": T0 + 3000, "masterFlushedOffset": 123456, "confirmPhyOffset": 120000}
    assert u.min_timestamp == T0 + 1000 and not u.problems and not u.notes


@pytest.mark.parametrize("data,codes,notes", [
    (page(0, 0, 0), [], ["checkpoint_empty"]),
    (page(T0, T0, T0)[:30], [], ["checkpoint_short"]),
    (page(T0, T0, T0)[:20], ["truncated"], []),
    (b"", ["truncated"], []),
    (page(-5, T0, T0), ["bad_checkpoint_value"], []),
])
def test_checkpoint_checks(data, codes, notes):
    u = read_checkpoint(data)
    assert [p.code for p in u.problems] == codes
    assert [p.code for p in u.notes] == notes


def test_checkpoint_page_and_every_cut():
    data = page(T0, T0, T0, 7, 8)
    data = data[:100] + b"\x01" + data[101:]
    units = list(iter_checkpoint(BytesSource(data, "checkpoint")))
    assert [u.type for u in units] == ["store_checkpoint", "unparsed"]
    assert [n.code for n in units[1].notes] == ["unused_bytes_not_zero"] and not units[1].problems
    for cut in range(0, 64):
        got = list(iter_checkpoint(BytesSource(data[:cut], "checkpoint")))
        assert sum(u.length for u in got) == cut
        for u in got:
            u.to_tree(), u.to_json(str)


def test_checkpoint_encode_round_trip(tmp_path):
    ctx = EncodeContext()
    obj = read_checkpoint(page(T0, T0 - 1, T0 - 2, 9, 10)).to_json(str)
    assert encode_checkpoint(obj, ctx) == page(T0, T0 - 1, T0 - 2, 9, 10)[:40]
    v4 = {k: obj[k] for k in ("physicMsgTimestamp", "logicsMsgTimestamp", "indexMsgTimestamp")}
    assert len(encode_checkpoint(v4, ctx)) == 24
    # the command: dump --json --raw | encode gives the file back
    src = STORE / "checkpoint"
    r = run("dump", "--json", "--raw", src)
    (tmp_path / "in.jsonl").write_text(r.output)
    r = run("encode", tmp_path / "in.jsonl", "-o", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out").read_bytes() == src.read_bytes()


def test_checkpoint_against_rocketmqs_java_when_present():
    """A checkpoint written by RocketMQ's own StoreCheckpoint class (compiled from apache/rocketmq's
    StoreCheckpoint.java @ 73e8fdbd with stub Logger/LoggerFactory/UtilAll/DefaultMappedFile classes, javac 17):
    setters then shutdown() (flush) of physic 1700000005000, logics 1700000004000, index 1700000003000,
    masterFlushed 4096, confirm 2048; read back by the class, getMinTimestamp() gave 1700000001000. The
    same class read samples/rocketmq/store/checkpoint as 1700000005000 1700000004000 1700000003000 0 0."""
    p = REAL / "java" / "checkpoint"
    if not p.is_file():
        pytest.skip(f"{p} is not present (external fixture)")
    data = p.read_bytes()
    assert len(data) == 4096
    assert read_checkpoint(data).values == {"physicMsgTimestamp": 1700000005000, "logicsMsgTimestamp": 1700000004000,
                                            "indexMsgTimestamp": 1700000003000, "masterFlushedOffset": 4096,
                                            "confirmPhyOffset": 2048}
    assert read_checkpoint(data).min_timestamp == 1700000001000  # what its getMinTimestamp() printed


# -- abort and lock ---------------------------------------------------------------------------------

def test_abort_and_lock_samples():
    d = json.loads(run("verify", "--json", STORE / "abort").output)
    assert d["format"] == "rocketmq-abort" and d["status"] == "ok"
    assert [n["code"] for n in d["notes"]] == ["unclean_shutdown"]
    r = run("dump", "--json", STORE / "lock")
    assert r.exit_code == 0 and json.loads(r.output)["type"] == "store_lock"
    assert "holds \"lock\"" in json.loads(r.output)["message"]


# -- config ------------------------------------------------------------------------------------------

def test_config_decoded_with_positions():
    data = (STORE / "config" / "consumerOffset.json").read_bytes()
    u = read_config(data, "store/config/consumerOffset.json", len(data))
    assert not u.problems and u.value["offsetTable"]["orders@billing"] == {"0": 4, "1": 2, "2": 3, "3": 1}
    assert u.unquoted == 5
    spans = {m[0]: (m[1], m[2]) for m in u.members}
    start, end = spans[("offsetTable", "orders@billing", "0")]
    assert data[start:end] == b"0:4"
    tree = u.to_tree()
    assert tree.children[0].name == "offsetTable"


@pytest.mark.parametrize("text,code", [
    (b'{"offsetTable":{"t@g":{0:1,}}}', "bad_config_json"),
    (b'{"offsetTable":{"t@g":{0:-1}}}', "bad_config_value"),
    (b'{"offsetTable":{"tg":{0:1}}}', "bad_config_value"),
    (b'[1, 2]', "bad_config_json"),
    (b"[" * 100_000, "bad_config_json"),
    (b'{"a":' * 5000 + b"1" + b"}" * 5000, "bad_config_json"),
    (b'{"offsetTable":"x"}', "bad_config_value"),
])
def test_config_bad_input_is_a_problem(text, code):
    u = read_config(text, "store/config/consumerOffset.json", len(text))
    assert [p.code for p in u.problems] == [code]
    if code == "bad_config_json" and u.value is None:
        assert "line 1, column" in u.problems[0].message and "consumerOffset.json.bak" in u.problems[0].message
    u.to_tree(), u.to_json(str)


def test_config_positions_have_lines():
    text = b'{\n\t"topicConfigTable":{\n\t\t"a":{"topicName":"a",\n\t\t\tperm:9}\n\t}\n}'
    u = read_config(text, "topics.json", len(text))
    assert [p.code for p in u.problems] == ["bad_config_value"]
    text = b'{\n\t"topicConfigTable":{\n\t\t"a" "b"\n}'
    u = read_config(text, "topics.json", len(text))
    assert u.problems[0].message.startswith("line 3, column 7:")


def test_config_hostile_size_is_not_read():
    class Huge(BytesSource):
        def read(self, pos, n):
            raise AssertionError("read past the limit")

    src = Huge(b"", "store/config/topics.json")
    src.size = 1 << 40
    (u,) = iter_config(src)
    assert [p.code for p in u.problems] == ["file_too_large"]


def test_config_empty_and_missing_table(tmp_path):
    assert [n.code for n in read_config(b"", "topics.json", 0).notes] == ["config_empty"]
    assert [n.code for n in read_config(b"{}", "topics.json", 2).notes] == ["config_table_missing"]


def test_backup_compared_with_its_file():
    d = [json.loads(x) for x in run("verify", "--json", STORE / "config").output.splitlines()]
    notes = {os.path.basename(x["path"]): [n["code"] for n in x.get("notes", ())] for x in d}
    assert notes["topics.json.bak"] == ["config_backup_differs"]
    assert notes["consumerOffset.json.bak"] == ["config_backup_differs"]
    assert notes["delayOffset.json.bak"] == []
    assert all(x["status"] == "ok" for x in d)


def test_config_kinds_are_the_sniffers():
    for name in CONFIG_KINDS:
        assert choose_format(b"", f"/x/config/{name}").id == "rocketmq-config"
        assert choose_format(b"", f"/x/config/{name}.bak").id == "rocketmq-config"


def test_sample_script_reproduces_the_samples(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("mk", SAMPLES / "make_rocketmq_store.py")
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    monkeypatch.setattr(mk, "STORE", str(tmp_path))
    mk.main()
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert p.read_bytes() == (STORE / p.relative_to(tmp_path)).read_bytes(), p


def test_sample_store_verifies_clean():
    r = run("verify", STORE)
    assert r.exit_code == 0, r.output
    assert "unclean_shutdown" in r.output and "20 files" in r.output


# -- real stores --------------------------------------------------------------------------------------

@pytest.mark.external
@pytest.mark.parametrize("name", REAL_STORES)
def test_real_store_bookkeeping(name):
    d = real_store(name)
    r = run("verify", "--json", d)
    assert r.exit_code == 0, r.output
    out = [json.loads(x) for x in r.output.splitlines()]
    by = {os.path.relpath(x["path"], d): x for x in out}
    assert by["checkpoint"]["format"] == "rocketmq-checkpoint" and by["checkpoint"]["status"] == "ok"
    assert by["lock"]["format"] == "rocketmq-lock"
    for rel, x in by.items():
        if rel.startswith("config"):
            assert x["format"] == "rocketmq-config" and x["status"] == "ok", x
        assert "recognition" not in x
    if (d / "abort").exists():
        assert [n["code"] for n in by["abort"]["notes"]] == ["unclean_shutdown"]


@pytest.mark.external
def test_real_checkpoint_values():
    d = real_store("Shaoxubao+rocketmq-study")
    data = (d / "checkpoint").read_bytes()
    assert zlib.crc32(data) == zlib.crc32(CHECKPOINT_2019)  # the values quoted above
    u = read_checkpoint(data)
    assert u.values["physicMsgTimestamp"] == 1551626238066 and u.values["indexMsgTimestamp"] == 0
    d = json.loads(run("verify", "--json", d / "config" / "topics.json.bak").output)
    assert [n["code"] for n in d["notes"]] == ["config_backup_differs"]
    assert "dataVersion.counter: 2 in the .bak, 3 in the file" in d["notes"][0]["message"]


# -- encode: config, abort, lock --------------------------------------------------------------------------

def test_every_store_file_round_trips(tmp_path):
    from tests.roundtrip import roundtrip

    for i, p in enumerate(sorted(STORE.rglob("*"))):
        if p.is_file():  # one output directory per file: the consume queues share their names
            (tmp_path / str(i)).mkdir()
            assert roundtrip(p, tmp_path / str(i), "--keep-crc") == p.read_bytes(), p


def test_config_written_as_the_broker_writes_it():
    from wireinspect.formats.rocketmq.bookkeeping import encode_config, pretty

    for p in sorted((STORE / "config").iterdir()):
        data = p.read_bytes()
        u = read_config(data, str(p), len(data))
        assert pretty(u.value).encode() == data, p  # without fileBytes: the same bytes
        edited = u.to_json(str)
        if p.name == "consumerOffset.json":
            edited["value"]["offsetTable"]["orders@billing"]["0"] = 43
            out = encode_config(edited, EncodeContext())
            assert out == data.replace(b"{0:4,", b"{0:43,")
    deep = {"a": [[[[{"b": 1}]]]] * 2}
    assert read_config(pretty(deep).encode(), "x.json", 0).value == deep


@pytest.mark.external
@pytest.mark.parametrize("name", REAL_STORES)
def test_real_config_files_are_written_byte_for_byte(name):
    from wireinspect.formats.rocketmq.bookkeeping import pretty

    for p in sorted((real_store(name) / "config").iterdir()):
        data = p.read_bytes()
        assert pretty(read_config(data, str(p), len(data)).value).encode() == data, p


@pytest.mark.parametrize("pid", [b"6025", b"31337"])
def test_an_abort_holding_a_process_id_is_not_a_hex_dump_anywhere(tmp_path, pid):
    """RocketMQ 5's broker writes its process id into ``abort``; digits are also hex text, and outside
    a store-named directory the name alone is not enough to keep them from being decoded as a hex dump:
    the name and the content agreeing are."""
    path = tmp_path / "broker-a" / "abort"
    path.parent.mkdir()
    path.write_bytes(pid)
    r = CliRunner().invoke(cli, ["verify", str(path)])
    assert r.exit_code == 0, r.output
    assert "(hex dump)" not in r.output
    assert f"process id {pid.strip().decode()}" in r.output
