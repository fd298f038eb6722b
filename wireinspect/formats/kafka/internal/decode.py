"""The framings around the internal records' structs, decoded with the protocol walker.

Framings (shared/reference/internal-topics-redpanda-registry.md section 2, read from Kafka):

* coordinator topics (``CoordinatorRecordSerde``, ``MessageUtil.toCoordinatorTypePrefixedBytes``):
  key = ``int16 recordType`` (the spec's ``apiKey``) + the key struct at version 0 (keys are not
  flexible); value = ``int16 version`` + the value struct at that version (flexible from the spec's
  ``flexibleVersions``); a null value is a tombstone.
* metadata topics (``AbstractApiMessageSerde``): null key; value = ``uvarint frameVersion`` (must be
  1), ``uvarint apiKey``, ``uvarint version``, the struct; trailing bytes are an error.
* KRaft control records (``ControlRecordUtils``): the key is ``ControlRecordType`` (control.py); the
  value is the struct of its type at version 0, with no version prefix.

:class:`Decoded` holds one decoded key or value (walker entries with absolute positions, framing
fields, problems); :meth:`Decoded.to_json` and :meth:`Decoded.add_nodes` project it. Damage is data:
every function here returns what it decoded and ``internal_*`` problems, never raises on bytes.

The consumer protocol inside a GroupMetadataValue's members (:func:`decode_consumer`,
:func:`expand_members`) is decoded here too, with the same structs.
"""

from __future__ import annotations

import struct

from wireinspect.formats.kafka.internal.kinds import FRAMING
from wireinspect.formats.kafka.internal.spectable import (CONTROL_SPECS, CONTROL_VERSION, TRANSACTION_STATES,
                                                         control_spec, table)
from wireinspect.formats.kafka.protocol.specs_loader import plan_for, specs
from wireinspect.formats.kafka.protocol.walker import (K_ARRAY, K_STRUCT, Ctx, Short, fields_json, fields_tree,
                                                        read_uvarint, walk)
from wireinspect.model import Node, Problem

_I16 = struct.Struct(">h").unpack_from
_CUT = frozenset({"field_truncated", "bad_length", "bad_count"})  # the walker's "the bytes end early"


class Decoded:
    """One decoded key or value. ``type``: the spec's name (``None`` when unknown); ``record_type``
    (coordinator keys), ``frame_version``/``api_key`` (metadata values) and ``version``: the framing's
    values; ``schema``: the alternate schema set the struct was read with (``None``: the trunk specs);
    ``entries``: the walker's entries of the struct (``None`` when it was not read);
    ``prefix``: the framing fields ``(name, absolute position, length, value)``; ``problems``:
    absolute positions (the decompressed space of a compressed batch); ``expansions``: the
    consumer-protocol bytes decoded inside it, ``(member index, field name, entry, Decoded)``."""

    __slots__ = ("type", "record_type", "frame_version", "api_key", "version", "schema", "entries", "prefix",
                 "problems", "expansions")

    def __init__(self):
        self.type = self.record_type = self.frame_version = self.api_key = self.version = None
        self.schema = None  # the alternate schema set it was read with (registry.ALTERNATES), None: trunk's
        self.entries = None
        self.prefix: list = []
        self.problems: list = []
        self.expansions: list = []

    def all_problems(self) -> list:
        """Its problems and those of its expansions."""
        out = list(self.problems)
        for *_, dec in self.expansions:
            out.extend(dec.problems)
        return out

    def data_json(self, enc) -> dict | None:
        """The struct's fields as ``fields_json`` writes them, plus ``TransactionStatusName`` beside a
        TransactionLogValue's ``TransactionStatus`` and ``<Field>Decoded`` beside expanded bytes."""
        if self.entries is None:
            return None
        data = fields_json(self.entries, enc)
        if self.type == "TransactionLogValue" and isinstance(data.get("TransactionStatus"), int):
            data["TransactionStatusName"] = state_name(data["TransactionStatus"])
        for i, name, _, dec in self.expansions:
            members = data.get("members")
            if isinstance(members, list) and i < len(members) and isinstance(members[i], dict):
                members[i][expansion_key(name)] = dec.to_json(enc)
        return data

    def to_json(self, enc) -> dict:
        """``{"type", ["recordType"], ["frameVersion", "apiKey"], "version", ["schema"], "data", ["problems"]}``
        (docs/json.md); ``enc`` turns bytes into JSON strings."""
        d = {"type": self.type}
        if self.record_type is not None:
            d["recordType"] = self.record_type
        if self.frame_version is not None:
            d["frameVersion"] = self.frame_version
            d["apiKey"] = self.api_key
        d["version"] = self.version
        if self.schema is not None:
            d["schema"] = self.schema
        d["data"] = self.data_json(enc)
        if self.problems:
            d["problems"] = [p.to_dict() for p in self.problems]
        return d

    def add_nodes(self, node: Node) -> None:
        """The framing fields and every decoded field as children of ``node`` (the record's key or
        value node), each at its absolute position; problems on ``node``."""
        for name, pos, length, value in self.prefix:
            shown = None
            if name in ("recordType", "apiKey") and self.type:
                shown = f"{value} ({self.type})"
            node.add(name, pos, length, value, display=shown)
        if self.entries is not None:
            fields_tree(node, self.entries)
            if self.type == "TransactionLogValue":
                for c in node.children:
                    if c.name == "TransactionStatus" and isinstance(c.value, int):
                        c.display = f"{c.value} ({state_name(c.value)})"
        for _, name, f, dec in self.expansions:
            target = _find(node, name, f.pos)
            if target is not None:
                dec.add_nodes(target)
        node.problems.extend(self.problems)
        if self.type and not node.display:
            node.display = self.type if self.version is None else f"{self.type} v{self.version}"
            if self.schema is not None:
                node.display += f" ({self.schema} schema)"


def _find(node: Node, name: str, pos: int) -> Node | None:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.name == name and n.position == pos:
            return n
        stack.extend(n.children)
    return None


def state_name(status: int) -> str:
    """A TransactionStatus as Kafka's TransactionState name (``Unknown(n)`` for other values)."""
    return TRANSACTION_STATES.get(status, f"Unknown({status})")


def expansion_key(field: str) -> str:
    """``subscription`` -> ``subscriptionDecoded``: the JSON key of an expanded bytes field (as
    ``key`` -> ``keyDecoded``)."""
    return field + "Decoded"


def read_struct(d: Decoded, spec, version: int, buf, p: int, end: int, base: int, trailing_ok: bool = False) -> int:
    """Walk ``spec`` at ``version`` over ``buf[p:end]`` (absolute ``base + p``) into ``d``: entries,
    the walker's problems (a walk cut short: ``internal_truncated``), ``internal_trailing_bytes``
    unless ``trailing_ok``. Returns where the struct ended (``end`` when cut short)."""
    d.type = spec.name
    d.version = version
    entries, q, probs = walk(buf, p, end, base, plan_for(spec, version), Ctx(records=False))
    d.entries = entries
    for i, pr in enumerate(probs):
        if q is None and i == len(probs) - 1 and pr.code in _CUT:
            pr = Problem("internal_truncated", pr.position, f"{spec.name} v{version} ends early: {pr.message}",
                         pr.expected, pr.actual)
        d.problems.append(pr)
    if q is None:
        return end
    if q < end and not trailing_ok:
        d.problems.append(Problem("internal_trailing_bytes", base + q, f"{end - q} bytes follow the end of "
                                  f"{spec.name} v{version}", actual=end - q))
    return q


def spec_at(d: Decoded, by_key: dict, key: int, version: int, at: int, what: str):
    """The spec of ``key`` in ``by_key`` if it defines ``version``; else ``None``, with an
    ``internal_unknown_type`` or ``internal_unknown_version`` problem at ``at`` in ``d``."""
    spec = by_key.get(key)
    if spec is None:
        d.problems.append(Problem("internal_unknown_type", at, f"no {what} {key} is defined (known: "
                                  f"{', '.join(map(str, sorted(by_key)))})", actual=key))
        return None
    return spec if known_version(d, spec, version, at) else None


def known_version(d: Decoded, spec, version: int, at: int) -> bool:
    """Whether ``spec`` defines ``version``; if not, ``d`` gets the type and an
    ``internal_unknown_version`` problem at absolute position ``at``."""
    lo, hi = spec.valid
    if lo <= version <= hi:
        return True
    d.type = spec.name
    d.problems.append(Problem("internal_unknown_version", at, f"{spec.name} has no version {version} (known: "
                              f"{lo}-{hi})", expected=[lo, hi], actual=version))
    return False


def _int16(d: Decoded, name: str, buf, p: int, n: int, base: int, what: str) -> int | None:
    if n < 2:
        d.problems.append(Problem("internal_truncated", base + p, f"{what}: {max(n, 0)} bytes, too few for its "
                                  f"int16 {name}", expected=2, actual=max(n, 0)))
        return None
    v = _I16(buf, p)[0]
    d.prefix.append((name, base + p, 2, v))
    return v


def decode_coordinator_key(kind: str, buf, p: int, n: int, base: int) -> Decoded:
    """A coordinator record's key (``n`` bytes at ``buf[p]``, -1 = null): ``int16 recordType``, then
    the key struct of that type at version 0."""
    d = Decoded()
    if n < 0:
        d.problems.append(Problem("internal_missing_key", base + p, "a coordinator record needs a key (int16 "
                                  "record type, key struct); this one is null"))
        return d
    rt = _int16(d, "recordType", buf, p, n, base, "key")
    if rt is None:
        return d
    d.record_type = rt
    d.version = 0
    spec = spec_at(d, table(kind).keys, rt, 0, base + p, f"{kind} key of record type")
    if spec is None:
        return d
    read_struct(d, spec, 0, buf, p + 2, p + n, base)
    return d


def decode_coordinator_value(kind: str, record_type: int | None, buf, p: int, n: int, base: int) -> Decoded | None:
    """A coordinator record's value (``None`` for a tombstone, ``n`` -1): ``int16 version``, then the
    value struct of ``record_type`` (from the key; ``None`` when the key did not give a known type)."""
    if n < 0:
        return None
    d = Decoded()
    v = _int16(d, "version", buf, p, n, base, "value")
    if v is None:
        return d
    d.version = v
    if record_type is None:
        return d  # the key's problem says why
    spec = spec_at(d, table(kind).values, record_type, v, base + p, f"{kind} value of record type")
    if spec is None:
        return d
    read_struct(d, spec, v, buf, p + 2, p + n, base)
    if d.problems:
        d = read_alternate(kind, record_type, d, buf, p, n, base)
    if spec.name == "GroupMetadataValue":
        expand_members(d, buf, base)
    return d


def read_alternate(kind: str, record_type: int, d: Decoded, buf, p: int, n: int, base: int) -> Decoded:
    """A value the trunk spec could not read (``d``: its problems) read with an alternate schema of
    its record type and version (registry.ALTERNATES: what a released Kafka wrote before the trunk
    layout changed), the first that reads every byte without a problem; ``d`` when none does."""
    for schema, spec in table(kind).alternates.get(record_type, ()):
        lo, hi = spec.valid
        if not lo <= d.version <= hi:
            continue
        alt = Decoded()
        alt.prefix = list(d.prefix)
        read_struct(alt, spec, d.version, buf, p + 2, p + n, base)
        if not alt.problems:
            alt.schema = schema
            return alt
    return d


def decode_metadata_value(kind: str, buf, p: int, n: int, base: int) -> Decoded | None:
    """A metadata record's value (``None`` when null): ``uvarint frameVersion`` (1), ``uvarint
    apiKey``, ``uvarint version``, the struct, nothing after it."""
    if n < 0:
        return None
    d = Decoded()
    end = p + n
    q = p
    try:
        fv, q2 = read_uvarint(buf, q, end, base, "frame version")
        d.prefix.append(("frameVersion", base + q, q2 - q, fv))
        d.frame_version, q = fv, q2
        if fv != 1:
            d.problems.append(Problem("internal_bad_frame_version", base + p, f"frame version {fv}: only frame "
                                      "version 1 is defined (AbstractApiMessageSerde)", expected=1, actual=fv))
            return d
        ak, q2 = read_uvarint(buf, q, end, base, "apiKey")
        d.prefix.append(("apiKey", base + q, q2 - q, ak))
        d.api_key, q = ak, q2
        ver, q2 = read_uvarint(buf, q, end, base, "version")
        d.prefix.append(("version", base + q, q2 - q, ver))
        d.version, q = ver, q2
    except Short as e:
        pr = e.problem
        code = "internal_truncated" if pr.code in _CUT else pr.code
        d.problems.append(Problem(code, pr.position, f"metadata record frame: {pr.message}"))
        return d
    spec = spec_at(d, table(kind).records, ak, ver, base + p, f"{kind} record of apiKey")
    if spec is None:
        return d
    read_struct(d, spec, ver, buf, q, end, base)
    return d


def decode_control_value(ctype: int, buf, p: int, n: int, base: int) -> Decoded | None:
    """A KRaft control record's value (``ControlRecordType`` 2-6; ``None`` for other types): the
    struct of its type at version 0 (``ControlRecordUtils``), no version prefix."""
    spec = control_spec(ctype)
    if spec is None:
        return None
    d = Decoded()
    d.type, d.version = spec.name, CONTROL_VERSION
    if n < 0:
        d.problems.append(Problem("internal_truncated", base + p, f"{spec.name}: the control record's value is "
                                  "null"))
        return d
    read_struct(d, spec, CONTROL_VERSION, buf, p, p + n, base)
    return d


def decode_record(kind: str | None, control: bool, buf, r, base: int) -> tuple:
    """``(keyDecoded, valueDecoded)`` of one parsed ``DefaultRecord`` ``r`` (spans into ``buf``,
    absolute ``base + index``) of a batch of internal-topic ``kind`` (``None``: none) or a control
    batch; ``None`` when nothing of it is decoded (an ordinary record, ABORT/COMMIT, a record whose
    key or value span did not parse)."""
    if r.p_val is None or r.valueLength is None:
        return None
    if control:
        if r.keyLength is None or r.keyLength < 4:
            return None
        ctype = _I16(buf, r.p_key + 2)[0]
        if ctype not in CONTROL_SPECS:
            return None
        return None, decode_control_value(ctype, buf, r.p_val, r.valueLength, base)
    if kind is None:
        return None
    if FRAMING[kind] == "coordinator":
        kd = decode_coordinator_key(kind, buf, r.p_key, r.keyLength, base)
        vd = decode_coordinator_value(kind, kd.record_type if kd.type else None, buf, r.p_val, r.valueLength, base)
        return kd, vd
    vd = decode_metadata_value(kind, buf, r.p_val, r.valueLength, base)
    if r.keyLength >= 0:
        if vd is None:  # a null value too: the problem still needs an object to be in
            vd = Decoded()
        vd.problems.insert(0, Problem("internal_unexpected_key", base + r.p_key, f"a {kind} record has a null "
                                      f"key; this one has {r.keyLength} bytes", actual=r.keyLength))
    return None, vd


def decode_batch_records(records, buf, base: int, kind: str | None, control: bool, problems: list, place) -> None:
    """Decode the key and value of every record of a batch (``r.decoded``, see
    :func:`decode_record`); their problems are appended to ``problems`` (the batch's), each placed
    by ``place(position)`` (the identity, or the compressed payload's start for a compressed
    batch)."""
    for r in records:
        got = decode_record(kind, control, buf, r, base)
        r.decoded = got
        if got is None:
            continue
        for dec in got:
            if dec is not None:
                for pr in dec.all_problems():
                    at = place(pr.position)
                    problems.append(pr if at == pr.position else Problem(pr.code, at, pr.message, pr.expected,
                                                                          pr.actual))


# -- the consumer protocol inside GroupMetadataValue members ---------------------------------------
# ``subscription`` and ``assignment`` bytes
# of a group whose ``protocolType`` is ``"consumer"``, decoded with the ConsumerProtocolSubscription /
# ConsumerProtocolAssignment specs (top-level ``protocol/specs/``).
#
# Framing (``org.apache.kafka.clients.consumer.internals.ConsumerProtocol``): ``int16 version``, then
# the struct at that version; a version above the highest known is read at the highest (Kafka's
# ``checkSubscriptionVersion``/``checkAssignmentVersion``: newer versions only append fields), so
# bytes after the struct are then expected, not damage. Empty bytes (a member with no assignment yet)
# are not decoded.

CONSUMER_SPECS = {"subscription": "ConsumerProtocolSubscription", "assignment": "ConsumerProtocolAssignment"}
CONSUMER = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE


def decode_consumer(field: str, buf, p: int, n: int, base: int):
    """The ``Decoded`` of one ``subscription``/``assignment`` value (``n`` bytes at ``buf[p]``,
    absolute ``base + p``), ``None`` when empty or when the spec is missing."""
    spec = specs().data.get(CONSUMER_SPECS[field])
    if spec is None or n <= 0:
        return None
    d = Decoded()
    d.type = spec.name
    v = _int16(d, "version", buf, p, n, base, field)
    if v is None:
        return d
    d.version = v
    hi = spec.valid[1]
    if not known_version(d, spec, min(v, hi), base + p):  # above the highest: read at the highest
        d.version = v
        return d
    read_struct(d, spec, min(v, hi), buf, p + 2, p + n, base, trailing_ok=v > hi)
    d.version = v
    return d


def expand_members(d, buf, base: int) -> None:
    """Decode the ``subscription``/``assignment`` bytes of every member of the GroupMetadataValue
    ``d`` when its ``protocolType`` is ``"consumer"``; appended to ``d.expansions``."""
    entries = d.entries or ()
    if not any(f.name == "protocolType" and f.value == CONSUMER for f in entries):
        return
    for f in entries:
        if f.name != "members" or f.kind != K_ARRAY or not f.value:
            continue
        for i, ef in enumerate(f.value):
            if ef.kind != K_STRUCT or not ef.value:
                continue
            for mf in ef.value:
                if mf.name in CONSUMER_SPECS and isinstance(mf.value, bytes):
                    start = mf.pos + mf.length - len(mf.value)
                    dec = decode_consumer(mf.name, buf, start - base, len(mf.value), base)
                    if dec is not None:
                        d.expansions.append((i, mf.name, mf, dec))
