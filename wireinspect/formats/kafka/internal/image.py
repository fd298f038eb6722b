"""The cluster as the KRaft controller saw it: ``__cluster_metadata`` records replayed into a metadata
image, as Kafka's ``MetadataDelta`` applies them (``TopicsDelta``, ``ClusterDelta``,
``FeaturesDelta``, ``ConfigurationsDelta``, ``ClientQuotasDelta``, ``ProducerIdsDelta``, ``AclsDelta``;
the quorum from the KRaft control records).

:class:`Image` holds the state and applies one record at a time (``apply``), returning the changes it
made (for ``metadata --changes``, see :mod:`.diff`) and raising :class:`NotApplicable` for a record
that cannot apply (a partition change for an unknown topic, a fence for an unknown broker): the
replay reports it as a problem with the record's offset and byte position and goes on.
:class:`MetadataReplay` is the report: it picks the snapshot, feeds records up to the target and
builds the JSON and the tree.

How records apply (names are the spec's, ``/specs/internal/metadata/*.json``):

* ``TopicRecord`` {Name, TopicId} creates a topic; ``RemoveTopicRecord`` {TopicId} deletes it, its
  partitions and its configs.
* ``PartitionRecord`` creates (or replaces) a partition with every field given.
* ``PartitionChangeRecord`` merges as ``PartitionRegistration.merge``: ``Isr``, ``Replicas``,
  ``RemovingReplicas``, ``AddingReplicas``, ``Directories``, ``EligibleLeaderReplicas``,
  ``LastKnownElr`` null or absent = no change; ``Leader`` -2 or absent = no change (-1: no leader now),
  and any leader given bumps the leader epoch by one; ``LeaderRecoveryState`` -1 or absent = no
  change; the partition epoch goes up by one on every change record.
* ``ClearElrRecord`` {TopicName, empty: every topic} empties the ELR and last known ELR (a change:
  the partition epoch goes up) of the partitions that have some.
* ``RegisterBrokerRecord`` replaces the broker's registration (``Fenced`` defaults to true);
  ``UnregisterBrokerRecord`` removes it; ``FenceBrokerRecord``/``UnfenceBrokerRecord`` {Id, Epoch}
  fence and unfence; ``BrokerRegistrationChangeRecord`` {Fenced: 1 fenced, -1 unfenced, 0 no change;
  InControlledShutdown: 1 yes, 0 no change; LogDirs}. A broker that is not registered, or an epoch
  that is not its current one, is a problem (the record does not apply).
* ``RegisterControllerRecord``/``UnregisterControllerRecord``: the controllers.
* ``FeatureLevelRecord`` {Name, FeatureLevel}: level 0 removes the feature.
* ``ConfigRecord`` {ResourceType, ResourceName, Name, Value}: a null Value deletes the key.
* ``ClientQuotaRecord`` {Entity[EntityType, EntityName], Key, Value, Remove}.
* ``ProducerIdsRecord`` {BrokerId, BrokerEpoch, NextProducerId}: the next producer id block.
* ``AccessControlEntryRecord``/``RemoveAccessControlEntryRecord`` by ``Id``.
* Metadata transactions (KIP-868): records after ``BeginTransactionRecord`` wait for
  ``EndTransactionRecord`` (then apply) or ``AbortTransactionRecord`` (dropped).
* KRaft control records: ``VotersRecord`` {Voters[VoterId, VoterDirectoryId, Endpoints]} sets the
  voters; ``LeaderChangeMessage`` {LeaderId, Voters, GrantingVoters} the quorum leader;
  ``KRaftVersionRecord`` the kraft.version.

Offsets are the metadata log's; a snapshot ``<endOffset>-<epoch>.checkpoint`` holds the image of the
records below ``endOffset``. Times are ms since the epoch.
"""

from __future__ import annotations

import os
import re

from wireinspect.codec.times import iso_ms
from wireinspect.codec.text import quote
from wireinspect.formats.kafka.internal import diff
from wireinspect.formats.kafka.internal.base_report import (BOOTSTRAP, Outcome, decoded, log_dir_file, other_topic,
                                                            problem, records_of, topic_of, undecoded, where)
from wireinspect.layout import declare_ms

declare_ms("lastTimestamp")  # the image's JSON: the newest record timestamp replayed (ms since the epoch)

TOPIC = "__cluster_metadata"
SNAPSHOT = re.compile(r"^(?P<end>[0-9]{20})-(?P<epoch>[0-9]{10})\.checkpoint$")
RESOURCE_TYPES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
IGNORED = frozenset({"NoOpRecord", "ZkMigrationRecord", "UserScramCredentialRecord", "RemoveUserScramCredentialRecord",
                     "DelegationTokenRecord", "RemoveDelegationTokenRecord", "SnapshotHeaderRecord",
                     "SnapshotFooterRecord"})
PARTITION_LISTS = (("Replicas", "replicas"), ("Isr", "isr"), ("RemovingReplicas", "removingReplicas"),
                   ("AddingReplicas", "addingReplicas"), ("Directories", "directories"),
                   ("EligibleLeaderReplicas", "elr"), ("LastKnownElr", "lastKnownElr"))
NO_LEADER_CHANGE = -2


class NotApplicable(Exception):
    """A record that cannot apply to the image: ``code`` and the message."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def snapshot_end(path: str) -> int | None:
    """The end offset of a snapshot file ``<endOffset>-<epoch>.checkpoint`` (None for another name)."""
    m = SNAPSHOT.match(os.path.basename(path))
    return int(m.group("end")) if m else None


class Image:
    """The metadata image (the names of Kafka's image classes: ``PartitionRegistration``,
    ``BrokerRegistration``...). ``apply(type, data)`` returns the changes (see :mod:`.diff`)."""

    def __init__(self):
        self.topics: dict = {}  # topicId -> {"name", "topicId", "partitions": {id: partition}}
        self.brokers: dict = {}  # id -> registration
        self.controllers: dict = {}
        self.features: dict = {}
        self.configs: dict = {}  # (resourceType name, resourceName) -> {key: value}
        self.quotas: dict = {}  # ((type, name), ...) -> {key: value}
        self.acls: dict = {}
        self.producer_ids: dict | None = None
        self.voters: list | None = None
        self.quorum_leader: dict | None = None
        self.kraft_version: int | None = None

    # -- topics and partitions
    def _topic(self, topic_id) -> dict:
        t = self.topics.get(topic_id)
        if t is None:
            raise NotApplicable("unknown_topic", f"topic id {topic_id} is not in the image")
        return t

    def apply(self, rtype: str, d: dict) -> list:
        fn = getattr(self, "_" + rtype, None)
        if fn is None:
            return []
        return fn(d) or []

    def _TopicRecord(self, d):
        tid = d.get("TopicId")
        self.topics[tid] = {"name": d.get("Name"), "topicId": tid, "partitions": {}}
        return [diff.event("topic_created", topic=d.get("Name"), topicId=tid)]

    def _RemoveTopicRecord(self, d):
        t = self._topic(d.get("TopicId"))
        del self.topics[d.get("TopicId")]
        self.configs.pop(("TOPIC", t["name"]), None)
        return [diff.event("topic_deleted", topic=t["name"], topicId=t["topicId"])]

    def _PartitionRecord(self, d):
        t = self._topic(d.get("TopicId"))
        pid = d.get("PartitionId")
        before = t["partitions"].get(pid)
        p = {"partition": pid, "leader": d.get("Leader", -1), "leaderEpoch": d.get("LeaderEpoch", -1),
             "partitionEpoch": d.get("PartitionEpoch", -1), "leaderRecoveryState": d.get("LeaderRecoveryState", 0)}
        for spec, name in PARTITION_LISTS:
            p[name] = list(d.get(spec) or [])
        t["partitions"][pid] = p
        return diff.partition_events(t["name"], pid, before, p)

    def _PartitionChangeRecord(self, d):
        t = self._topic(d.get("TopicId"))
        pid = d.get("PartitionId")
        before = t["partitions"].get(pid)
        if before is None:
            raise NotApplicable("unknown_partition", f"partition {pid} of topic {t['name']} is not in the image")
        p = dict(before)
        for spec, name in PARTITION_LISTS:
            if d.get(spec) is not None:
                p[name] = list(d[spec])
        leader = d.get("Leader", NO_LEADER_CHANGE)
        if leader is not None and leader != NO_LEADER_CHANGE:
            p["leader"] = leader
            p["leaderEpoch"] = before["leaderEpoch"] + 1
        lrs = d.get("LeaderRecoveryState", -1)
        if lrs is not None and lrs != -1:
            p["leaderRecoveryState"] = lrs
        p["partitionEpoch"] = before["partitionEpoch"] + 1
        t["partitions"][pid] = p
        return diff.partition_events(t["name"], pid, before, p)

    def _ClearElrRecord(self, d):
        name = d.get("TopicName") or ""
        topics = [t for t in self.topics.values() if not name or t["name"] == name]
        if name and not topics:
            raise NotApplicable("unknown_topic", f"topic {name} is not in the image")
        for t in topics:
            for pid, p in t["partitions"].items():
                if p["elr"] or p["lastKnownElr"]:
                    t["partitions"][pid] = dict(p, elr=[], lastKnownElr=[], partitionEpoch=p["partitionEpoch"] + 1)
        return []

    # -- brokers and controllers
    def _broker(self, bid, epoch) -> dict:
        b = self.brokers.get(bid)
        if b is None:
            raise NotApplicable("unknown_broker", f"broker {bid} is not registered")
        if epoch is not None and b["epoch"] != epoch:
            raise NotApplicable("broker_epoch_mismatch", f"broker {bid} has epoch {b['epoch']}, not {epoch}")
        return b

    def _RegisterBrokerRecord(self, d):
        bid = d.get("BrokerId")
        before = self.brokers.get(bid)
        self.brokers[bid] = {
            "id": bid, "epoch": d.get("BrokerEpoch"), "incarnationId": d.get("IncarnationId"),
            "listeners": [{k[0].lower() + k[1:]: e.get(k) for k in ("Name", "Host", "Port", "SecurityProtocol")}
                          for e in d.get("EndPoints") or () if isinstance(e, dict)],
            "supportedFeatures": {f.get("Name"): [f.get("MinSupportedVersion"), f.get("MaxSupportedVersion")]
                                  for f in d.get("Features") or () if isinstance(f, dict)},
            "rack": d.get("Rack"), "fenced": bool(d.get("Fenced", True)),
            "inControlledShutdown": bool(d.get("InControlledShutdown", False)),
            "isMigratingZkBroker": bool(d.get("IsMigratingZkBroker", False)),
            "directories": list(d.get("LogDirs") or [])}
        return [diff.event("broker_registered", broker=bid, brokerEpoch=d.get("BrokerEpoch"),
                           fenced=self.brokers[bid]["fenced"], reregistered=before is not None)]

    def _UnregisterBrokerRecord(self, d):
        self._broker(d.get("BrokerId"), d.get("BrokerEpoch"))
        del self.brokers[d.get("BrokerId")]
        return [diff.event("broker_unregistered", broker=d.get("BrokerId"))]

    def _fence(self, bid, epoch, fenced: bool) -> list:
        b = self._broker(bid, epoch)
        was = b["fenced"]
        b["fenced"] = fenced
        if fenced:
            b["inControlledShutdown"] = False
        return [diff.event("broker_fenced" if fenced else "broker_unfenced", broker=bid)] if was != fenced else []

    def _FenceBrokerRecord(self, d):
        return self._fence(d.get("Id"), d.get("Epoch"), True)

    def _UnfenceBrokerRecord(self, d):
        return self._fence(d.get("Id"), d.get("Epoch"), False)

    def _BrokerRegistrationChangeRecord(self, d):
        bid = d.get("BrokerId")
        b = self._broker(bid, d.get("BrokerEpoch"))
        out = []
        fenced = d.get("Fenced", 0)
        if fenced in (1, -1):
            out = self._fence(bid, None, fenced == 1)
        if d.get("InControlledShutdown", 0) == 1:
            b["inControlledShutdown"] = True
            out.append(diff.event("broker_controlled_shutdown", broker=bid))
        if d.get("LogDirs") is not None:
            b["directories"] = list(d["LogDirs"])
        return out

    def _RegisterControllerRecord(self, d):
        cid = d.get("ControllerId")
        self.controllers[cid] = {
            "id": cid, "incarnationId": d.get("IncarnationId"), "zkMigrationReady": d.get("ZkMigrationReady"),
            "listeners": [{k[0].lower() + k[1:]: e.get(k) for k in ("Name", "Host", "Port", "SecurityProtocol")}
                          for e in d.get("EndPoints") or () if isinstance(e, dict)]}

    def _UnregisterControllerRecord(self, d):
        if self.controllers.pop(d.get("ControllerId"), None) is None:
            raise NotApplicable("unknown_controller", f"controller {d.get('ControllerId')} is not registered")

    # -- the rest of the image
    def _FeatureLevelRecord(self, d):
        if d.get("FeatureLevel") == 0:
            self.features.pop(d.get("Name"), None)
        else:
            self.features[d.get("Name")] = d.get("FeatureLevel")
        return [diff.event("feature_level", feature=d.get("Name"), level=d.get("FeatureLevel"))]

    def _ConfigRecord(self, d):
        rtype = RESOURCE_TYPES.get(d.get("ResourceType"), str(d.get("ResourceType")))
        key = (rtype, d.get("ResourceName"))
        if d.get("Value") is None:
            cfg = self.configs.get(key)
            if cfg is not None:
                cfg.pop(d.get("Name"), None)
                if not cfg:
                    del self.configs[key]
        else:
            self.configs.setdefault(key, {})[d.get("Name")] = d.get("Value")
        return [diff.event("config", resourceType=rtype, resourceName=d.get("ResourceName"), name=d.get("Name"),
                           value=d.get("Value"))]

    def _ClientQuotaRecord(self, d):
        entity = tuple(sorted((e.get("EntityType") or "", e.get("EntityName") or "")
                              for e in d.get("Entity") or () if isinstance(e, dict)))
        if d.get("Remove"):
            q = self.quotas.get(entity)
            if q is not None:
                q.pop(d.get("Key"), None)
                if not q:
                    del self.quotas[entity]
        else:
            self.quotas.setdefault(entity, {})[d.get("Key")] = d.get("Value")

    def _ProducerIdsRecord(self, d):
        self.producer_ids = {"nextProducerId": d.get("NextProducerId"), "brokerId": d.get("BrokerId"),
                             "brokerEpoch": d.get("BrokerEpoch", -1)}

    def _AccessControlEntryRecord(self, d):
        self.acls[d.get("Id")] = {k[0].lower() + k[1:]: d.get(k) for k in (
            "Id", "ResourceType", "ResourceName", "PatternType", "Principal", "Host", "Operation", "PermissionType")}

    def _RemoveAccessControlEntryRecord(self, d):
        if self.acls.pop(d.get("Id"), None) is None:
            raise NotApplicable("unknown_acl", f"ACL {d.get('Id')} is not in the image")

    def _VotersRecord(self, d):
        before = self.voters
        self.voters = [{"voterId": v.get("VoterId"), "voterDirectoryId": v.get("VoterDirectoryId"),
                        "endpoints": [{k[0].lower() + k[1:]: e.get(k) for k in ("Name", "Host", "Port")}
                                      for e in v.get("Endpoints") or () if isinstance(e, dict)]}
                       for v in d.get("Voters") or () if isinstance(v, dict)]
        return [diff.event("voters", before=[v["voterId"] for v in before] if before is not None else None,
                           after=[v["voterId"] for v in self.voters])]

    def _LeaderChangeMessage(self, d):
        self.quorum_leader = {"leaderId": d.get("LeaderId"),
                              "voters": [v.get("VoterId") for v in d.get("Voters") or () if isinstance(v, dict)],
                              "grantingVoters": [v.get("VoterId") for v in d.get("GrantingVoters") or ()
                                                 if isinstance(v, dict)]}
        return [diff.event("quorum_leader", leaderId=d.get("LeaderId"))]

    def _KRaftVersionRecord(self, d):
        self.kraft_version = d.get("KRaftVersion")

    def to_json(self) -> dict:
        """``topics`` (by name, partitions by id; each topic's configs), ``brokers``, ``controllers``,
        ``features``, ``configs`` (other resources), ``clientQuotas``, ``producerIds``, ``acls``,
        ``quorum`` (voters, leader, kraft.version)."""
        topics = []
        for t in sorted(self.topics.values(), key=lambda t: str(t["name"])):
            topics.append({"name": t["name"], "topicId": t["topicId"],
                           "configs": dict(sorted(self.configs.get(("TOPIC", t["name"]), {}).items())),
                           "partitions": [t["partitions"][k] for k in sorted(t["partitions"], key=_num)]})
        names = {t["name"] for t in self.topics.values()}
        return {
            "topics": topics,
            "brokers": [self.brokers[k] for k in sorted(self.brokers, key=_num)],
            "controllers": [self.controllers[k] for k in sorted(self.controllers, key=_num)],
            "features": dict(sorted(self.features.items(), key=lambda kv: str(kv[0]))),
            "configs": [{"resourceType": rt, "resourceName": rn, "configs": dict(sorted(c.items()))}
                        for (rt, rn), c in sorted(self.configs.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1])))
                        if not (rt == "TOPIC" and rn in names)],
            "clientQuotas": [{"entity": [{"entityType": a, "entityName": b} for a, b in e], "quotas": q}
                             for e, q in sorted(self.quotas.items())],
            "producerIds": self.producer_ids,
            "acls": [self.acls[k] for k in sorted(self.acls, key=str)],
            "quorum": {"voters": self.voters, "leader": self.quorum_leader, "kraftVersion": self.kraft_version},
        }


def _num(k):
    return (0, k, "") if isinstance(k, int) else (1, 0, str(k))


class MetadataReplay:
    """The ``metadata`` report: the image at ``at_offset`` (the records up to and including that
    offset), at ``at_time`` (ms: the records whose timestamp is at most that), or at the end; with
    ``changes=(A, B)``, the changes the records A..B (inclusive; None: open) made instead.

    JSON (``--json``): one ``{"type": "metadataImage", "lastOffset", "lastTimestamp",
    "lastTimestampIso", "snapshot": {"path", "endOffset", "lastContainedLogTimestamp"} | null,
    "recordsApplied", "ignoredRecords": {type: count}, **Image.to_json()}``; with ``changes``, one
    object per change (see :mod:`.diff`) and then ``{"type": "metadataChanges", "from", "to", "count"}``.
    """

    topics = (TOPIC,)
    records_as = "metadata"  # how the records of a file outside a partition directory are decoded
    formats = ("kafka-log",)  # the inputs it reads: Kafka log segments (and snapshots)

    def __init__(self, at_offset: int | None = None, at_time: int | None = None, changes: tuple | None = None):
        given = [x is not None for x in (at_offset, at_time, changes)]
        if sum(given) > 1:
            raise ValueError("--at-offset, --at-time and --changes: give one")
        self.at_offset, self.at_time, self.changes = at_offset, at_time, changes
        if changes is not None and changes[0] is not None and changes[1] is not None and changes[1] < changes[0]:
            raise ValueError("--changes A..B ends before it starts")
        self.image = Image()
        self.problems: list = []
        self.events: list = []
        self.snapshot: dict | None = None  # the snapshot replayed
        self.pending_txn: list | None = None
        self.last: tuple = (None, None)  # (offset, timestamp) of the last record applied
        self.applied = 0
        self.ignored: dict = {}
        self.done = False
        self.first_log_offset = None

    # -- which files
    def _limit(self) -> int | None:
        """The highest offset whose records may come from a snapshot (None: any)."""
        if self.at_offset is not None:
            return self.at_offset + 1
        if self.changes is not None:
            return self.changes[0] if self.changes[0] is not None else 0
        return None

    def choose(self, paths) -> dict:
        """The segments of ``__cluster_metadata`` and one snapshot: the newest whose end offset is at
        most the target (``--at-offset N``: N + 1, the image after N; ``--changes A..B``: A); with
        ``--at-time``, every snapshot, newest last, and the newest whose header's
        LastContainedLogTimestamp is at most the time is replayed. Snapshots come first, then the log.
        The files at the top of a log directory are passed over; KRaft's ``bootstrap.checkpoint`` is
        read (as a log) only when nothing else is: the log begins with its records."""
        out, snaps, logs, bootstrap = {}, [], [], []
        limit = self._limit()
        for p in paths:
            topic = None if p == "-" else topic_of(p)
            end = snapshot_end(p)
            if log_dir_file(p):
                out[p] = ""
                if os.path.basename(p) == BOOTSTRAP:
                    bootstrap.append(p)
            elif topic is not None and topic not in self.topics:
                out[p] = ""
                out[os.path.dirname(p)] = other_topic(topic, self.topics)
            elif end is not None:
                snaps.append((end, p))
            elif topic is None or p.endswith(".log"):
                logs.append(p)
            else:
                out[p] = ""
        snaps.sort()
        usable = [s for s in snaps if limit is None or s[0] <= limit]
        if self.at_time is None:
            usable = usable[-1:]
        for end, p in snaps:
            if (end, p) not in usable:
                out[p] = "a snapshot the replay does not need"
        for p in bootstrap:  # KRaft's bootstrap metadata: read only when there is nothing else to read
            if usable or logs:
                out[p] = "KRaft's bootstrap metadata: the __cluster_metadata log starts with its records"
            else:
                out.pop(p)
                logs.append(p)
        chosen = {p: None for _, p in usable}
        chosen.update({p: None for p in logs})
        chosen.update(out)
        return chosen

    # -- feeding
    def feed(self, path: str, unit: dict) -> None:
        end = snapshot_end(path)
        if end is not None and path != self._snap_path:
            self._settle()
            self._snap_path, self._snap_skip = path, False
            self._snap = ({"path": path, "endOffset": end, "lastContainedLogTimestamp": None}, Image(), {})
        for rec, batch in records_of(path, unit):
            if end is None:
                self._settle()
                self._log_record(rec, batch, path)
            elif not self._snap_skip:
                self._snapshot_record(rec, batch, path)

    _snap_path = None
    _snap = None
    _snap_skip = False

    def _settle(self) -> None:
        """The snapshot read last is the base of the replay (snapshots come oldest first; one too new
        for ``--at-time`` is passed over)."""
        if self._snap is not None and not self._snap_skip:
            self.snapshot, self.image, self.ignored = self._snap
            self.last = (self.snapshot["endOffset"] - 1, self.snapshot["lastContainedLogTimestamp"])
        self._snap = None

    def _snapshot_record(self, rec, batch, path) -> None:
        value = decoded(rec, "valueDecoded")
        if value is None:
            self._undecoded(rec, batch, path)
            return
        info, image, ignored = self._snap
        if value.get("type") == "SnapshotHeaderRecord":
            ts = value["data"].get("LastContainedLogTimestamp")
            info["lastContainedLogTimestamp"] = ts
            if self.at_time is not None and isinstance(ts, int) and ts > self.at_time:
                self._snap_skip = True  # too new for --at-time
            return
        if value.get("type") == "SnapshotFooterRecord":
            return
        self._apply(image, value, rec, batch, path, ignored, collect=False)

    def _log_record(self, rec, batch, path) -> None:
        off, ts = rec.get("offset"), rec.get("timestamp")
        if not isinstance(off, int):
            return
        if self.snapshot is not None and off < self.snapshot["endOffset"]:
            return  # already in the snapshot
        if self.first_log_offset is None:
            self.first_log_offset = off
            base = self.snapshot["endOffset"] if self.snapshot else 0
            if off > base:
                w = where(path, rec, batch)
                what = f"the snapshot ends at offset {base}" if self.snapshot else "there is no snapshot"
                self.problems.append(problem("missing_history", f"the log starts at offset {off} and {what}: "
                                             f"the records {base}..{off - 1} are missing from the image", path,
                                             w["position"], off))
        if self.done:
            return
        if (self.at_offset is not None and off > self.at_offset) or \
                (self.changes is not None and self.changes[1] is not None and off > self.changes[1]) or \
                (self.at_time is not None and isinstance(ts, int) and ts > self.at_time):
            self.done = True
            return
        value = decoded(rec, "valueDecoded")
        if value is None:
            if batch.get("isControl") and rec.get("controlType") in ("COMMIT", "ABORT"):
                return
            self._undecoded(rec, batch, path)
            return
        collect = self.changes is not None and (self.changes[0] is None or off >= self.changes[0])
        self._apply(self.image, value, rec, batch, path, self.ignored, collect)
        self.last = (off, ts)

    def _undecoded(self, rec, batch, path) -> None:
        undecoded(rec, batch, path, self.problems, "valueDecoded", "a __cluster_metadata record")

    def _apply(self, image: Image, value: dict, rec, batch, path, ignored: dict, collect: bool) -> None:
        rtype = value.get("type")
        data = value["data"]
        if rtype == "BeginTransactionRecord":
            self.pending_txn = []
            return
        if rtype in ("EndTransactionRecord", "AbortTransactionRecord"):
            pending, self.pending_txn = self.pending_txn or [], None
            if rtype == "EndTransactionRecord":
                for args in pending:
                    self._apply_one(image, *args)
            return
        args = (rtype, data, rec, batch, path, ignored, collect)
        if self.pending_txn is not None:
            self.pending_txn.append(args)
        else:
            self._apply_one(image, *args)

    def _apply_one(self, image: Image, rtype, data, rec, batch, path, ignored, collect) -> None:
        if rtype in IGNORED or not hasattr(image, "_" + str(rtype)):
            ignored[rtype] = ignored.get(rtype, 0) + 1
            return
        w = where(path, rec, batch)
        try:
            events = image.apply(rtype, data)
        except NotApplicable as e:
            self.problems.append(problem(e.code, f"{rtype} does not apply: {e}", path, w["position"],
                                         w["recordOffset"]))
            return
        self.applied += 1
        if collect:
            ts = rec.get("timestamp")
            for ev in events:
                ev.update({"offset": w["recordOffset"], "timestamp": ts, "timestampIso": iso_ms(ts),
                           "path": path, "position": w["position"], "record": rtype})
                self.events.append(ev)

    # -- the outcome
    def finish(self) -> Outcome:
        self._settle()
        out = Outcome(problems=self.problems)
        if self.pending_txn:
            out.blocks.append(("note", f"{len(self.pending_txn)} record(s) of a metadata transaction without "
                                       "its EndTransactionRecord: not applied"))
        if self.changes is not None:
            lo, hi = self.changes
            out.objects.extend(self.events)
            out.objects.append({"type": "metadataChanges", "from": lo, "to": hi, "count": len(self.events)})
            out.blocks.append(diff.events_table(self.events, lo, hi))
            return out
        off, ts = self.last
        img = {"type": "metadataImage", "lastOffset": off, "lastTimestamp": ts, "lastTimestampIso": iso_ms(ts),
               "snapshot": self.snapshot, "recordsApplied": self.applied,
               "ignoredRecords": dict(sorted(self.ignored.items(), key=lambda kv: str(kv[0]))),
               **self.image.to_json()}
        out.objects.append(img)
        out.blocks.append(image_tree(img))
        return out


def _ids(xs) -> str:
    return "[" + ",".join(str(x) for x in xs) + "]"


def image_tree(img: dict) -> tuple:
    """The terminal tree of an image: ``("tree", label, children)``."""
    if img["lastOffset"] is None:
        at = " at offset -: no metadata record applied"
    else:
        at = f" at offset {img['lastOffset']}" + (f" ({img['lastTimestampIso']})" if img["lastTimestampIso"] else "")
    snap = img["snapshot"]
    label = f"metadata image{at}" + (f", from snapshot {os.path.basename(snap['path'])}" if snap else "")
    topics = []
    for t in img["topics"]:
        parts = []
        for p in t["partitions"]:
            line = (f"partition {p['partition']}: leader {p['leader']} (epoch {p['leaderEpoch']}), isr {_ids(p['isr'])}, "
                    f"replicas {_ids(p['replicas'])}, partition epoch {p['partitionEpoch']}")
            if p["elr"] or p["lastKnownElr"]:
                line += f", elr {_ids(p['elr'])}, last known elr {_ids(p['lastKnownElr'])}"
            if p["addingReplicas"] or p["removingReplicas"]:
                line += f", adding {_ids(p['addingReplicas'])}, removing {_ids(p['removingReplicas'])}"
            parts.append((line, []))
        parts += [(f"config {k}={v}", []) for k, v in t["configs"].items()]
        topics.append((f"{t['name']} ({t['topicId']})", parts))
    brokers = []
    for b in img["brokers"]:
        state = "fenced" if b["fenced"] else "unfenced"
        if b["inControlledShutdown"]:
            state += ", in controlled shutdown"
        eps = ", ".join(f"{e['name']}://{e['host']}:{e['port']}" for e in b["listeners"])
        brokers.append((f"broker {b['id']}: {state}, epoch {b['epoch']}, incarnation {b['incarnationId']}, "
                        f"rack {b['rack'] if b['rack'] is not None else '-'}, {eps}", []))
    q = img["quorum"]
    quorum = []
    if q["voters"] is not None:
        quorum.append((f"voters {_ids(v['voterId'] for v in q['voters'])}", []))
    if q["leader"] is not None:
        quorum.append((f"leader {q['leader']['leaderId']}", []))
    if q["kraftVersion"] is not None:
        quorum.append((f"kraft.version {q['kraftVersion']}", []))
    children = [(f"topics ({len(topics)})", topics), (f"brokers ({len(brokers)})", brokers)]
    if img["controllers"]:
        children.append((f"controllers {_ids(c['id'] for c in img['controllers'])}", []))
    children.append(("features", [(f"{k}={v}", []) for k, v in img["features"].items()]))
    if quorum:
        children.append(("quorum", quorum))
    if img["configs"]:
        children.append(("configs", [(f"{c['resourceType']} {quote(c['resourceName'])}",
                                      [(f"{k}={v}", []) for k, v in c["configs"].items()]) for c in img["configs"]]))
    if img["clientQuotas"]:
        children.append(("client quotas", [(", ".join(f"{e['entityType']}={e['entityName']}" for e in q["entity"]),
                                            [(f"{k}={v}", []) for k, v in q["quotas"].items()])
                                           for q in img["clientQuotas"]]))
    if img["producerIds"]:
        children.append((f"next producer id {img['producerIds']['nextProducerId']}", []))
    if img["acls"]:
        children.append((f"ACLs ({len(img['acls'])})", [(f"{a['principal']} {a['permissionType']} {a['operation']} on "
                                                         f"{a['resourceType']} {quote(a['resourceName'])}", [])
                                                        for a in img["acls"]]))
    return ("tree", label, children)
