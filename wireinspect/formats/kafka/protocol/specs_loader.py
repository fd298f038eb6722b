"""Kafka's JSON message definitions, loaded and compiled into per-version decoding plans.

The definitions are Apache Kafka's ``clients/src/main/resources/common/message/*.json`` (Apache-2.0,
see ``specs/NOTICE``, ``specs/LICENSE``, ``specs/SOURCE.txt``): the newest set in ``specs/`` and the
3.9.0 set in ``specs/apache-kafka-3.9.0/`` for the versions Kafka 4.0 removed. They are kept
byte-for-byte; ``//`` comment lines are stripped when loading. For ``(apiKey, version)`` the newest
spec is used when the version is in its ``validVersions``, else the 3.9.0 spec when it is in that
range (docs/protocol.md, shared/reference/kafka-protocol.md section 5).

The record definitions of Kafka's internal topics (``specs/internal/<folder>/*.json``: the
coordinators' ``coordinator-key``/``coordinator-value`` records, KRaft ``metadata`` records, the
remote-log-metadata records, ``removed/`` for the types Kafka deleted, and ``kafka-4.0/``: the values
Kafka 4.0.0 wrote in a layout trunk changed since) are the same JSON read by
the same generator in Kafka; :meth:`SpecSet.internal` loads them on first use, by folder, and
:func:`plan_for` compiles them like any other spec (see :mod:`wireinspect.formats.kafka.internal`).

Semantics follow Kafka's generator (``MessageSpec``/``FieldSpec``/``MessageDataGenerator``): a field
is present in version v when v is in ``versions`` (default: ``taggedVersions``); it is tagged in v
when v is in ``taggedVersions``; nullable when v is in ``nullableVersions``; a version is flexible
when it is in the spec's ``flexibleVersions``, and then strings, bytes, records and arrays take the
compact encodings unless the field overrides ``flexibleVersions`` (``RequestHeader.ClientId``).
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache

from wireinspect.layout import declare_ms

SPEC_DIR = os.path.join(os.path.dirname(__file__), "specs")
OLD_DIR = os.path.join(SPEC_DIR, "apache-kafka-3.9.0")
INTERNAL_DIR = os.path.join(SPEC_DIR, "internal")
NEWEST, OLD = "newest", "3.9.0"

# The int64 fields of the specs whose values are milliseconds since the epoch (their "about" says so;
# the specs give no unit): the renderers show their ISO-8601 time (layout.ms_fields).
MS_FIELDS = frozenset({
    # the wire protocol (ProduceResponse, ListOffsets, OffsetCommit v1, DescribeProducers, ...)
    "Timestamp", "MaxTimestamp", "CommitTimestamp", "LogAppendTimeMs", "IssueTimestamp",
    "ExpiryTimestamp", "MaxTimestampMs", "TransactionStartTimeMs", "LastTimestamp",
    # the internal topics' records and KRaft's snapshot header (specs/internal/)
    "commitTimestamp", "expireTimestamp", "currentStateTimestamp", "WriteTimestamp", "EventTimestampMs",
    "TransactionStartTimestampMs", "TransactionLastUpdateTimestampMs", "ExpirationTimestamp",
    "CreateTimestamp", "AssignmentTimestamp", "LastContainedLogTimestamp",
})
declare_ms(*MS_FIELDS)

# Type codes of compiled fields.
(T_BOOL, T_I8, T_I16, T_U16, T_I32, T_U32, T_I64, T_F64, T_UUID, T_STR, T_BYTES, T_RECORDS, T_STRUCT,
 T_ARRAY) = range(14)
PRIMITIVES = {"bool": T_BOOL, "int8": T_I8, "int16": T_I16, "uint16": T_U16, "int32": T_I32, "uint32": T_U32,
              "int64": T_I64, "float64": T_F64, "uuid": T_UUID, "string": T_STR, "bytes": T_BYTES,
              "records": T_RECORDS}
TYPE_NAMES = {v: k for k, v in PRIMITIVES.items()} | {T_STRUCT: "struct", T_ARRAY: "array"}

_COMMENT = re.compile(r"^\s*//.*$", re.M)
INF = 1 << 30


def parse_versions(text) -> tuple[int, int] | None:
    """``"none"`` -> None, ``"3"`` -> (3, 3), ``"3+"`` -> (3, INF), ``"1-4"`` -> (1, 4)."""
    if text is None:
        return None
    s = str(text).strip()
    if s == "none" or not s:
        return None
    if s.endswith("+"):
        return int(s[:-1]), INF
    if "-" in s:
        a, b = s.split("-", 1)
        return int(a), int(b)
    return int(s), int(s)


def in_range(v: int, r) -> bool:
    return r is not None and r[0] <= v <= r[1]


def load_json(path: str) -> dict:
    """One spec file, ``//`` comment lines removed (every comment in Kafka's JSON is on its own line)."""
    with open(path, encoding="utf-8") as f:
        return json.loads(_COMMENT.sub("", f.read()))


class Spec:
    """One message definition: ``name``, ``kind`` (request/response/header/data), ``api_key``,
    ``valid`` and ``flexible`` version ranges, ``fields``, ``common`` structs by name, ``origin``
    (``"newest"`` or ``"3.9.0"``), ``unstable`` (the top version is ``latestVersionUnstable``)."""

    __slots__ = ("name", "kind", "api_key", "valid", "flexible", "fields", "common", "origin", "unstable")

    def __init__(self, d: dict, origin: str):
        self.name = d["name"]
        self.kind = d["type"]
        self.api_key = d.get("apiKey")
        self.valid = parse_versions(d.get("validVersions"))
        self.flexible = parse_versions(d.get("flexibleVersions"))
        self.fields = d.get("fields", [])
        self.common = {c["name"]: c for c in d.get("commonStructs", [])}
        self.origin = origin
        self.unstable = bool(d.get("latestVersionUnstable"))


class SpecSet:
    """Both definition sets, indexed by ``(apiKey, kind)`` and header name."""

    def __init__(self, spec_dir: str = SPEC_DIR, old_dir: str = OLD_DIR, internal_dir: str = INTERNAL_DIR):
        self.internal_dir = internal_dir
        self._internal: dict | None = None
        self.newest: dict = {}
        self.old: dict = {}
        self.headers: dict = {}
        self.data: dict = {}  # "data" specs by name (ConsumerProtocolSubscription...)
        self.names: dict[int, str] = {}
        for directory, origin, table in ((old_dir, OLD, self.old), (spec_dir, NEWEST, self.newest)):
            if not os.path.isdir(directory):
                continue
            for fn in sorted(os.listdir(directory)):
                if not fn.endswith(".json"):
                    continue
                spec = Spec(load_json(os.path.join(directory, fn)), origin)
                if spec.kind in ("request", "response"):
                    table[(spec.api_key, spec.kind)] = spec
                    if spec.kind == "request":
                        self.names[spec.api_key] = spec.name[:-len("Request")]
                elif spec.kind == "header":
                    self.headers.setdefault(spec.name, {})[origin] = spec
                elif spec.kind == "data":
                    self.data[spec.name] = spec  # newest wins (loaded last)

    def internal(self) -> dict[str, list[Spec]]:
        """The internal-topic record definitions, ``{folder: [Spec, ...]}`` (``"group-coordinator"``,
        ``"metadata"``, ``"removed"``...), loaded on first use; each spec's ``origin`` is
        ``"internal/<folder>"`` and its ``kind`` the spec's ``type`` (``coordinator-key``,
        ``coordinator-value``, ``metadata``, ``data``)."""
        if self._internal is None:
            found: dict[str, list[Spec]] = {}
            if os.path.isdir(self.internal_dir):
                for folder in sorted(os.listdir(self.internal_dir)):
                    d = os.path.join(self.internal_dir, folder)
                    if not os.path.isdir(d):
                        continue
                    found[folder] = [Spec(load_json(os.path.join(d, fn)), f"internal/{folder}")
                                     for fn in sorted(os.listdir(d)) if fn.endswith(".json")]
            self._internal = found
        return self._internal

    def spec(self, api_key: int, version: int, kind: str) -> Spec | None:
        """The spec that defines ``version`` of ``api_key`` (kind ``"request"``/``"response"``)."""
        s = self.newest.get((api_key, kind))
        if s is not None and in_range(version, s.valid):
            return s
        s = self.old.get((api_key, kind))
        if s is not None and in_range(version, s.valid):
            return s
        return None

    def header(self, name: str, version: int) -> Spec | None:
        by_origin = self.headers.get(name, {})
        for origin in (NEWEST, OLD):
            s = by_origin.get(origin)
            if s is not None and in_range(version, s.valid):
                return s
        return None

    def versions(self, api_key: int) -> tuple[int, int] | None:
        """Lowest and highest version any set defines for ``api_key`` (None when unknown)."""
        lo, hi = INF, -1
        for table in (self.newest, self.old):
            s = table.get((api_key, "request"))
            if s is not None and s.valid:
                lo, hi = min(lo, s.valid[0]), max(hi, s.valid[1])
        return None if hi < 0 else (lo, hi)

    def is_flexible(self, api_key: int, version: int) -> bool:
        s = self.spec(api_key, version, "request")
        return s is not None and in_range(version, s.flexible)

    def api_name(self, api_key: int) -> str | None:
        return self.names.get(api_key)


@lru_cache(maxsize=1)
def specs() -> SpecSet:
    return SpecSet()


class Op:
    """One compiled field: ``name``, ``code`` (type code), ``nullable``, ``compact`` (flexible
    encoding), ``sub`` (a :class:`Plan` for structs and arrays of structs), ``elem`` (element type
    code of an array), ``tag`` (tag number when tagged in this version, else None), ``about``."""

    __slots__ = ("name", "code", "nullable", "compact", "sub", "elem", "tag", "about")

    def __init__(self, name, code, nullable, compact, sub, elem, tag, about):
        self.name, self.code, self.nullable, self.compact = name, code, nullable, compact
        self.sub, self.elem, self.tag, self.about = sub, elem, tag, about


class Plan:
    """A struct compiled for one version: positional ``fields`` (tuple of :class:`Op`), ``tagged``
    (dict tag -> Op) and ``flexible`` (whether a tagged-field section follows the fields)."""

    __slots__ = ("name", "fields", "tagged", "flexible")

    def __init__(self, name, fields, tagged, flexible):
        self.name, self.fields, self.tagged, self.flexible = name, fields, tagged, flexible


def _struct_fields(fdef: dict, common: dict):
    if "fields" in fdef:
        return fdef["fields"]
    t = fdef["type"].removeprefix("[]")
    c = common.get(t)
    return c["fields"] if c else None


def compile_fields(name: str, fields: list, version: int, flexible: bool, common: dict) -> Plan:
    fixed, tagged = [], {}
    for f in fields:
        tv = parse_versions(f.get("taggedVersions"))
        vr = parse_versions(f.get("versions")) if "versions" in f else tv
        if not in_range(version, vr):
            continue
        t = f["type"]
        nullable = in_range(version, parse_versions(f.get("nullableVersions")))
        compact = flexible
        if "flexibleVersions" in f:
            compact = in_range(version, parse_versions(f["flexibleVersions"]))
        sub = None
        elem = None
        if t.startswith("[]"):
            code = T_ARRAY
            et = t[2:]
            elem = PRIMITIVES.get(et)
            if elem is None:
                elem = T_STRUCT
                sf = _struct_fields(f, common)
                sub = compile_fields(et, sf or [], version, flexible, common)
        elif t in PRIMITIVES:
            code = PRIMITIVES[t]
        else:
            code = T_STRUCT
            sf = _struct_fields(f, common)
            sub = compile_fields(t, sf or [], version, flexible, common)
        tag = None
        if flexible and in_range(version, tv) and "tag" in f:
            tag = int(f["tag"])  # 3.9.0 BrokerHeartbeatRequest writes the tag as the string "0"
        op = Op(f["name"], code, nullable, compact, sub, elem, tag, f.get("about"))
        if tag is None:
            fixed.append(op)
        else:
            tagged[tag] = op
    return Plan(name, tuple(fixed), tagged, flexible)


_PLANS: dict = {}


def plan_for(spec: Spec, version: int) -> Plan:
    """The compiled plan of ``spec`` at ``version`` (cached)."""
    key = (spec.origin, spec.name, version)
    p = _PLANS.get(key)
    if p is None:
        p = compile_fields(spec.name, spec.fields, version, in_range(version, spec.flexible), spec.common)
        _PLANS[key] = p
    return p


API_VERSIONS = 18
CONTROLLED_SHUTDOWN = 7


def request_header_version(api_key: int, version: int) -> int:
    """The RequestHeader version of a request (0 for ControlledShutdown v0, 2 when flexible, else 1)."""
    if api_key == CONTROLLED_SHUTDOWN and version == 0:
        return 0
    return 2 if specs().is_flexible(api_key, version) else 1


def response_header_version(api_key: int, version: int) -> int:
    """The ResponseHeader version of a response (0 for ApiVersions, 1 when flexible, else 0)."""
    if api_key == API_VERSIONS:
        return 0
    return 1 if specs().is_flexible(api_key, version) else 0
