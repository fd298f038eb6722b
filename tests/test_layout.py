"""The one layout compiler (``wireinspect.layout.compile_fixed``) agrees with ``Layout.decode`` for
every Layout the formats declare: the hot decoders' structs (Kafka's batch header, legacy header and
sidecar entries, Redpanda's header, RocketMQ's store files, Jafka's size) are compiled by it, so
they read what the declaration says."""

from __future__ import annotations

import importlib
import pkgutil
import random

import pytest

import wireinspect.formats
from wireinspect.layout import (VARINT, Array, Int, Layout, Struct, compile_fixed, fixed_fields,
                                packable)


def _declared() -> tuple:
    """``({"module.NAME": Layout}, names)``: every module-level Layout of ``wireinspect.formats``
    and the Layouts nested in them (Array items, Structs), each once (under the first name met);
    ``names`` every name each is known by (a module that imports a Layout names it too)."""
    found, seen, names = {}, set(), set()

    def add(name, layout):
        names.add(name)
        if id(layout) in seen:
            return
        seen.add(id(layout))
        found[name] = layout
        for f in layout.fields:
            if isinstance(f, Array) and f.item is not None:
                add(f"{name}.{f.name}[]", f.item)
            elif isinstance(f, Struct) and f.layout is not None:
                add(f"{name}.{f.name}", f.layout)

    for info in pkgutil.walk_packages(wireinspect.formats.__path__, "wireinspect.formats."):
        mod = importlib.import_module(info.name)
        for attr, value in sorted(vars(mod).items()):
            if isinstance(value, Layout):
                add(f"{info.name}.{attr}", value)
    return found, names


LAYOUTS, NAMES = _declared()


def _runs(layout: Layout) -> list:
    """Every maximal run of consecutive packable fields of ``layout`` (``when`` ignored: a Plan
    compiles the fields present under its assumptions), split where the byte order changes."""
    out, run = [], []
    for f in layout.fields:
        if packable(f) and not (run and f.width > 1 and
                                {g.code[0] == "<" for g in run if g.width > 1} - {f.code[0] == "<"}):
            run.append(f)
            continue
        if run:
            out.append(tuple(run))
        run = [f] if packable(f) else []
    if run:
        out.append(tuple(run))
    return out


def _buffers(size: int, seed: str):
    rnd = random.Random(seed)
    yield bytes(size)
    yield b"\xff" * size
    for _ in range(20):
        yield rnd.randbytes(size)


def test_the_formats_layouts_are_found():
    """The collection sees the layouts whose structs the decoders use (else the tests below would
    pass on nothing)."""
    for expected in ("wireinspect.formats.kafka.records.BATCH", "wireinspect.formats.kafka.legacy.LEGACY",
                     "wireinspect.formats.kafka.sidetables.SNAPSHOT_HEADER",
                     "wireinspect.formats.kafka.sidetables.PRODUCER_ENTRY",
                     "wireinspect.formats.redpanda.header.HEADER", "wireinspect.formats.jafka.messages.MESSAGE",
                     "wireinspect.formats.rocketmq.store.CQ_UNIT_LAYOUT",
                     "wireinspect.formats.rocketmq.store.INDEX_ENTRY_LAYOUT"):
        assert expected in NAMES
    assert len(LAYOUTS) > 40


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_leading_fields_compile_as_decode_reads_them(name):
    """``compile_fixed(fixed_fields(L))`` unpacks the values ``L.decode`` reads, at the offsets of
    its spans (the unit starting at byte 3 of the buffer, reported at base 1000)."""
    layout = LAYOUTS[name]
    fields = fixed_fields(layout)
    if not fields:
        pytest.skip("starts with a variable-width field")
    run = compile_fixed(fields)
    assert run.names == tuple(f.name for f in fields)
    assert run.size == sum(f.width for f in fields)
    for body in _buffers(run.size + 64, name):
        buf = b"abc" + body
        d = layout.decode(buf, 3, len(buf), base=1000)
        assert run.struct.unpack_from(buf, 3) == tuple(d.values[f.name] for f in fields)
        assert tuple((n, 1000 + 3 + off, size) for n, off, size in run.spans) == \
            tuple((f.name, *d.spans[f.name]) for f in fields)
    if len(fields) == len(layout.fields):
        assert layout.decode(bytes(run.size)).end == run.size


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_run_compiles_as_decode_reads_it(name):
    """Every run of fixed-width integer fields anywhere in a declared layout (what a Plan compiles)
    unpacks as ``Layout.decode`` of the same fields reads it."""
    runs = _runs(LAYOUTS[name])
    if not runs:
        pytest.skip("no fixed-width integer fields")
    for k, fields in enumerate(runs):
        run = compile_fixed(fields)
        # numbered: alternatives under different ``when`` may share a name (RocketMQ's hosts)
        sub = Layout(f"{name}/{k}", tuple(Int(str(i), f.code) for i, f in enumerate(fields)))
        for buf in _buffers(run.size, f"{name}/{k}"):
            d = sub.decode(buf)
            assert d.complete and d.end == run.size
            assert run.struct.unpack(buf) == tuple(d.values[str(i)] for i in range(len(fields)))
            assert tuple(off for _, off, _ in run.spans) == tuple(d.spans[str(i)][0] for i in range(len(fields)))


def test_byte_order_comes_from_the_fields():
    """Big-endian without a prefix, little with ``<``; single-byte fields fit either; ``order``
    overrides (Redpanda's Kafka CRC form)."""
    assert compile_fixed((Int("a", "i"), Int("b", "B"))).struct.format == ">iB"
    assert compile_fixed((Int("a", "b"), Int("b", "<q"))).struct.format == "<bq"
    assert compile_fixed((Int("a", "<h"), Int("b", "<I")), order=">").struct.format == ">hI"
    assert compile_fixed(()).size == 0


@pytest.mark.parametrize("fields, what", [
    ((Int("a", "i"), Int("b", "<i")), "b: byte order"),
    ((Int("a", "i"), Int("v", VARINT)), "v: not a fixed-width"),
])
def test_what_one_struct_cannot_read_is_refused(fields, what):
    with pytest.raises(ValueError, match=what):
        compile_fixed(fields)


def test_a_field_with_its_own_reader_is_not_compiled():
    """RocketMQ's 3-byte headerLength reads itself: not packable, and fixed_fields stops before it."""
    from wireinspect.formats.rocketmq.remoting import FRAME

    assert not packable(FRAME.field("headerLength"))
    assert [f.name for f in fixed_fields(FRAME)] == ["length", "serializeType"]
    with pytest.raises(ValueError, match="headerLength"):
        compile_fixed(FRAME.fields[:3])
