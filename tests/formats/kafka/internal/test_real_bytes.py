"""Our decoder over every fixture written by an independent implementation (``fixtures/README.md``):
``dump --json`` through the CLI, the fixture laid out as the broker lays it out, each record's
``keyDecoded``/``valueDecoded`` (``controlType``, the consumer-protocol ``subscriptionDecoded`` /
``assignmentDecoded``) compared field by field with the fixture's expected values and, for the logs
written by Kafka 4.0.0's own server code, with what Kafka 4.0.0's deserializers read from the same bytes
(``.writer.json``). No record of these real files may get a problem: none of them is damaged.

The external fixtures (real brokers' files, outside the repository) skip when absent; run them with
``WIREINSPECT_EXTERNAL=/path/to/external`` (see ``tests/paths.py``)."""

from __future__ import annotations

import base64
import json
import struct

import pytest
from click.testing import CliRunner

from tests.formats.kafka.internal import fixtures
from tests.formats.kafka.internal import internal_bytes as kb
from wireinspect.cli import cli
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.kafka.internal.encode import encode_decoded
from wireinspect.layout import EncodeContext

LOGS = (".log", ".checkpoint")
# where a local log fixture goes in a broker's log directory (external ones keep their own path)
LOCAL_PLACES = {
    "java-server__consumer_offsets.log": "__consumer_offsets-0/00000000000000000000.log",
    "java-server__consumer_offsets_txn.log": "__consumer_offsets-7/00000000000000000000.log",
    "java-server__transaction_state.log": "__transaction_state-0/00000000000000000000.log",
    "java-server__share_group_state.log": "__share_group_state-0/00000000000000000000.log",
    "java-server__remote_log_metadata.log": "__remote_log_metadata-0/00000000000000000000.log",
    "java-server__00000000000000000120-0000000004.checkpoint":
        "__cluster_metadata-0/00000000000000000120-0000000004.checkpoint",
    "java-clients__kraft-control.log": "__cluster_metadata-0/00000000000000000000.log",
    "java-clients__txn-markers.log": "orders-0/00000000000000000000.log",
}
# fixtures whose file name says nothing of their topic: read with --records-as
RECORDS_AS = {"java-clients__snapshot-control.checkpoint": ("snapshot-control.checkpoint", "metadata"),
              "external/ldi-poc/bootstrap.checkpoint": ("ldi-poc/bootstrap.checkpoint", "metadata")}
# fixtures whose bytes fixtures/README.md says are damaged, with the problem codes they should get: none is
DAMAGED: dict[str, list[str]] = {}
DERIVED = ("TransactionStatusName",)  # what our JSON adds beside a field (docs/json.md)


def _bytes_of(name: str) -> bytes:
    if not fixtures.available(name):
        pytest.skip(f"{name}: the external fixtures are not present (set WIREINSPECT_EXTERNAL, tests/paths.py)")
    return fixtures.load(name)


def dump(tmp_path, rel: str, data: bytes, records_as: str | None = None):
    """``dump --json --bytes hex`` of ``data`` written at ``tmp_path/rel``: (exit code, the units)."""
    p = tmp_path / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    args = ["dump", "--json", "--bytes", "hex", str(p)]
    if records_as:
        args[1:1] = ["--records-as", records_as]
    r = CliRunner().invoke(cli, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, [json.loads(ln) for ln in r.stdout.splitlines() if ln.strip()]


def records_of(units):
    return [rec for u in units for rec in (u.get("records") or ())]


def problems_of(units) -> list:
    """Every problem of the units and of the decoded objects inside their records."""
    out = [pr for u in units for pr in u.get("problems") or ()]
    stack = [r for r in records_of(units)]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.extend(v.get("problems") or ())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


# -- comparison -------------------------------------------------------------------------------------
def same(ours, theirs, path: str, out: list, *, writer=False) -> None:
    """Field-by-field differences of our JSON ``ours`` from ``theirs`` (appended to ``out``). ``writer``:
    ``theirs`` is Kafka's JSON converter (field names start lowercase, bytes are base64)."""
    if isinstance(theirs, dict) and isinstance(ours, dict):
        mine = {}
        for k, v in ours.items():
            if k in DERIVED or (k.endswith("Decoded") and writer):
                continue
            mine[(k[:1].lower() + k[1:]) if writer else k] = (k, v)
        for k, v in theirs.items():
            if k not in mine:
                out.append(f"{path}.{k}: missing (want {v!r})")
                continue
            ok, ov = mine.pop(k)
            if k.endswith("Decoded") and isinstance(v, dict) and isinstance(ov, dict):
                # the expected consumer-protocol expansion: {"version", "data"} (ours adds its "type")
                if ov.get("problems"):
                    out.append(f"{path}.{ok}: problems {ov['problems']}")
                for kk in v:
                    same(ov.get(kk), v[kk], f"{path}.{ok}.{kk}", out, writer=writer)
                continue
            same(ov, v, f"{path}.{ok}", out, writer=writer)
        for k, (ok, ov) in mine.items():
            out.append(f"{path}.{ok}: not expected (ours {ov!r})")
        return
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(ours) != len(theirs):
            out.append(f"{path}: {len(ours)} elements, want {len(theirs)}")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            same(a, b, f"{path}[{i}]", out, writer=writer)
        return
    if ours == theirs and type(ours) is type(theirs):
        return
    if writer and isinstance(ours, str) and isinstance(theirs, str):
        try:  # a bytes field: ours in hex, Kafka's JSON converter in base64
            if bytes.fromhex(ours) == base64.b64decode(theirs, validate=True):
                return
        except ValueError:
            pass
    out.append(f"{path}: ours {ours!r}, want {theirs!r}")


def schema_difference(want: dict) -> bool:
    """An expected record the independent reader could not read with the trunk specs (a type they lack,
    a struct they cannot read, bytes left over): its values are not the truth; the writer's are."""
    return ("decodeError" in want or ("recordType" in want and want.get("key") is None)
            or "_trailing" in (want.get("valueData") or {}))


def compare_expected(rec: dict, want: dict, out: list) -> None:
    at = f"offset {want['offset']}"
    if rec.get("offset") != want["offset"] or rec.get("timestamp") != want["timestamp"]:
        out.append(f"{at}: offset/timestamp {rec.get('offset')}/{rec.get('timestamp')}")
    if "control" in want:
        if rec.get("controlType") != want["control"]:
            out.append(f"{at}: controlType {rec.get('controlType')!r}, want {want['control']!r}")
        if struct.unpack(">h", bytes.fromhex(rec["key"])[:2])[0] != want["keyVersion"]:
            out.append(f"{at}: control key version")
        if want["control"] in ("ABORT", "COMMIT"):  # EndTransactionMarker: int16 version, int32 epoch
            if struct.unpack(">h", bytes.fromhex(rec["value"])[:2])[0] != want["version"]:
                out.append(f"{at}: marker version")
            same(rec.get("coordinatorEpoch"), want["data"]["CoordinatorEpoch"], f"{at}.coordinatorEpoch", out)
            return
        vd = rec.get("valueDecoded") or {}
        same({"version": vd.get("version"), "data": vd.get("data")},
             {"version": want["version"], "data": want["data"]}, at, out)
        return
    if "frameVersion" in want:  # a metadata record
        vd = rec.get("valueDecoded") or {}
        same({k: vd.get(k) for k in ("frameVersion", "apiKey", "type", "version", "data")},
             {k: want[k] for k in ("frameVersion", "apiKey", "type", "version", "data")}, at, out)
        return
    if "recordType" in want:  # a coordinator record
        kd = rec.get("keyDecoded") or {}
        if kd.get("recordType") != want["recordType"]:
            out.append(f"{at}: recordType {kd.get('recordType')}, want {want['recordType']}")
        if schema_difference(want):
            return  # compared with the writer's own reading (compare_writer)
        same({"type": kd.get("type"), "data": kd.get("data")}, {"type": want["key"], "data": want["keyData"]},
             f"{at}.key", out)
        vd = rec.get("valueDecoded")
        if "value" in want and want["value"] is None:
            if vd is not None:
                out.append(f"{at}: a tombstone decoded as {vd!r}")
            return
        vd = vd or {}
        same({"type": vd.get("type"), "version": vd.get("version"), "data": vd.get("data")},
             {"type": want["valueName"], "version": want["valueVersion"], "data": want["valueData"]},
             f"{at}.value", out)
        return
    # an ordinary record (the data records of a transactional partition)
    same({k: rec.get(k) for k in ("key", "value")}, {"key": want["key"], "value": want["value"]}, at, out)
    if rec.get("keyDecoded") is not None or rec.get("valueDecoded") is not None:
        out.append(f"{at}: an ordinary record decoded as an internal one")


def compare_writer(rec: dict, w: dict, out: list) -> None:
    """Our record against Kafka 4.0.0's own reading of it: key name and version (the 4.0 key version is
    the record type), value name, version and data."""
    at = f"offset {w['offset']} (writer)"
    kd = rec.get("keyDecoded") or {}
    if (kd.get("type"), kd.get("recordType")) != (w["key"]["name"], w["key"]["version"]):
        out.append(f"{at}: key {kd.get('type')} type {kd.get('recordType')}, want {w['key']['name']} "
                   f"{w['key']['version']}")
    same(kd.get("data"), w["key"]["data"], f"{at}.key", out, writer=True)
    vd = rec.get("valueDecoded")
    if w["value"] is None:
        if vd is not None:
            out.append(f"{at}: a tombstone decoded as {vd!r}")
        return
    vd = vd or {}
    if (vd.get("type"), vd.get("version")) != (w["value"]["name"], w["value"]["version"]):
        out.append(f"{at}: value {vd.get('type')} v{vd.get('version')}, want {w['value']['name']} "
                   f"v{w['value']['version']}")
    same(vd.get("data"), w["value"]["data"], f"{at}.value", out, writer=True)


def place(name: str) -> tuple[str, str | None]:
    if name in RECORDS_AS:
        return RECORDS_AS[name]
    if name.startswith("external/"):
        return name[len("external/"):], None
    return LOCAL_PLACES[name], None


LOG_NAMES = [n for n in fixtures.names() if n.endswith(LOGS)]
BLOB_NAMES = [n for n in fixtures.names() if not n.endswith(LOGS)]


def test_every_log_fixture_has_a_place():
    for name in LOG_NAMES:
        assert name.startswith("external/") or name in LOCAL_PLACES or name in RECORDS_AS, name


@pytest.mark.parametrize("name", LOG_NAMES)
def test_log_fixture_decodes_as_its_writer_wrote_it(tmp_path, name):
    data = _bytes_of(name)
    rel, records_as = place(name)
    code, units = dump(tmp_path, rel, data, records_as)
    recs = records_of(units)
    want = fixtures.expected(name)
    assert [r.get("offset") for r in recs] == [w["offset"] for w in want]
    diffs: list = []
    for rec, w in zip(recs, want):
        compare_expected(rec, w, diffs)
    writer = fixtures.writer_view(name)
    if writer is not None:
        by_offset = {r.get("offset"): r for r in recs}
        for w in writer:
            compare_writer(by_offset[w["offset"]], w, diffs)
    else:  # without the writer's reading, nothing may be left to it
        assert not [w["offset"] for w in want if schema_difference(w)]
    assert diffs == []
    assert sorted(pr["code"] for pr in problems_of(units)) == sorted(DAMAGED.get(name, []))
    assert code == (1 if name in DAMAGED else 0)


def group_segment(field: str, blob: bytes) -> bytes:
    """A __consumer_offsets batch (kafka-python's builder) of one GroupMetadataValue v3 (packed by hand)
    whose one member of a ``consumer`` group carries ``blob`` as its ``subscription`` or ``assignment``."""
    other = struct.pack(">hi", 0, 0) + struct.pack(">i", -1)  # the other field: v0, no topics, null UserData
    sub, asg = (blob, other) if field == "subscription" else (other, blob)
    value = (struct.pack(">h", 3) + kb.s("consumer") + struct.pack(">i", 1) + kb.s("range") + kb.s("m-1")
             + struct.pack(">qi", kb.T0, 1) + kb.s("m-1") + kb.s(None) + kb.s("c") + kb.s("/10.0.0.1")
             + struct.pack(">ii", 300000, 45000) + kb.by(sub) + kb.by(asg))
    return kb.batch(0, [(kb.group_key("g"), value)])


@pytest.mark.parametrize("name", BLOB_NAMES)
def test_consumer_protocol_fixture_decodes_inside_a_group_member(tmp_path, name):
    data = _bytes_of(name)
    (want,) = fixtures.expected(name)
    field = {"ConsumerProtocolSubscription": "subscription", "ConsumerProtocolAssignment": "assignment"}[want["type"]]
    code, units = dump(tmp_path, "__consumer_offsets-0/00000000000000000000.log", group_segment(field, data))
    (rec,) = records_of(units)
    member = rec["valueDecoded"]["data"]["members"][0]
    assert member[field] == data.hex()
    got = member[field + "Decoded"]
    diffs: list = []
    same({k: got.get(k) for k in ("type", "version", "data")}, want, field + "Decoded", diffs)
    assert diffs == []
    assert sorted(pr["code"] for pr in problems_of(units)) == sorted(DAMAGED.get(name, []))
    assert code == (1 if name in DAMAGED else 0)


@pytest.mark.parametrize("name", LOG_NAMES)
def test_every_decoded_key_and_value_encodes_to_the_stored_bytes(tmp_path, name):
    # the encoder from the decoded objects alone (no stored bytes to fall back on), in their schema
    data = _bytes_of(name)
    rel, records_as = place(name)
    _, units = dump(tmp_path, rel, data, records_as)
    ctx, enc = EncodeContext(bytes_mode="hex"), bytes_encoder("hex")
    count = 0
    for rec in records_of(units):
        for field in ("key", "value"):
            dec = rec.get(field + "Decoded")
            if dec is None or dec.get("type") is None:
                continue
            count += 1
            got = encode_decoded(dec, None, ctx, f"offset {rec['offset']}.{field}Decoded", enc)
            assert got.hex() == rec[field], (rec["offset"], field, dec.get("type"))
    assert count or name == "java-clients__txn-markers.log"
