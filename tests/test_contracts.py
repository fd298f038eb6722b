"""The written contracts between the layers (issue 21, item 4): the options a format reads are the
typed :class:`~wireinspect.formats.options.Options` (never probed with ``getattr``), and a stream
protocol is a :class:`~wireinspect.streams.StreamProtocolInterface` whose optional members are
``None`` when absent (read directly, never probed)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from wireinspect.catalog import STREAM_PROTOCOLS, api_names
from wireinspect.formats.options import Options, options_or_default
from wireinspect.streams import ConversationDecoder, Conversation, StreamProtocolInterface

ROOT = Path(__file__).resolve().parent.parent
OPTIONS_NAMES = {"opts", "options", "o"}
PROTOCOL_NAMES = {"proto", "protocol", "p", "decoder", "dec"}


def _probes(names: set, folders) -> list:
    found = []
    for folder in folders:
        for path in sorted((ROOT / "wireinspect" / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                        node.func.id in ("getattr", "hasattr") and node.args and \
                        isinstance(node.args[0], ast.Name) and node.args[0].id in names:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_probes_the_options():
    assert _probes(OPTIONS_NAMES, ["."]) == []


def test_the_capture_inputs_read_protocol_members_directly():
    assert _probes(PROTOCOL_NAMES, ["inputs", "ops"]) == []


def test_options_are_typed_and_default_when_absent():
    fields = {f.name: f.type for f in dataclasses.fields(Options)}
    assert fields["max_batch"] == "int" and fields["deep"] == "bool" and fields["ports"] == "tuple"
    assert options_or_default(None) == Options()
    o = Options(deep=True)
    assert options_or_default(o) is o
    assert set(Options.FORMAT_OPTIONS.values()) <= set(fields)


@pytest.mark.parametrize("proto", STREAM_PROTOCOLS, ids=lambda p: p.id)
def test_every_stream_protocol_follows_the_interface(proto):
    assert isinstance(proto, StreamProtocolInterface)
    assert isinstance(proto.decoder(Conversation(0), Options()), ConversationDecoder)
    assert proto.decoder(Conversation(0), Options()).unanswered == 0
    for member in ("encode", "select", "api_names", "frame_name"):
        value = getattr(proto, member)  # declared on every protocol: None or callable
        assert value is None or callable(value), (proto.id, member)
    assert (proto.select is None) == (proto.api_names is None)  # --api is checked against what select reads
    assert proto.sniff(b"") in range(101) and proto.sniff(b"\xff" * 64) in range(101)


def test_api_names_come_from_the_protocols():
    names = api_names()
    assert set(names) == {p.id for p in STREAM_PROTOCOLS if p.select is not None} == {"kafka"}
    assert names["kafka"][0] == "Produce" and names["kafka"][1] == "Fetch"


# -- timestamps in ms: declared by the fields, asked by the renderers ---------------------------------------
# What render/safe.py listed by name before the fields declared it (issue 21, item 4): the declarations
# give the same set, so the tree, the hexdump, view and --iso-times show the same ISO times.
LISTED_BEFORE = frozenset({
    "timestamp", "baseTimestamp", "maxTimestamp", "deleteHorizonMs", "lastTimestamp", "Timestamp",
    "MaxTimestamp", "CommitTimestamp", "LogAppendTimeMs", "ExpireTimestamp", "IssueTimestamp",
    "ExpiryTimestamp", "MaxTimestampMs", "TransactionStartTimeMs", "LastTimestamp",
    "first_timestamp", "max_timestamp",
    "commitTimestamp", "expireTimestamp", "currentStateTimestamp", "WriteTimestamp", "EventTimestampMs",
    "TransactionStartTimestampMs", "TransactionLastUpdateTimestampMs", "ExpirationTimestamp",
    "CreateTimestamp", "AssignmentTimestamp", "LastContainedLogTimestamp",
})
# declared since: RocketMQ's store/checkpoint (formats/rocketmq/bookkeeping.py, issue 24)
DECLARED_SINCE = frozenset({"physicMsgTimestamp", "logicsMsgTimestamp", "indexMsgTimestamp",
                            # RocketMQ 5's batch consume queue and timer store (batchcq.py, timer.py)
                            "storeTime", "currWriteTime", "lastReadTimeMs"})


def test_the_renderers_ask_the_declarations_for_ms_timestamps():
    import wireinspect.formats.kafka.internal.image  # noqa: F401 (declares its JSON's lastTimestamp)
    import wireinspect.formats.kafka.sidetables  # noqa: F401
    from wireinspect.catalog import ms_fields
    from wireinspect.render.safe import field_iso, time_ms_fields

    ms_fields()  # every declaring module imported: the answer does not depend on the tests run before

    # deleteHorizonMs and ExpireTimestamp named no field anything prints (no spec, no JSON key has them)
    assert set(time_ms_fields()) == LISTED_BEFORE - {"deleteHorizonMs", "ExpireTimestamp"} | DECLARED_SINCE
    assert field_iso("first_timestamp", 1700000000080) == "2023-11-14T22:13:20.080Z"
    assert field_iso("bornTimestamp", 1700000000080) is None  # RocketMQ's: not declared ms (yet)


def test_an_int_declared_ms_joins_the_names():
    from wireinspect.layout import Int, ms_fields
    from wireinspect.render.safe import show_node_value

    name = "testOnlyStampMs"
    assert name not in ms_fields()
    Int(name, "q", ms=True)
    try:
        assert show_node_value(name, 1700000000080) == "1700000000080 (2023-11-14T22:13:20.080Z)"
        assert Int("testOnlyCount", "q").ms is False and "testOnlyCount" not in ms_fields()
    finally:
        ms_fields().discard(name)


def test_the_protocol_ms_fields_are_int64_fields_of_the_specs():
    import re

    from wireinspect.formats.kafka.protocol.specs_loader import MS_FIELDS, SPEC_DIR

    texts = "\n".join(p.read_text(encoding="utf-8") for p in Path(SPEC_DIR).rglob("*.json"))
    for name in MS_FIELDS:
        assert re.search(rf'"name":\s*"{name}",[^{{}}]*"type":\s*"int64"', texts), name
