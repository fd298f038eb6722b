"""Kafka control records (the records of an ``isControl`` batch): their key and the
``EndTransactionMarker`` value of ABORT/COMMIT, declared as layouts and read from a decoded record.

Layout: ``org.apache.kafka.common.record.ControlRecordType`` (key: ``version int16 | type int16``),
``org.apache.kafka.common.record.EndTransactionMarker`` (value: ``version int16 | coordinatorEpoch
int32``).
"""

from __future__ import annotations

from wireinspect.layout import Int, Layout

# Control records (isControl batches): the key of every control record, and the value of ABORT/COMMIT.
CONTROL_KEY = Layout("ControlRecordKey", (Int("version", "h"), Int("type", "h")),
                     source="org.apache.kafka.common.record.ControlRecordType (key schema)")
END_TXN_MARKER = Layout("EndTransactionMarker", (Int("version", "h"), Int("coordinatorEpoch", "i")),
                        source="org.apache.kafka.common.record.EndTransactionMarker")


CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


def control_fields(data, r) -> list:
    """The decoded fields of a control record as ``(name, index into data, size, value)``: the key
    (:data:`CONTROL_KEY`, ``version int16 | type int16``) gives ``controlType`` (its span: the type);
    for ABORT/COMMIT the value (:data:`END_TXN_MARKER`, ``version int16 | coordinatorEpoch int32``)
    gives ``coordinatorEpoch`` (its span: those 4 bytes of the value). A key too short for a type
    gives ``controlType`` ``None`` spanning the key."""
    if r.p_key is None or r.keyLength is None or r.keyLength < 4:
        at = r.p_key if r.p_key is not None else r.start
        return [("controlType", at, max(r.keyLength or 0, 0), None)]
    k = CONTROL_KEY.decode(data, r.p_key, r.p_key + r.keyLength)
    ctype = k.values["type"]
    out = [("controlType", k.spans["type"][0], 2, CONTROL_TYPES.get(ctype, f"UNKNOWN({ctype})"))]
    if ctype in (0, 1) and r.p_val is not None and r.valueLength is not None and r.valueLength >= 6:
        v = END_TXN_MARKER.decode(data, r.p_val, r.p_val + r.valueLength)
        out.append(("coordinatorEpoch", v.spans["coordinatorEpoch"][0], 4, v.values["coordinatorEpoch"]))
    return out


def control_record(data, r) -> dict:
    """A control record's decoded fields by name (see :func:`control_fields`)."""
    return {name: value for name, _, _, value in control_fields(data, r)}
