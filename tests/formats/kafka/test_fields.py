"""The hot decoders read through a Layout compiled by ``fields.Plan``: it must agree with
``Layout.decode`` of the same declaration, and the decoders must give the same units with and
without it (the fallback is ``Layout.decode`` itself)."""

from __future__ import annotations

import base64
import struct

import pytest
from hypothesis import given, settings, strategies as st

from tests.conftest import SAMPLES
from wireinspect.codec.bytesfmt import bytes_encoder
from wireinspect.formats.jafka import messages as jafka
from wireinspect.formats.kafka import legacy
from wireinspect.formats.kafka.fields import Plan
from wireinspect.layout import Bytes, Int, Layout, Length

ENC = bytes_encoder("base64")
PLANS = [(legacy.LEGACY, {"magic": 0}), (legacy.LEGACY, {"magic": 1}), (jafka.MESSAGE, {"magic": 0}),
         (jafka.MESSAGE, {"magic": 1})]


def agrees(layout: Layout, assume: dict, buf: bytes, pos: int, end: int) -> None:
    """``Plan.read`` gives exactly what ``Layout.decode`` reads, or None where the declaration does
    not decode the bytes as a whole unit under ``assume``."""
    plan = Plan(layout, assume)
    got = plan.read(buf, pos, end)
    d = layout.decode(buf, pos, end)
    fits = d.complete and not d.problems and all(d.values.get(k) == v for k, v in assume.items())
    if got is None:
        assert not fits or any(layout.field(n).when is not None and not layout.field(n).present(d.values)
                               for n in plan.names)
        return
    values, stop = got
    assert fits and stop == d.end
    for name, v in zip(plan.names, values):
        f = layout.field(name)
        if isinstance(f, Int):
            assert v == d.values[name], name
        else:
            assert v == d.spans[name][0], name
    for name, off in plan.fixed.items():
        assert d.spans[name][0] == pos + off, name


def _entries(path, step):
    data = path.read_bytes()
    out, p = [], 0
    while p < len(data):
        n = step(data, p)
        if n <= 0:
            break
        out.append((data, p, min(p + n, len(data))))
        p += n
    return out


def legacy_entries():
    out = []
    for path in sorted(SAMPLES.glob("v[01]-*.log")):
        for data, p, e in _entries(path, lambda d, p: 12 + struct.unpack_from(">i", d, p + 8)[0]):
            out.append(pytest.param(data, p, e, id=f"{path.name}@{p}"))
            m = legacy.parse_message(data, p, 0)
            for im in m.inner or ():  # inner messages: the decompressed set
                out.append(pytest.param(im.data, im.start, im.start + im.length, id=f"{path.name}@{p}+{im.start}"))
    return out


@pytest.mark.parametrize("data,pos,end", legacy_entries())
def test_legacy_plan_agrees_with_layout_on_samples(data, pos, end):
    for magic in (0, 1):
        agrees(legacy.LEGACY, {"magic": magic}, data, pos, end)


def test_jafka_plan_agrees_with_layout_on_sample():
    path = SAMPLES / "jafka" / "00000000000000000000.kafka"
    entries = _entries(path, lambda d, p: 4 + struct.unpack_from(">i", d, p)[0])
    assert len(entries) > 5
    for data, p, e in entries:
        for magic in (0, 1):
            agrees(jafka.MESSAGE, {"magic": magic}, data, p, e)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PLANS), st.binary(max_size=64), st.integers(0, 8))
def test_plan_agrees_with_layout_on_any_bytes(plan, data, cut):
    layout, assume = plan
    agrees(layout, assume, data, 0, max(0, len(data) - cut))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 1), st.one_of(st.none(), st.binary(max_size=20)), st.one_of(st.none(), st.binary(max_size=40)),
       st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-128, 127))
def test_legacy_fast_and_layout_paths_give_the_same_message(magic, key, value, offset, ts, attributes):
    """A generated entry (valid or with a wrong CRC) parses the same from the reader's table and with
    LEGACY.decode (the reader made to say the fields do not fit)."""
    b64 = lambda b: None if b is None else base64.b64encode(b).decode()  # noqa: E731
    values = {"offset": offset, "magic": magic, "attributes": attributes & 0x78, "key": b64(key), "value": b64(value)}
    if magic == 1:
        values["timestamp"] = ts
    from wireinspect.layout import EncodeContext

    data = legacy.LEGACY.encode(values, EncodeContext())
    for buf in (data, data[:12] + b"\0\0\0\0" + data[16:], data + data):
        fast = legacy.parse_message(buf, 0, 0)
        saved = legacy.read_messages
        legacy.read_messages = _fields_never_fit
        try:
            slow = legacy.parse_message(buf, 0, 0)
        finally:
            legacy.read_messages = saved
        assert fast.to_json(ENC) == slow.to_json(ENC)
        assert fast.to_tree() == slow.to_tree()
        assert not slow.fit


def _fields_never_fit(buf, pos=0, stop=None, max_rows=1 << 62):
    t, end = _READ(buf, pos, stop, max_rows)
    for i in range(0, len(t), legacy.STRIDE):
        if not t[i + legacy.STATUS] & ~(legacy.CRC_BAD | legacy.FIELDS_BAD):
            t[i + legacy.STATUS] |= legacy.FIELDS_BAD
    return t, end


_READ = legacy.read_messages


class _Never:
    def read(self, buf, pos, end):
        return None


@pytest.mark.parametrize("path", [SAMPLES / "jafka" / "00000000000000000000.kafka"], ids=lambda p: p.name)
def test_jafka_fast_and_layout_paths_give_the_same_units(path, monkeypatch):
    data = bytearray(path.read_bytes())
    damaged = bytes(data[:40]) + bytes([data[40] ^ 1]) + bytes(data[41:-5])
    for buf in (bytes(data), damaged):
        fast = jafka.parse_message_set(buf, 0, len(buf), 0, "kafka07", offset=0)
        with monkeypatch.context() as m:
            m.setattr(jafka, "_PLANS", {k: _Never() for k in jafka._PLANS})
            slow = jafka.parse_message_set(buf, 0, len(buf), 0, "kafka07", offset=0)
        assert [x.to_json(ENC) for x in fast] == [x.to_json(ENC) for x in slow]
        assert [x.to_tree() for x in fast] == [x.to_tree() for x in slow]


def test_plan_compiles_runs_and_refuses_what_it_cannot():
    layout = Layout("t", (Int("a", "h"), Int("b", "<I"), Length("n", "i", of="s"), Bytes("s", size="n", nullable=True),
                          Int("c", "B")))
    plan = Plan(layout)
    buf = struct.pack(">h", 5) + struct.pack("<I", 7) + struct.pack(">i", 2) + b"xy" + b"\x09"
    assert plan.read(buf, 0, len(buf)) == ([5, 7, 2, 10, 9], len(buf))
    assert plan.fixed == {"a": 0, "b": 2, "n": 6, "s": 10}
    null = struct.pack(">h", 5) + struct.pack("<I", 7) + struct.pack(">i", -1) + b"\x09"
    assert plan.read(null, 0, len(null)) == ([5, 7, -1, 10, 9], len(null))
    bad = struct.pack(">h", 5) + struct.pack("<I", 7) + struct.pack(">i", -2) + b"\x09"
    assert plan.read(bad, 0, len(bad)) is None and plan.read(buf, 0, len(buf) - 1) is None
    with pytest.raises(ValueError):
        Plan(Layout("v", (Int("x", "varint"),)))
