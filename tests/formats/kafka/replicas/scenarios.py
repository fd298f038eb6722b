"""The replica scenarios of issue 23, declared once: ``make_java_replicas.py`` hands them to Kafka's own
code (``KafkaReplicasWriter.java``: kafka-clients' ``MemoryRecords`` writes the batches, kafka-storage's
``LeaderEpochFileCache``/``LeaderEpochCheckpointFile`` the epochs, and answers the truncation), and the
tests build the same copies with kafka-python's batch builder (:func:`build_with_kafka_python`).

A scenario: ``copies`` (broker directory name -> copy), ``damage`` (applied to the written files
afterwards, as a disk would: ``flip`` a byte of the batch at a base offset, ``drop`` a segment), and
what it shows. A copy: ``id`` (``node.id`` in ``meta.properties``), ``hw`` (its
``replication-offset-checkpoint``), ``rp`` (``recovery-point-offset-checkpoint``), ``rolls`` (the base
offsets of its segments after the first), ``log``: ``(baseOffset, records, partitionLeaderEpoch)``
batches appended in order, or ``("epoch", epoch, startOffset)``: the epoch the broker assigned on
becoming leader at that log end offset (``Partition.makeLeader``), with no batch; ``checkpoint``: a
text that replaces its ``leader-epoch-checkpoint`` (damage).

Record ``i`` of a batch is offset ``o``: key ``k<o>``, value ``v<o>-e<epoch>`` (different writes at
the same offset differ), timestamp ``1700000000000 + 1000*o``; producerId 4242, producerEpoch 0,
baseSequence = baseOffset.
"""

from __future__ import annotations

import os

TOPIC, PARTITION = "orders", 0
TOPIC_ID = "mwNNfB0lTuiTmNYYnpkTyQ"  # Uuid(0x9b034d7c1d254ee8L, 0x9398d6189e9913c9L) as Kafka prints it
CLUSTER_ID = "wireinspect-replicas"
PRODUCER_ID, BASE_TIME = 4242, 1_700_000_000_000

SYNCED = [(0, 3, 0), (3, 3, 0), (6, 4, 0), (10, 5, 1), (15, 5, 1)]


def _copy(id_, log, hw, rp=None, rolls=(10,), checkpoint=None):
    c = {"id": id_, "log": list(log), "hw": hw, "rp": hw if rp is None else rp, "rolls": list(rolls)}
    if checkpoint is not None:
        c["checkpoint"] = checkpoint
    return c


SCENARIOS = {
    "in-sync": {
        "what": "two copies in sync: the same batches, epochs and high watermark",
        "copies": {"broker-1": _copy(1, SYNCED, 20), "broker-2": _copy(2, SYNCED, 20)}},
    "follower-behind": {
        "what": "broker-2 stopped fetching at offset 15 (its high watermark 10): a prefix of broker-1",
        "copies": {"broker-1": _copy(1, SYNCED, 20), "broker-2": _copy(2, SYNCED[:4], 10, 15)}},
    "unclean-election": {
        "what": "broker-1 led epoch 1 alone (offsets 10..19 committed on it); broker-2, out of sync at 10, was "
                "elected uncleanly in epoch 2 and wrote other records at offsets 10..17",
        "copies": {"broker-1": _copy(1, SYNCED, 20),
                   "broker-2": _copy(2, SYNCED[:3] + [(10, 4, 2), (14, 4, 2)], 18)}},
    "kip-279": {
        "what": "KIP-279's double fail-over: broker-1 wrote offsets 0-1 in epoch 1, broker-2 had offset 0, led "
                "epoch 2 and wrote offset 1; broker-1 came back as leader of epoch 3 and wrote offset 2",
        "copies": {"broker-1": _copy(1, [(0, 1, 1), (1, 1, 1), ("epoch", 3, 2), (2, 1, 3)], 1, rolls=()),
                   "broker-2": _copy(2, [(0, 1, 1), ("epoch", 2, 1), (1, 1, 2)], 1, rolls=())}},
    "bit-flip": {
        "what": "in sync, then one byte of broker-2's batch at offset 6 flipped on disk: its CRC fails",
        "copies": {"broker-1": _copy(1, SYNCED, 20), "broker-2": _copy(2, SYNCED, 20)},
        "damage": [("flip", "broker-2", 6)]},
    "segment-missing": {
        "what": "in sync, rolled at 6 and 10; broker-2's segment 00000000000000000006.log is gone",
        "copies": {"broker-1": _copy(1, SYNCED, 20, rolls=(6, 10)), "broker-2": _copy(2, SYNCED, 20, rolls=(6, 10))},
        "damage": [("drop", "broker-2", 6)]},
    "rolled-differently": {
        "what": "the same batches, segments rolled at 10 on broker-1 and at 6 and 15 on broker-2",
        "copies": {"broker-1": _copy(1, SYNCED, 20), "broker-2": _copy(2, SYNCED, 20, rolls=(6, 15))}},
    "damaged-checkpoint": {
        "what": "in sync, but broker-2's leader-epoch-checkpoint has a malformed line (a letter O for a zero)",
        "copies": {"broker-1": _copy(1, SYNCED, 20), "broker-2": _copy(2, SYNCED, 20, checkpoint="0\n2\n0 0\n1 1O\n")}},
    "three-copies": {
        "what": "broker-1 and broker-2 in sync (epochs 0, 2, 4); broker-3 led epochs 1 and 3 on its own: "
                "following broker-1 it truncates in two rounds (KIP-279: epoch 2 is unknown to it)",
        "copies": {"broker-1": _copy(1, SYNCED[:3] + [(10, 5, 2), (15, 5, 2), (20, 5, 4)], 25, rolls=(10, 20)),
                   "broker-2": _copy(2, SYNCED[:3] + [(10, 5, 2), (15, 5, 2), (20, 5, 4)], 25, rolls=(15,)),
                   "broker-3": _copy(3, SYNCED[:2] + [(6, 2, 1), (8, 4, 1), (12, 4, 3)], 8, 16, rolls=(8,))}},
}


def spec_text() -> str:
    """The scenarios in the line format ``KafkaReplicasWriter.java`` reads: ``S name``, ``C copy id hw rp
    rolls`` (rolls comma separated, ``-`` for none), ``B base count epoch``, ``E epoch start``, ``D text``
    (a damaged checkpoint, ``|`` for line breaks)."""
    out = []
    for name, sc in SCENARIOS.items():
        out.append(f"S {name}")
        for cname, c in sc["copies"].items():
            out.append(f"C {cname} {c['id']} {c['hw']} {c['rp']} {','.join(map(str, c['rolls'])) or '-'}")
            for e in c["log"]:
                out.append(f"E {e[1]} {e[2]}" if e[0] == "epoch" else f"B {e[0]} {e[1]} {e[2]}")
            if "checkpoint" in c:
                out.append("D " + c["checkpoint"].replace("\n", "|"))
    return "\n".join(out) + "\n"


def record(offset: int, epoch: int) -> tuple[bytes, bytes, int]:
    """``(key, value, timestamp)`` of the record at ``offset`` written in ``epoch``."""
    return f"k{offset}".encode(), f"v{offset}-e{epoch}".encode(), BASE_TIME + 1000 * offset


def apply_damage(root: str, name: str) -> None:
    """Damage the written copies of scenario ``name`` under ``root/<name>/`` as its ``damage`` says."""
    for kind, cname, base in SCENARIOS[name].get("damage", ()):
        pdir = os.path.join(root, name, cname, f"{TOPIC}-{PARTITION}")
        if kind == "drop":
            os.remove(os.path.join(pdir, f"{base:020d}.log"))
            continue
        for seg in sorted(f for f in os.listdir(pdir) if f.endswith(".log")):
            path = os.path.join(pdir, seg)
            data = bytearray(open(path, "rb").read())
            pos = 0
            while pos + 12 <= len(data):
                b = int.from_bytes(data[pos:pos + 8], "big")
                n = int.from_bytes(data[pos + 8:pos + 12], "big")
                if b == base:
                    data[pos + 12 + n - 2] ^= 0x04  # a bit of the last record's value
                    open(path, "wb").write(bytes(data))
                    break
                pos += 12 + n


def segment_of(c: dict, base: int) -> int:
    """The base offset of the segment of copy ``c`` that a batch at ``base`` goes to."""
    seg = 0
    for r in c["rolls"]:
        if base >= r:
            seg = r
    return seg


def build_with_kafka_python(root: str, name: str) -> None:
    """Write scenario ``name``'s copies under ``root/<name>/`` with kafka-python's
    ``DefaultRecordBatchBuilder`` (partitionLeaderEpoch and baseOffset set in the header, which the
    CRC does not cover), leader-epoch and offset checkpoints as Kafka writes them, then the damage."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    sc = SCENARIOS[name]
    for cname, c in sc["copies"].items():
        broker = os.path.join(root, name, cname)
        pdir = os.path.join(broker, f"{TOPIC}-{PARTITION}")
        os.makedirs(pdir)
        segs: dict[int, bytearray] = {0: bytearray()}
        for r in c["rolls"]:
            segs[r] = bytearray()
        epochs: list[tuple[int, int]] = []
        end = 0
        for e in c["log"]:
            if e[0] == "epoch":
                epochs = _assign(epochs, e[1], e[2])
                continue
            base, count, epoch = e
            b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                          producer_id=PRODUCER_ID, producer_epoch=0, base_sequence=base,
                                          batch_size=1 << 20)
            for i in range(count):
                k, v, ts = record(base + i, epoch)
                b.append(i, timestamp=ts, key=k, value=v, headers=[])
            data = bytearray(b.build())
            data[0:8] = base.to_bytes(8, "big")
            data[12:16] = epoch.to_bytes(4, "big", signed=True)
            segs[segment_of(c, base)] += data
            epochs = _assign(epochs, epoch, base)
            end = base + count
        for seg, data in segs.items():
            with open(os.path.join(pdir, f"{seg:020d}.log"), "wb") as f:
                f.write(data)
        text = c.get("checkpoint") or "0\n%d\n%s" % (len(epochs), "".join(f"{e} {s}\n" for e, s in epochs))
        with open(os.path.join(pdir, "leader-epoch-checkpoint"), "w") as f:
            f.write(text)
        with open(os.path.join(pdir, "partition.metadata"), "w") as f:
            f.write(f"version: 0\ntopic_id: {TOPIC_ID}\n")
        for fname, v in (("replication-offset-checkpoint", c["hw"]), ("recovery-point-offset-checkpoint", c["rp"])):
            with open(os.path.join(broker, fname), "w") as f:
                f.write(f"0\n1\n{TOPIC} {PARTITION} {v}\n")
        with open(os.path.join(broker, "meta.properties"), "w") as f:
            f.write(f"node.id={c['id']}\nversion=1\ncluster.id={CLUSTER_ID}\n")
        assert end <= 1 << 20
    apply_damage(root, name)


def _assign(epochs, epoch, start):
    """``LeaderEpochFileCache.assign`` as an append does it (test-side twin, for building files)."""
    if epochs and epochs[-1][0] == epoch and start >= epochs[-1][1]:
        return epochs
    return [(e, s) for e, s in epochs if e < epoch and s < start] + [(epoch, start)]
