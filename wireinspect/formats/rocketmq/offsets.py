"""``wireinspect rocketmq-offsets STORE``: per consumer group, topic and queue, the committed offset
against the consume queue, read from a RocketMQ store directory (nothing is asked of a broker).

* the committed offset: ``config/consumerOffset.json``'s ``offsetTable`` (``"topic@group": {queueId:
  offset}``, ``ConsumerOffsetManager``); when it does not parse, ``consumerOffset.json.bak``, as
  ``ConfigManager.load`` falls back to it (said);
* the queue's ``minOffset`` and ``maxOffset`` (``ConsumeQueue.getMinOffsetInQueue``/``getMaxOffsetInQueue``:
  one past the last unit ``ConsumeQueue.recover`` keeps) from ``consumequeue/<topic>/<queueId>/``, and the
  lag ``maxOffset - committed`` (what ``mqadmin consumerProgress`` prints as diff);
* the next message to consume: the consume-queue unit at the committed offset gives ``commitLogOffset``
  and ``size``, and the commit-log record there its ``storeTimestamp`` (ms since the epoch): how far
  behind the consumer is in time. In DLedger mode (``dledger-<selfId>/`` holds the commit log) the record
  is the body of the DLedger entry at ``commitLogOffset - 48`` (storedir.DLedgerMessages).

Problems (exit status 1): ``offset_beyond_queue_end`` (committed past the queue's end: the consume queue
lost units, e.g. cut by recovery, and the consumer will be reset), ``consume_queue_missing`` (an offset
above 0 committed for a queue with no consume-queue directory), ``next_message_unreadable`` (no valid
commit-log record where the unit points). A store without ``consumerOffset.json`` is a usage error
(exit 2, the runner's ``no file to read``). The analysis follows ``ops/analyse.py``'s contract: the
runner feeds it the ``store_config`` units of the chosen files; it reads the consume queues and the commit
log itself, only where it needs them (a unit and a record per queue).
"""

from __future__ import annotations

import os

from wireinspect.codec.times import iso_ms
from wireinspect.errors import InputError
from wireinspect.formats.kafka.internal.base_report import Outcome, miss

OFFSETS_FILE = "consumerOffset.json"


def _store_of(path: str) -> str | None:
    """The store root of ``<store>/config/consumerOffset.json`` (or its ``.bak``), else None."""
    name = os.path.basename(path)
    config = os.path.dirname(path)
    if name not in (OFFSETS_FILE, OFFSETS_FILE + ".bak") or os.path.basename(os.path.abspath(config)) != "config":
        return None
    return os.path.dirname(config) or os.path.dirname(os.path.abspath(config))


def _problem(code: str, message: str, path: str | None = None, position: int | None = None, offset=None) -> dict:
    return {"code": code, "path": path, "position": position, "offset": offset, "message": message}


class StoreOffsets:
    """The analysis of ``rocketmq-offsets`` (see the module docstring). ``group``: only this consumer
    group (None: all)."""

    records_as = None
    formats = ("rocketmq-config",)

    def __init__(self, group: str | None = None):
        self.group = group
        self.values: dict = {}  # store -> {"file": value or None, "bak": value or None, paths}
        self.paths: dict = {}

    def choose(self, paths) -> dict:
        """``consumerOffset.json`` (and its ``.bak``) of each store among ``paths``; every other file is
        passed over silently, a missing one read (to be reported), and when no store is among them the
        first says so."""
        out = {}
        for p in paths:
            store = _store_of(p) if p != "-" else None
            # (a missing path is read: the reading says it is missing, exit 2)
            out[p] = None if store is not None or (p != "-" and not os.path.exists(p)) else ""
        if paths and not any(why is None and (p == "-" or os.path.exists(p)) for p, why in out.items()):
            first = next((p for p, why in out.items() if why == ""), None)
            if first is not None:
                out[first] = f"no config/{OFFSETS_FILE} among the inputs (give a store directory or the file)"
        return out

    def feed(self, path: str, unit: dict) -> None:
        if unit.get("type") != "store_config":
            return
        store = _store_of(path)
        slot = self.values.setdefault(store, {})
        bad = any(p.get("code") == "bad_config_json" for p in unit.get("problems") or ())
        value = None if bad else unit.get("value")
        slot["bak" if path.endswith(".bak") else "file"] = (path, value)

    def _table(self, store: str, notes: list) -> tuple[str | None, dict]:
        slot = self.values[store]
        path, value = slot.get("file", (None, None))
        if value is None:
            bak_path, bak = slot.get("bak", (None, None))
            if bak is not None:
                notes.append(f"{path or os.path.join(store, 'config', OFFSETS_FILE)}: "
                             f"{'does not parse' if path else 'missing'}; offsets from {bak_path}, as the broker's "
                             "ConfigManager.load falls back to it")
                path, value = bak_path, bak
        table = value.get("offsetTable") if isinstance(value, dict) else None
        return path, table if isinstance(table, dict) else {}

    def finish(self) -> Outcome:
        from wireinspect.formats.rocketmq.storedir import dledger_mode, list_queues, scan_queue
        from wireinspect.formats.rocketmq.store import CommitLogStore

        out = Outcome()
        groups_seen = set()
        for store in sorted(self.values):
            notes: list = []
            path, table = self._table(store, notes)
            queues, why = list_queues(store)
            for w in why:
                out.problems.append(_problem("unreadable", w, store))
            by_queue = {(q.topic, q.queue_id): q for q in queues}
            scanned = set()
            cl_dir = os.path.join(store, "commitlog")
            try:
                dl = dledger_mode(store, os.listdir(store))
            except OSError:
                dl = None
            if dl is not None:  # DLedger mode: the messages are in dledger-<id>/data (entry pos + 48)
                log = dl.messages()
                notes.append(f"DLedger mode: the next messages read from {os.path.join(store, dl.name, 'data')}")
            else:
                log = CommitLogStore(cl_dir) if os.path.isdir(cl_dir) else None
            if log is None:
                notes.append(f"{cl_dir}: no commit log: the next messages' times are not known")
            rows = []
            try:
                for key in sorted(table):
                    if not isinstance(key, str) or "@" not in key or not isinstance(table[key], dict):
                        continue  # bad_config_value, reported by the file's own reading
                    topic, group = key.rsplit("@", 1)
                    groups_seen.add(group)
                    if self.group is not None and group != self.group:
                        continue
                    for qid_key in sorted(table[key], key=lambda k: (not str(k).lstrip("-").isdigit(), str(k))):
                        committed = table[key][qid_key]
                        try:
                            qid = int(qid_key)
                        except (TypeError, ValueError):
                            continue
                        if not isinstance(committed, int) or isinstance(committed, bool):
                            continue
                        q = by_queue.get((topic, qid))
                        if q is not None and (topic, qid) not in scanned:
                            for w in scan_queue(q, None):
                                out.problems.append(_problem("unreadable", w, store))
                            scanned.add((topic, qid))
                        obj = self._row(store, path, group, topic, qid, committed, q, log, out)
                        out.objects.append(obj)
                        rows.append(obj)
            finally:
                if log is not None:
                    log.close()
            title = f"consumer offsets: {store}"
            out.blocks.append(("table", title, ["group", "topic", "queue", "committed", "min", "max", "lag",
                                                "next message stored"],
                               [[r["group"], r["topic"], r["queueId"], r["committedOffset"], _dash(r["minOffset"]),
                                 _dash(r["maxOffset"]), _dash(r["lag"]), _next_text(r)] for r in rows]))
            for n in notes:
                out.blocks.append(("note", n))
        if self.group is not None and self.group not in groups_seen:
            out.misses.append(miss("group", self.group, groups_seen))
        return out

    def _row(self, store, path, group, topic, qid, committed, q, log, out) -> dict:
        obj = {"type": "consumer_offset", "store": store, "group": group, "topic": topic, "queueId": qid,
               "committedOffset": committed, "minOffset": None, "maxOffset": None, "lag": None, "nextMessage": None}
        where = f"{topic}@{group} queue {qid}"
        if q is None or q.maxOffset is None:
            obj["note"] = "no consume queue" if q is None else "empty consume queue"
            if committed > 0:
                out.problems.append(_problem(
                    "consume_queue_missing", f"{where}: offset {committed} committed, but "
                    f"consumequeue/{topic}/{qid}/ {'does not exist' if q is None else 'holds no unit'}", path))
            else:
                obj["lag"] = 0
            return obj
        obj["minOffset"], obj["maxOffset"] = q.minOffset, q.maxOffset
        obj["lag"] = q.maxOffset - committed
        if committed > q.maxOffset:
            out.problems.append(_problem(
                "offset_beyond_queue_end", f"{where}: committed offset {committed} is past the consume queue's "
                f"maxOffset {q.maxOffset}: units the consumer read are gone (cut by recovery?); the broker corrects "
                "the consumer's offset", path))
            return obj
        if q.minOffset is not None and committed < q.minOffset:
            obj["note"] = f"below minOffset {q.minOffset}: those messages are deleted; consumption resumes at it"
            return obj
        if committed == q.maxOffset or log is None:
            return obj
        try:
            unit = q.unit_at(committed)
        except InputError as e:
            out.problems.append(_problem("next_message_unreadable", f"{where}: {e}", path))
            return obj
        if unit is None:
            return obj
        phys, size, _ = unit
        try:
            rec = log.record_at(phys)
        except InputError as e:
            rec, why = None, str(e)
        else:
            why = "no commit-log file holds it" if rec is None else None
        nxt = {"queueOffset": committed, "commitLogOffset": phys, "size": size, "storeTimestamp": None}
        obj["nextMessage"] = nxt
        if rec is not None and rec.type == "record" and rec.valid:
            ts = rec.values.get("storeTimestamp")
            nxt["storeTimestamp"], nxt["storeTimestampIso"] = ts, iso_ms(ts)
        else:
            if rec is not None:
                why = "not a valid record (" + (",".join(p.code for p in rec.problems) or rec.type) + ")"
            out.problems.append(_problem("next_message_unreadable", f"{where}: the next message at commitLogOffset "
                                         f"{phys}: {why}", path))
        return obj


def _dash(v):
    return "-" if v is None else v


def _next_text(r: dict) -> str:
    n = r.get("nextMessage")
    if n is None:
        return r.get("note") or ("caught up" if r.get("lag") == 0 else "-")
    return n.get("storeTimestampIso") or f"unreadable (commitLogOffset {n['commitLogOffset']})"
