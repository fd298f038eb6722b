"""The changes a ``__cluster_metadata`` record makes to the metadata image (``metadata --changes A..B``).

Each change is a JSON object ``{"type": "metadataChange", "change": KIND, ...}`` that the replay
(:mod:`.image`) completes with the record that made it: ``offset``, ``timestamp`` (ms since the
epoch), ``timestampIso``, ``path``, ``position`` and ``record`` (its type). Kinds and their fields:

* ``partition_created`` {topic, partition, leader, isr, replicas}
* ``leader_change`` {topic, partition, from, to, leaderEpoch}; ``to`` -1: the partition lost its
  leader; ``from`` -1: it gained one
* ``isr_shrink`` / ``isr_expand`` {topic, partition, from, to, removed / added}
* ``replicas_change`` {topic, partition, from, to}
* ``elr_change`` {topic, partition, from, to}
* ``topic_created`` / ``topic_deleted`` {topic, topicId}
* ``broker_registered`` {broker, brokerEpoch, fenced, reregistered}, ``broker_unregistered``,
  ``broker_fenced``, ``broker_unfenced``, ``broker_controlled_shutdown`` {broker}
* ``feature_level`` {feature, level}; ``config`` {resourceType, resourceName, name, value (null: deleted)}
* ``voters`` {before, after} (voter ids); ``quorum_leader`` {leaderId}
"""

from __future__ import annotations

from wireinspect.codec.text import quote


def event(kind: str, **fields) -> dict:
    """A change of kind ``kind`` (the replay adds where it comes from)."""
    return {"type": "metadataChange", "change": kind, **fields}


def partition_events(topic: str, partition: int, before: dict | None, after: dict) -> list:
    """The changes from partition state ``before`` (None: a new partition) to ``after`` (the image's
    partition dicts: ``leader``, ``isr``, ``replicas``, ``elr``...)."""
    where = {"topic": topic, "partition": partition}
    if before is None:
        return [event("partition_created", **where, leader=after["leader"], isr=after["isr"],
                      replicas=after["replicas"])]
    out = []
    if before["leader"] != after["leader"]:
        out.append(event("leader_change", **where, **{"from": before["leader"], "to": after["leader"]},
                         leaderEpoch=after["leaderEpoch"]))
    old, new = set(before["isr"]), set(after["isr"])
    if old - new:
        out.append(event("isr_shrink", **where, **{"from": before["isr"], "to": after["isr"]},
                         removed=sorted(old - new)))
    if new - old:
        out.append(event("isr_expand", **where, **{"from": before["isr"], "to": after["isr"]},
                         added=sorted(new - old)))
    if before["replicas"] != after["replicas"]:
        out.append(event("replicas_change", **where, **{"from": before["replicas"], "to": after["replicas"]}))
    if before["elr"] != after["elr"]:
        out.append(event("elr_change", **where, **{"from": before["elr"], "to": after["elr"]}))
    return out


def describe(ev: dict) -> str:
    """One line of text for a change."""
    k = ev["change"]
    tp = f"{ev.get('topic')}-{ev.get('partition')}"
    if k == "leader_change":
        if ev["to"] == -1:
            return f"{tp} lost its leader {ev['from']}"
        if ev["from"] == -1:
            return f"{tp} gained leader {ev['to']} (epoch {ev['leaderEpoch']})"
        return f"{tp} leader {ev['from']} -> {ev['to']} (epoch {ev['leaderEpoch']})"
    if k in ("isr_shrink", "isr_expand", "replicas_change", "elr_change"):
        what = {"isr_shrink": "ISR shrank", "isr_expand": "ISR expanded", "replicas_change": "replicas",
                "elr_change": "ELR"}[k]
        return f"{tp} {what} {ev['from']} -> {ev['to']}"
    if k == "partition_created":
        return f"{tp} created: leader {ev['leader']}, isr {ev['isr']}, replicas {ev['replicas']}"
    if k in ("topic_created", "topic_deleted"):
        return f"topic {ev['topic']} ({ev['topicId']}) {k.split('_')[1]}"
    if k.startswith("broker_"):
        text = f"broker {ev['broker']} {k.split('_', 1)[1].replace('_', ' ')}"
        if k == "broker_registered":
            text += f" (epoch {ev['brokerEpoch']}{', fenced' if ev['fenced'] else ''}" \
                    f"{', again' if ev['reregistered'] else ''})"
        return text
    if k == "feature_level":
        return f"feature {ev['feature']} level {ev['level']}"
    if k == "config":
        value = "deleted" if ev["value"] is None else f"= {ev['value']}"
        return f"config {ev['resourceType']} {quote(ev['resourceName'])}: {ev['name']} {value}"
    if k == "voters":
        return f"voters {ev['before']} -> {ev['after']}"
    if k == "quorum_leader":
        return f"quorum leader {ev['leaderId']}"
    return k


def events_table(events: list, lo, hi) -> tuple:
    """The terminal table of the changes between offsets ``lo`` and ``hi``."""
    span = f"{'' if lo is None else lo}..{'' if hi is None else hi}"
    rows = [[ev["offset"], ev.get("timestampIso") or str(ev.get("timestamp")), ev["change"], describe(ev)]
            for ev in events]
    return ("table", f"metadata changes in offsets {span}", ["offset", "time", "change", "what"], rows)
