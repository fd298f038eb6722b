"""Consumer groups from a ``__consumer_offsets`` partition: the last committed offset of each
topic-partition per group, and each group's state, as the group coordinator would load them.

Fed record dicts of the internal-topics contract (docs/internal-topics.md), in offset order. The
loading rules are Kafka's (``GroupMetadataManager.doLoadGroupsAndOffsets``, and
``GroupCoordinatorShard.replay`` / ``OffsetMetadataManager.replay`` in the new coordinator):

* ``OffsetCommitKey`` (and ``LegacyOffsetCommitKey``) {group, topic, partition} with an
  ``OffsetCommitValue`` {offset, leaderEpoch, metadata, commitTimestamp, expireTimestamp}: the last
  one wins; a tombstone (null value) deletes the offset;
* offsets written by a transactional producer (``TxnOffsetCommit``: a transactional batch) are
  pending until that producer's COMMIT marker (then they apply, unless a commit appended later is
  already there) or ABORT marker (dropped);
* ``GroupMetadataKey`` {group} with a ``GroupMetadataValue`` {protocolType, generation, protocol,
  leader, currentStateTimestamp, members[memberId, groupInstanceId, clientId, clientHost,
  rebalanceTimeout, sessionTimeout, ...]}: the classic group; its state on load is ``Empty`` without
  members and ``Stable`` with some (``GroupMetadata.loadGroup``); a tombstone deletes the group
  (``Dead``);
* ``ConsumerGroupMetadataKey`` {GroupId} / ``ConsumerGroupMetadataValue`` {Epoch} and
  ``ConsumerGroupMemberMetadataKey`` {GroupId, MemberId} / ``ConsumerGroupMemberMetadataValue``
  {ClientId, ClientHost, InstanceId, RackId, SubscribedTopicNames...}: a group of the new consumer
  protocol (KIP-848), its epoch and members; tombstones delete them. Its state is the one
  ``ConsumerGroup.maybeUpdateGroupState`` gives after the replay: ``Empty`` without members,
  ``Assigning`` while the group epoch is above the target assignment's epoch
  (``ConsumerGroupTargetAssignmentMetadataValue`` {AssignmentEpoch}; its tombstone: -1),
  ``Reconciling`` while a member is not reconciled to it (its
  ``ConsumerGroupCurrentMemberAssignmentValue`` {MemberEpoch, State}: State 0, STABLE, at that epoch;
  the tombstone of a member's current assignment sets its epoch to -1, leaving), else ``Stable``.

Times are ms since the epoch, with ``...Iso`` (ISO-8601 UTC) beside them.
"""

from __future__ import annotations

from wireinspect.formats.kafka.internal.base_report import (Outcome, miss, check_decoded, choose_segments, decoded,
                                                            records_of, undecoded, where, with_iso)

OFFSET_KEYS = ("OffsetCommitKey", "LegacyOffsetCommitKey")
MEMBER_FIELDS = ("memberId", "groupInstanceId", "clientId", "clientHost", "rebalanceTimeout", "sessionTimeout")
GROUP_FIELD = {"OffsetCommitKey": "group", "LegacyOffsetCommitKey": "group", "GroupMetadataKey": "group",
               "ConsumerGroupMetadataKey": "GroupId", "ConsumerGroupMemberMetadataKey": "GroupId",
               "ConsumerGroupTargetAssignmentMetadataKey": "GroupId",
               "ConsumerGroupCurrentMemberAssignmentKey": "GroupId"}
LEAVE_GROUP_MEMBER_EPOCH = -1  # ConsumerGroupMember: a member whose current assignment was deleted
STABLE_MEMBER = 0  # MemberState.STABLE
CONSUMER_MEMBER_FIELDS = ("InstanceId", "RackId", "ClientId", "ClientHost", "SubscribedTopicNames",
                          "SubscribedTopicRegex", "ServerAssignor", "RebalanceTimeoutMs")


class GroupOffsets:
    """The ``group-offsets`` analysis; ``group``: only this group id.

    JSON, one object per group, by group id::

        {"type": "group", "group": "g", "state": "Stable"|"Empty"|"Dead"|"Assigning"|"Reconciling"|null,
         "classic": {"protocolType", "generation", "protocol", "leader", "currentStateTimestamp",
                     "members": [{"memberId", "groupInstanceId", "clientId", "clientHost",
                                  "rebalanceTimeout", "sessionTimeout"}],
                     "path", "recordOffset", "position"} | null,
         "consumerGroup": {"epoch", "assignmentEpoch", "members": [{"memberId", "ClientId", "ClientHost",
                           ..., "memberEpoch", "memberState"}], "path", "recordOffset", "position"} | null,
         "deleted": {"path", "recordOffset", "position"} | null,   # the tombstone of the classic group
         "offsets": [{"topic", "partition", "offset", "leaderEpoch", "metadata", "commitTimestamp",
                      "commitTimestampIso", "expireTimestamp", "transactional", "path",
                      "recordOffset", "position"}],                 # by topic, partition
         "offsetsDeleted": N}                                       # offsets removed by tombstones
    """

    topics = ("__consumer_offsets",)
    records_as = "offsets"  # how the records of a file outside a partition directory are decoded
    formats = ("kafka-log",)  # the inputs it reads: Kafka log segments (and snapshots)

    def __init__(self, group: str | None = None):
        self.group = group
        self.groups: dict = {}
        self.others: set = set()  # the groups the inputs name besides --group
        self.pending: dict = {}  # producerId -> [(group, tp, entry or None)]
        self.problems: list = []

    def _g(self, group: str) -> dict:
        g = self.groups.get(group)
        if g is None:
            g = self.groups[group] = {"classic": None, "consumerGroup": None, "deleted": None, "offsets": {},
                                      "offsetsDeleted": 0}
        return g

    def choose(self, paths) -> dict:
        return choose_segments(paths, self.topics)

    def feed(self, path: str, unit: dict) -> None:
        for rec, batch in records_of(path, unit):
            if batch.get("isControl"):
                self._marker(rec, batch)
                continue
            key = check_decoded(rec, path, batch, self.problems, "__consumer_offsets")
            if key is None:
                continue
            self._record(key, rec, batch, path)

    def _marker(self, rec: dict, batch: dict) -> None:
        kind = rec.get("controlType")
        pid = batch.get("producerId")
        if kind not in ("COMMIT", "ABORT"):
            return
        for group, tp, entry in self.pending.pop(pid, ()):
            if kind == "ABORT":
                continue
            g = self._g(group)
            have = g["offsets"].get(tp)
            if entry is None:
                if have is not None:
                    del g["offsets"][tp]
                    g["offsetsDeleted"] += 1
            elif have is None or have["recordOffset"] < entry["recordOffset"]:
                g["offsets"][tp] = entry

    def _record(self, key: dict, rec: dict, batch: dict, path: str) -> None:
        kt = key["type"]
        data = key["data"]
        field = GROUP_FIELD.get(kt)
        if field is None:
            return  # assignments, share and streams groups: nothing shown comes from them
        group = data.get(field)
        if self.group is not None and group != self.group:
            if len(self.others) < 10_000:  # (bounded: the names said when --group matches none)
                self.others.add(group)
            return
        value = decoded(rec, "valueDecoded")
        w = where(path, rec, batch)
        if rec.get("value") is not None and value is None:
            undecoded(rec, batch, path, self.problems, "valueDecoded", f"the value of a {kt}")
            return
        vd = value["data"] if value else None  # None: a tombstone
        if kt in OFFSET_KEYS:
            self._offset(group, (data.get("topic"), data.get("partition")), vd, batch, w)
            return
        g = self._g(group)
        if kt == "GroupMetadataKey":
            if vd is None:
                g["classic"], g["deleted"] = None, w
                return
            members = [{k: m.get(k) for k in MEMBER_FIELDS} for m in vd.get("members") or () if isinstance(m, dict)]
            g["classic"] = with_iso({"protocolType": vd.get("protocolType"), "generation": vd.get("generation"),
                                     "protocol": vd.get("protocol"), "leader": vd.get("leader"),
                                     "currentStateTimestamp": vd.get("currentStateTimestamp", -1),
                                     "members": members, **w}, "currentStateTimestamp")
            g["deleted"] = None
        elif kt == "ConsumerGroupMetadataKey":
            if vd is None:
                g["consumerGroup"] = None
                return
            cg = self._consumer_group(g, w)
            cg.update(epoch=vd.get("Epoch"), **w)
        else:  # a member or the target assignment of a consumer-protocol group
            if vd is None and g["consumerGroup"] is None:
                return  # Kafka ignores the tombstone of what does not exist
            cg = self._consumer_group(g, w)  # members are written before the group record of their epoch
            mid = data.get("MemberId")
            if kt == "ConsumerGroupTargetAssignmentMetadataKey":
                cg["assignmentEpoch"] = -1 if vd is None else vd.get("AssignmentEpoch")
            elif vd is None and kt == "ConsumerGroupMemberMetadataKey":
                cg["members"].pop(mid, None)
            elif vd is None:  # the current assignment's tombstone: the member is leaving
                if mid in cg["members"]:
                    cg["members"][mid]["memberEpoch"] = LEAVE_GROUP_MEMBER_EPOCH
            else:
                m = cg["members"].setdefault(mid, {"memberId": mid, **dict.fromkeys(CONSUMER_MEMBER_FIELDS),
                                                   "memberEpoch": 0, "memberState": STABLE_MEMBER})
                if kt == "ConsumerGroupMemberMetadataKey":
                    m.update({k: vd.get(k) for k in CONSUMER_MEMBER_FIELDS})
                else:
                    m.update(memberEpoch=vd.get("MemberEpoch"), memberState=vd.get("State"))

    @staticmethod
    def _consumer_group(g: dict, w: dict) -> dict:
        """The consumer-protocol group of ``g``, created as Kafka creates it (epochs 0, no members)."""
        if g["consumerGroup"] is None:
            g["consumerGroup"] = {"epoch": 0, "assignmentEpoch": 0, "members": {}, **w}
        return g["consumerGroup"]

    def _offset(self, group, tp: tuple, vd: dict | None, batch: dict, w: dict) -> None:
        """An offset commit (``vd`` None: its tombstone); a transactional one waits for its marker."""
        entry = None
        if vd is not None:  # (its ...Iso times are added in finish, to the last commits only)
            entry = {"topic": tp[0], "partition": tp[1], "offset": vd.get("offset"),
                     "leaderEpoch": vd.get("leaderEpoch", -1), "metadata": vd.get("metadata"),
                     "commitTimestamp": vd.get("commitTimestamp"), "expireTimestamp": vd.get("expireTimestamp", -1),
                     "transactional": bool(batch.get("isTransactional")), **w}
        if batch.get("isTransactional"):
            self.pending.setdefault(batch.get("producerId"), []).append((group, tp, entry))
            return
        g = self._g(group)
        if entry is None:
            if g["offsets"].pop(tp, None) is not None:
                g["offsetsDeleted"] += 1
        else:
            g["offsets"][tp] = entry

    def finish(self) -> Outcome:
        out = Outcome(problems=self.problems)
        for pid, pend in sorted(self.pending.items(), key=lambda kv: str(kv[0])):
            if pend:
                out.blocks.append(("note", f"producer {pid}: {len(pend)} transactional offset commit(s) "
                                           "without a COMMIT or ABORT marker (not applied)"))
        group_rows, offset_rows = [], []
        for name in sorted(self.groups, key=str):
            g = self.groups[name]
            cg = g["consumerGroup"]
            if cg is not None:
                cg = dict(cg, members=[cg["members"][k] for k in sorted(cg["members"], key=str)])
            classic = g["classic"]
            state = "Dead" if g["deleted"] else (("Stable" if classic["members"] else "Empty") if classic
                                                 else consumer_group_state(cg) if cg else None)
            offsets = [with_iso(g["offsets"][k], "commitTimestamp", "expireTimestamp")
                       for k in sorted(g["offsets"], key=lambda tp: (str(tp[0]), tp[1] or 0))]
            out.objects.append({"type": "group", "group": name, "state": state, "classic": classic,
                                "consumerGroup": cg, "deleted": g["deleted"], "offsets": offsets,
                                "offsetsDeleted": g["offsetsDeleted"]})
            if classic is not None or g["deleted"] or cg is not None:
                members = classic["members"] if classic else (cg["members"] if cg else [])
                group_rows.append([name, state or "-",
                                   (classic or {}).get("protocolType") or ("consumer" if cg else "-"),
                                   str((classic or {}).get("generation", (cg or {}).get("epoch", "-"))),
                                   (classic or {}).get("protocol") or "-", (classic or {}).get("leader") or "-",
                                   ", ".join(f"{m.get('clientId') or m.get('ClientId')}@"
                                             f"{m.get('clientHost') or m.get('ClientHost')}" for m in members) or "-"])
            for o in offsets:
                offset_rows.append([name, o["topic"], o["partition"], o["offset"], o["leaderEpoch"],
                                    o["metadata"] or "", o.get("commitTimestampIso") or str(o["commitTimestamp"]),
                                    o["recordOffset"]])
        if group_rows:
            out.blocks.append(("table", "groups", ["group", "state", "protocol type", "generation", "protocol",
                                                   "leader", "members (client id@host)"], group_rows))
        out.blocks.append(("table", "committed offsets", ["group", "topic", "partition", "offset", "leader epoch",
                                                          "metadata", "commit time", "record offset"], offset_rows))
        if self.group is not None and self.group not in self.groups:
            out.misses.append(miss("group", self.group, self.others))
        return out


def consumer_group_state(cg: dict) -> str:
    """``ConsumerGroup.maybeUpdateGroupState`` on a replayed consumer-protocol group (members as a list)."""
    if not cg["members"]:
        return "Empty"
    epoch, target = cg["epoch"], cg["assignmentEpoch"]
    if isinstance(epoch, int) and isinstance(target, int) and epoch > target:
        return "Assigning"
    if any(m["memberState"] != STABLE_MEMBER or m["memberEpoch"] != target for m in cg["members"]):
        return "Reconciling"
    return "Stable"
