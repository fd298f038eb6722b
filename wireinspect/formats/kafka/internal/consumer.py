"""The consumer protocol inside GroupMetadataValue members: ``subscription`` and ``assignment`` bytes
of a group whose ``protocolType`` is ``"consumer"``, decoded with the ConsumerProtocolSubscription /
ConsumerProtocolAssignment specs (top-level ``protocol/specs/``).

Framing (``org.apache.kafka.clients.consumer.internals.ConsumerProtocol``): ``int16 version``, then
the struct at that version; a version above the highest known is read at the highest (Kafka's
``checkSubscriptionVersion``/``checkAssignmentVersion``: newer versions only append fields), so
bytes after the struct are then expected, not damage. Empty bytes (a member with no assignment yet)
are not decoded.
"""

from __future__ import annotations

from wireinspect.formats.kafka.protocol.specs_loader import specs
from wireinspect.formats.kafka.protocol.walker import K_ARRAY, K_STRUCT

SPECS = {"subscription": "ConsumerProtocolSubscription", "assignment": "ConsumerProtocolAssignment"}
CONSUMER = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE


def decode_consumer(field: str, buf, p: int, n: int, base: int):
    """The ``Decoded`` of one ``subscription``/``assignment`` value (``n`` bytes at ``buf[p]``,
    absolute ``base + p``), ``None`` when empty or when the spec is missing."""
    from wireinspect.formats.kafka.internal.decode import Decoded, _int16, known_version, read_struct

    spec = specs().data.get(SPECS[field])
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
                if mf.name in SPECS and isinstance(mf.value, bytes):
                    start = mf.pos + mf.length - len(mf.value)
                    dec = decode_consumer(mf.name, buf, start - base, len(mf.value), base)
                    if dec is not None:
                        d.expansions.append((i, mf.name, mf, dec))
