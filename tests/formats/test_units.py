"""The unit protocol (wireinspect/formats/unit.py): every unit every format yields is a ``UnitBase`` and
satisfies ``Unit`` (log formats' units ``LogUnit``), with each member of the documented shape; and
``ops/``, ``render/`` and ``spark/`` read members instead of probing units with ``getattr``.

Units come from the fuzz seeds (tests/fuzz/seeds.py, as tests/formats/test_properties.py builds
them; as they are, mutated and cut), through every path a command takes (``units`` with and without
``deep``, ``check``, ``entries``), and from what the seeds do not reach: the samples (a partition
directory, captures), ../shared/external when present, the fast path's runs on a real file, a
commit log's BLANK end marker and a Kafka 0.7 capture."""

from __future__ import annotations

import ast
import random
import struct
import zlib
from pathlib import Path

import pytest

from tests.conftest import EXTERNAL, ROOT, SAMPLES
from tests.formats.test_properties import SEEDS
from tests.fuzz.mutate import mutate
from wireinspect.catalog import get_format
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.unit import LogUnit, RawUnit, Unit, UnitBase
from wireinspect.inputs.open import iter_items
from wireinspect.inputs.source import BytesSource, FileSource
from wireinspect.model import Node, Problem
from wireinspect.formats.options import Options

ENC = bytes_encoder("base64")
OPTIONAL_INT = ("base_offset", "last_offset", "base_timestamp", "max_timestamp", "producer_id", "file_position",
                "file_size")
OPTIONAL_METHODS = ("report_table", "json_line", "raw_json", "raw_bytes", "record_contents", "show_records")


def _family(fid: str) -> str:
    return "rocketmq" if fid.startswith("rocketmq") else "jafka" if fid.startswith("jafka") else \
        "kafka-stream" if fid == "kafka-stream" else "kafka-log"


def _paths(fmt):
    """(name, unit iterator) of every path a command takes through a format."""
    yield "units", lambda src: fmt.units(src, Options(max_decompressed=64 << 10, deep=False))
    yield "units-deep", lambda src: fmt.units(src, Options(max_decompressed=64 << 10, deep=True))
    if fmt.check is not None:
        yield "check", lambda src: fmt.check(src, Options(max_decompressed=64 << 10))
    if fmt.entries is not None:
        yield "entries", lambda src: fmt.entries(src, Options(max_decompressed=64 << 10))


def assert_unit(u, fmt, where: str = "") -> None:
    """``u`` follows the protocol: a UnitBase, a Unit, each member of its documented shape; a log
    format's unit a LogUnit; a unit with a ``raw_json`` method a RawUnit."""
    what = f"{fmt.id} {where} {type(u).__module__}.{type(u).__qualname__}"
    assert isinstance(u, UnitBase), what
    assert isinstance(u, Unit), what
    assert type(u.type) is str and u.type, what
    assert type(u.position) is int and type(u.length) is int and u.length >= 0, what
    assert all(isinstance(p, Problem) for p in u.problems), what
    assert type(u.entries) is int and u.entries >= 0, what
    assert type(u.records_count) is int and u.records_count >= 0, what
    assert all(isinstance(n, Problem) for n in u.notes), what
    assert isinstance(u.valid, bool), what
    for name in OPTIONAL_INT:
        v = getattr(u, name)
        assert v is None or type(v) is int, (what, name, v)
    assert u.summary_text is None or type(u.summary_text) is str, what
    for name in OPTIONAL_METHODS:
        assert getattr(u, name) is None or callable(getattr(u, name)), (what, name)
    if fmt.recoverable:
        assert isinstance(u, LogUnit), what
    assert isinstance(u, RawUnit) == (u.raw_json is not None), what
    d = u.to_json(ENC)
    assert type(d) is dict and d["type"] == u.type, what
    assert isinstance(u.to_tree(), Node), what


def _units_of(fid: str, name: str, data: bytes):
    fmt = get_format(fid)
    for path, units in _paths(fmt):
        for u in units(BytesSource(data, name)):
            yield fmt, path, u


SEEDED = sorted(fid for fid, s in SEEDS.items() if s)


@pytest.mark.parametrize("fid", SEEDED)
def test_every_unit_of_the_seeds_follows_the_protocol(fid):
    """The seeds as they are, mutated (two mutants each, fixed seeds) and cut in half."""
    classes = set()
    for name, data in SEEDS[fid]:
        variants = [data, data[:len(data) // 2]]
        variants += [mutate(data, _family(fid), name, random.Random(k)) for k in (1, 2)]
        for v in variants:
            for fmt, path, u in _units_of(fid, name, v):
                assert_unit(u, fmt, path)
                classes.add(type(u))
    assert classes


def _items(top: Path):
    for item in iter_items([str(top)]):
        with item.source:
            fmt = item.format
            for path, units in _paths(fmt):
                for u in units(item.source):
                    yield fmt, path, u


def test_every_unit_of_the_samples_follows_the_protocol():
    """The samples: every log, the partition directory (a directory format), the captures."""
    types = set()
    for fmt, path, u in _items(SAMPLES):
        assert_unit(u, fmt, path)
        types.add((fmt.id, type(u).__name__))
    assert ("kafka-partition", "PartitionUnit") in types
    assert ("pcap", "CaptureSummary") in types
    assert {fid for fid, _ in types} >= {"kafka-log", "kafka-index", "kafka-timeindex", "jafka-log", "pcap"}


@pytest.mark.external
def test_every_unit_of_the_external_files_follows_the_protocol():
    if not EXTERNAL.is_dir():
        pytest.skip("../shared/external is not present")
    n = 0
    for fmt, path, u in _items(EXTERNAL):
        assert_unit(u, fmt, path)
        n += 1
    assert n


def test_the_fast_paths_run_follows_the_protocol(tmp_path):
    """``verify``'s fast path on a real file yields runs of batches: units too (never printed)."""
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes((SAMPLES / "v2-none" / "00000000000000000000.log").read_bytes())
    fmt = get_format("kafka-log")
    with FileSource(str(seg)) as src:
        units = list(fmt.check(src, Options()))
    assert [u.type for u in units] == ["run"]
    run = units[0]
    assert_unit(run, fmt, "check")
    assert run.entries > 1 and run.records_count > 0 and run.valid
    d = run.to_json(ENC)
    assert (d["batches"], d["recordsCount"], d["baseOffset"], d["lastOffset"]) == (
        run.entries, run.records_count, run.base_offset, run.last_offset)
    assert "records" not in d  # ``records`` is a list of records in every format
    node = run.to_tree()
    assert (node.position, node.length) == (0, seg.stat().st_size)


def test_a_commitlog_blank_marker_follows_the_protocol():
    data = struct.pack(">iI", 64, 0xCBD43194) + bytes(56)
    units = list(_units_of("rocketmq-commitlog", "commitlog/" + "0" * 20, data))
    assert {type(u).__name__ for _, _, u in units} == {"Blank"}
    for fmt, path, u in units:
        assert_unit(u, fmt, path)
        assert u.valid and u.records_count == 0 and u.base_offset is None


def test_a_kafka07_capture_follows_the_protocol(tmp_path):
    """Jafka frames of a capture (``CapturedExchange``: the Exchange with capture facts) and the summary."""
    from tests.capture_helpers import pcap_bytes
    from wireinspect.formats.jafka.requests import CapturedExchange

    def short(s: str) -> bytes:
        return struct.pack(">h", len(s)) + s.encode()

    fetch = short("topic") + struct.pack(">iqi", 0, 0, 1000)
    msg = b"payload"
    m1 = struct.pack(">ibbI", 6 + len(msg), 1, 0, zlib.crc32(msg)) + msg
    convo = [("request", struct.pack(">ih", 2 + len(fetch), 1) + fetch),
             ("response", struct.pack(">ih", 2 + len(m1), 0) + m1)]
    path = tmp_path / "j.pcap"
    path.write_bytes(pcap_bytes([("10.0.0.1:40000", "10.0.0.2:6667", convo)]))
    seen = []
    for fmt, where, u in _items(path):
        assert_unit(u, fmt, where)
        seen.append(u)
    frames = [u for u in seen if isinstance(u, CapturedExchange)]
    assert {u.type for u in frames} == {"request", "response"}
    assert all(u.file_position is not None for u in frames)
    assert sum(u.records_count for u in frames) == 0  # an Exchange counts no records (its JSON lists them)


# -- UnitBase itself ---------------------------------------------------------------------------------------
class _Plain(UnitBase):
    type = "plain"

    def __init__(self, problems=()):
        self.position, self.length, self.problems = 0, 4, list(problems)

    def to_json(self, enc):
        return {"type": self.type, "position": 0, "length": 4, "problems": []}

    def to_tree(self):
        return Node("plain", 0, 4, type="plain")


class _Slotted(UnitBase):
    type = "slotted"
    __slots__ = ("position", "length", "problems", "valid", "notes")

    def __init__(self):
        self.position, self.length, self.problems = 0, 0, [Problem("x", 0, "damage")]
        self.valid = True  # a slot of the subclass: its own verdict
        self.notes = [Problem("n", 0, "a note")]

    def to_json(self, enc):
        return {"type": self.type}

    def to_tree(self):
        return Node("slotted", 0, 0)


def test_defaults_are_the_none_values():
    u = _Plain()
    assert (u.entries, u.records_count, tuple(u.notes), u.summary_text) == (1, 0, (), None)
    assert all(getattr(u, n) is None for n in OPTIONAL_INT + OPTIONAL_METHODS)
    assert isinstance(u, Unit) and not isinstance(u, RawUnit)


def test_valid_defaults_to_no_problems_read_each_time():
    u = _Plain()
    assert u.valid is True
    u.problems.append(Problem("late", 0, "added while rendering"))
    assert u.valid is False
    u.valid = True  # an instance attribute takes precedence over the default
    assert u.valid is True


def test_a_slotted_subclass_keeps_its_slots_and_no_dict():
    u = _Slotted()
    assert not hasattr(u, "__dict__")
    assert u.valid is True and [n.code for n in u.notes] == ["n"]
    assert isinstance(u, Unit)


MIXINS = {"_Stream"}  # formats/common.py: the stream placement Unparsed and Note share, not a unit itself


def test_every_unit_class_declares_the_required_members():
    """Every UnitBase subclass in the package has ``type``, ``to_json`` and ``to_tree`` of its own
    (the base gives none of them), and the slotted ones stay without a ``__dict__``."""
    import importlib
    import pkgutil

    import wireinspect

    for m in pkgutil.walk_packages(wireinspect.__path__, "wireinspect."):
        if not m.name.startswith("wireinspect.spark") and not m.name.endswith("__main__"):
            importlib.import_module(m.name)
    todo, classes = [UnitBase], []
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("wireinspect.") and sub.__qualname__ not in MIXINS:
                classes.append(sub)
    names = {c.__qualname__ for c in classes}
    assert {"Batch", "Message", "Frame", "Unparsed", "Note", "SideFile", "Run", "CaptureSummary", "Blank",
            "Record", "CQUnit", "Exchange", "PartitionUnit", "EntryTable", "TextFile"} <= names, names
    for c in classes:
        assert callable(getattr(c, "to_json", None)) and callable(getattr(c, "to_tree", None)), c
        if "__slots__" in c.__dict__ and all("__slots__" in k.__dict__ for k in c.__mro__[:-1]):
            assert "__dict__" not in dir(c), c


# -- no probing ---------------------------------------------------------------------------------------------
PROBED = {"u", "unit", "units", "app", "item"}


@pytest.mark.parametrize("folder", ["ops", "render", "spark"])
def test_ops_render_and_spark_read_unit_members_directly(folder):
    """No ``getattr``/``hasattr`` on a unit (or the App) in ops/, render/ and spark/: the members are
    declared (formats/unit.py, cli.App)."""
    found = []
    for path in sorted((ROOT / "wireinspect" / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("getattr", "hasattr") and node.args and \
                    isinstance(node.args[0], ast.Name) and node.args[0].id in PROBED:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
