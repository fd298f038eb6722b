"""Formats for RocketMQ: ``rocketmq-commitlog``, ``rocketmq-consumequeue``, ``rocketmq-index``,
``rocketmq-remoting`` (a raw dump of one direction of a remoting connection) and the store's
bookkeeping: ``rocketmq-checkpoint``, ``rocketmq-abort``, ``rocketmq-lock``, ``rocketmq-config``
(their readers: :mod:`.bookkeeping`).

The store's files are recognised by their names and places (``<store>/checkpoint``,
``<store>/config/topics.json``...), with the confidence :data:`~wireinspect.catalog.NAMED` (95) or more
when the place says it, so that no content guess of another format ever reads them
(``catalog.recognise``)."""

from __future__ import annotations

import dataclasses
import os
import re
import struct

from wireinspect.formats.base import Format, MessageColumns
from wireinspect.formats.common import NOTE_TYPES, encode_unparsed
from wireinspect.formats.replica import Replication, hooks_of
from wireinspect.inputs.source import Source

DIGITS20 = re.compile(r"([0-9]{20})$")
INDEX_NAME = re.compile(r"^[0-9]{17}$")
_MAGICS = (0xDAA320A7, 0xDAA320AB)


def _parts(name: str) -> tuple[str, str]:
    name = (name or "").replace(os.sep, "/")
    return os.path.basename(name), os.path.basename(os.path.dirname(name))


def file_base(name: str) -> int | None:
    """The commit-log offset of a file's first byte: its name's trailing 20 digits."""
    m = DIGITS20.search(os.path.basename(name or ""))
    return int(m.group(1)) if m else None


def _commitlog_sniff(head: bytes, name: str) -> int:
    base, parent = _parts(name)
    if parent == "commitlog" and re.fullmatch(r"[0-9]{20}", base):
        return 95
    if len(head) >= 8:
        total, magic = struct.unpack_from(">iI", head, 0)
        if magic in _MAGICS and total >= 91:
            return 92 if "commitlog" in base else 80
        if magic == 0xCBD43194 and total > 0:
            return 50
    return 0


def _commitlog_units(source: Source, opts, body: bool = True):
    from wireinspect.formats.rocketmq.commitlog import iter_commitlog

    return iter_commitlog(source, file_base=file_base(source.path or source.name), body=body,
                          limit=opts.max_decompressed, max_record=opts.max_batch)


def _commitlog_check(source: Source, opts):
    return _commitlog_units(source, opts, body=opts.deep)


def pad_to_input_size(placed, out_path, opts, source_path=None, notes=None) -> list:
    """RocketMQ maps whole files (``MappedFileQueue.load`` refuses a file whose length is not the
    configured size): extend the recovered copy with zeros to the input's length. Nothing else is
    written, so no extra paths are returned."""
    size = next((k.file_size for k, _ in placed if k.file_size), None)  # kept entries (ops.recover.KeptEntry)
    if size and os.path.getsize(out_path) < size:
        with open(out_path, "r+b") as f:
            f.truncate(size)
            f.flush()
            os.fsync(f.fileno())
    return []


def encode_commitlog(obj: dict, ctx) -> list:
    """A ``rocketmq-commitlog`` object -> ``[(None, bytes)]``: a ``record``
    (:func:`~wireinspect.formats.rocketmq.commitlog.record_bytes`), the ``blank`` end marker and the
    zeros after it, an ``unparsed`` range (:func:`~wireinspect.formats.common.encode_unparsed`:
    ``rawBytes``, ``rawZeros``, or the zeros of unused space). Raises EncodeError."""
    from wireinspect.errors import EncodeError
    from wireinspect.formats.rocketmq.commitlog import blank_bytes, record_bytes

    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    t = obj.get("type")
    if t == "record":
        return [(None, record_bytes(obj, ctx))]
    if t == "blank":
        return [(None, blank_bytes(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-commitlog (record, blank, unparsed)")


def _encode_consumequeue(obj: dict, ctx) -> list:
    from wireinspect.formats.rocketmq.store import encode_consumequeue

    return encode_consumequeue(obj, ctx)


def _encode_index(obj: dict, ctx) -> list:
    from wireinspect.formats.rocketmq.store import encode_index

    return encode_index(obj, ctx)


def _encode_remoting(obj: dict, ctx) -> list:
    """A ``rocketmq-remoting`` object (a raw dump of one direction) -> ``[(None, bytes)]``: frames
    through the stream protocol's encoder, unparsed ranges in chunks (a file's zeros)."""
    from wireinspect.formats.rocketmq.stream import PROTOCOL

    if isinstance(obj, dict) and obj.get("type") == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    data = PROTOCOL.encode(obj, ctx)
    return [(None, data)] if data else []


def _cq_sniff(head: bytes, name: str) -> int:
    path = (name or "").replace(os.sep, "/")
    if "consumequeue/" not in path:  # CQ_PATH cannot match: the store module is not imported for other files
        return 0
    from wireinspect.formats.rocketmq.store import CQ_PATH

    return 95 if CQ_PATH.search(path) else 0


def _cq_units(source: Source, opts):
    from wireinspect.formats.rocketmq.store import iter_consumequeue

    return iter_consumequeue(source, commitlog=opts.commitlog)


def _index_sniff(head: bytes, name: str) -> int:
    base, parent = _parts(name)
    if INDEX_NAME.match(base):
        return 95 if parent == "index" else 60
    return 0


def _index_units(source: Source, opts):
    from wireinspect.formats.rocketmq.store import iter_index

    return iter_index(source)


def _remoting_sniff(head: bytes, name: str) -> int:
    from wireinspect.formats.rocketmq.stream import PROTOCOL

    s = PROTOCOL.sniff(head[:64])
    return 75 if s >= 90 else min(s, 40)


def _remoting_units(source: Source, opts):
    from wireinspect.formats.rocketmq.stream import iter_stream

    return iter_stream(source, opts)


_replica = hooks_of("wireinspect.formats.rocketmq.replica")  # (imported when first called)


def _looks_like_copy(names) -> bool:
    from wireinspect.formats.rocketmq.replica import looks_like_copy

    return looks_like_copy(names)


ROCKETMQ_REPLICATION = Replication(
    term="term",
    rule="RocketMQ's classic master/slave HA: the slave reports its max physical offset and the master sends "
         "from there; nothing is truncated (store/.../ha/HAService.java: HAClient.reportSlaveMaxOffset, "
         "HAConnection.WriteSocketService, dispatchReadRequest)",
    read=_replica("read_copy"), truncation=_replica("truncation"), records=_replica("records"),
    identity=_replica("identity"), family="RocketMQ's HA", has_terms=False, sniff=_looks_like_copy,
    extra=_replica("compare_queues"))

COMMITLOG = Format(
    id="rocketmq-commitlog",
    description="RocketMQ commit-log file: message records (magic V1 0xDAA320A7 / V2 0xDAA320AB) and the BLANK "
                "end-of-file marker",
    recognised_by="a 20-digit file name inside a commitlog directory, or magic code 0xDAA320A7/0xDAA320AB at byte 4",
    sniff=_commitlog_sniff,
    units=_commitlog_units,
    check=_commitlog_check,
    recoverable=True,
    rebuild=pad_to_input_size,
    honours=frozenset({"offsets", "content"}),
    encode=encode_commitlog,
    encode_types=frozenset({"record", "blank"}),
    replication=ROCKETMQ_REPLICATION,
)

CONSUMEQUEUE = Format(
    id="rocketmq-consumequeue",
    description="RocketMQ consume-queue file: 20-byte units (commitLogOffset, size, tagsCode), checked against "
                "the commit log when <store>/commitlog is beside it",
    recognised_by="path consumequeue/<topic>/<queueId>/<20 digits>",
    sniff=_cq_sniff,
    units=_cq_units,
    recoverable=True,
    rebuild=pad_to_input_size,
    honours=frozenset({"commitlog", "offsets"}),
    encode=_encode_consumequeue,
    encode_types=frozenset({"cq_unit"}),
)

INDEX = Format(
    id="rocketmq-index",
    description="RocketMQ index file: 40-byte header, hash slots, 20-byte entries (keyHash, phyOffset, timeDiff, "
                "prevIndex)",
    recognised_by="a 17-digit (yyyyMMddHHmmssSSS) file name, inside an index directory",
    sniff=_index_sniff,
    units=_index_units,
    encode=_encode_index,
    encode_types=frozenset({"index_header", "index_slots", "index_entry"}),
)

REMOTING = Format(
    id="rocketmq-remoting",
    description="RocketMQ remoting stream (one direction of a connection, raw): frames with JSON or ROCKETMQ "
                "headers, bodies decoded",
    recognised_by='a plausible frame header (length, serializeType 0/1, headerLength) followed by {"code":',
    sniff=_remoting_sniff,
    units=_remoting_units,
    encode=_encode_remoting,
    encode_types=frozenset({"frame"}),
)

# -- the store's bookkeeping ------------------------------------------------------------------------

def _in_store(parent: str) -> bool:
    """A store root's name says so (``store``, ``rocketmq-store``, ``storeRoot``, ``unit_test_store``...)."""
    return "store" in parent.lower()


def _store_file_sniff(wanted: str):
    """The sniffer of a file a store root holds by name: 95 in a directory named like a store, 85 elsewhere
    (still above every content guess of another format but a capture's magic)."""
    def sniff(head: bytes, name: str) -> int:
        base, parent = _parts(name)
        if base != wanted:
            return 0
        return 95 if _in_store(parent) else 85
    return sniff


_CHECKPOINT_PAGE = 4096  # StoreCheckpoint maps OS_PAGE_SIZE bytes: the file's length
_EPOCH_2010, _EPOCH_2100 = 1_262_304_000_000, 4_102_444_800_000  # ms


def _checkpoint_sniff(head: bytes, name: str) -> int:
    """In a directory named like a store, by name (95, :func:`_store_file_sniff`). Elsewhere the name
    ``checkpoint`` is common (TensorFlow's, a backup's), so the content must agree: a whole 4096-byte page
    whose first three longs are 0 or times in 2010..2100 (ms), not all 0, the two offsets not negative,
    the rest zero: 85 with the name, 50 without (above a Kafka guess whose first entry's CRC fails,
    below one whose CRC holds); the name alone on other bytes: 30, a guess that says so."""
    named = _by_name_checkpoint(head, name)
    if named >= 95:
        return named
    if not head:
        return 0  # (the name alone, outside a store: not enough)
    plausible = False
    if len(head) == _CHECKPOINT_PAGE and head.count(0, 40) == _CHECKPOINT_PAGE - 40:
        values = struct.unpack_from(">5q", head)
        times = values[:3]
        plausible = any(times) and all(t == 0 or _EPOCH_2010 <= t < _EPOCH_2100 for t in times) \
            and min(values[3:]) >= 0
    if plausible:
        return 85 if named else 50
    return 30 if named else 0


def _checkpoint_units(source: Source, opts):
    from wireinspect.formats.rocketmq.bookkeeping import iter_checkpoint

    return iter_checkpoint(source)


def _encode_checkpoint(obj: dict, ctx) -> list:
    """A ``rocketmq-checkpoint`` object -> ``[(None, bytes)]``: ``store_checkpoint`` through its layout,
    the unused rest of the page as an ``unparsed`` range (zeros, or ``rawBytes``)."""
    from wireinspect.errors import EncodeError
    from wireinspect.formats.rocketmq.bookkeeping import encode_checkpoint

    if not isinstance(obj, dict):
        raise EncodeError(f".: expected an object, got {type(obj).__name__}")
    t = obj.get("type")
    if t == "store_checkpoint":
        return [(None, encode_checkpoint(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-checkpoint (store_checkpoint, unparsed)")


_by_name_checkpoint = _store_file_sniff("checkpoint")


def _abort_units(source: Source, opts):
    from wireinspect.formats.rocketmq.bookkeeping import iter_abort

    return iter_abort(source, backup=_parts(source.name)[0] == "abort.bak")


def _abort_sniff(head: bytes, name: str) -> int:
    """``abort``, and RocketMQ 5's ``abort.bak`` (:func:`_store_file_sniff`). Outside a store-named directory,
    the name and the content agreeing (a process id: ASCII digits, as RocketMQ 5's broker writes
    in it) is 95: a pid such as ``6025`` is also hex text, and is not a hex dump here."""
    base = _parts(name)[0]
    if base in ("abort", "abort.bak") and len(head) <= 20 and head.isdigit():
        return 95
    if base == "abort.bak":
        return _by_name_abort(head, name[:-4])
    return _by_name_abort(head, name)


_by_name_abort = _store_file_sniff("abort")


def _lock_units(source: Source, opts):
    from wireinspect.formats.rocketmq.bookkeeping import iter_lock

    return iter_lock(source)


def _encode_marker(obj: dict, ctx) -> list:
    from wireinspect.formats.rocketmq.bookkeeping import encode_marker

    data = encode_marker(obj, ctx)
    return [(None, data)] if data else []


def _encode_config(obj: dict, ctx) -> list:
    from wireinspect.formats.rocketmq.bookkeeping import encode_config

    return [(None, encode_config(obj, ctx))]


def _config_sniff(head: bytes, name: str) -> int:
    base, parent = _parts(name)
    if parent != "config":
        return 0
    from wireinspect.formats.rocketmq.bookkeeping import CONFIG_KINDS, config_name

    stem, _ = config_name(base)
    if stem in CONFIG_KINDS:
        return 95
    grand = os.path.basename(os.path.dirname(os.path.dirname((name or "").replace(os.sep, "/"))))
    return 90 if stem.endswith(".json") and _in_store(grand) else 0


def _config_units(source: Source, opts):
    from wireinspect.formats.rocketmq.bookkeeping import iter_config

    return iter_config(source)


CHECKPOINT = Format(
    id="rocketmq-checkpoint",
    description="RocketMQ store checkpoint (StoreCheckpoint): the flush timestamps of the commit log, consume "
                "queues and index, and RocketMQ 5's masterFlushedOffset and confirmPhyOffset",
    recognised_by="the name checkpoint (in a store directory), or a 4096-byte page of three plausible ms times "
                  "and zeros",
    sniff=_checkpoint_sniff,
    units=_checkpoint_units,
    encode=_encode_checkpoint,
    encode_types=frozenset({"store_checkpoint"}),
)

ABORT = Format(
    id="rocketmq-abort",
    description="RocketMQ store abort file: present while the broker runs; left behind, the broker did not shut "
                "down cleanly (a note)",
    recognised_by="the name abort, or RocketMQ 5's abort.bak (in a store directory)",
    sniff=_abort_sniff,
    units=_abort_units,
    encode=_encode_marker,
    encode_types=frozenset({"store_abort", "store_abort_backup"}),
)

LOCK = Format(
    id="rocketmq-lock",
    description="RocketMQ store lock file (DefaultMessageStore locks its first byte)",
    recognised_by="the name lock (in a store directory)",
    sniff=_store_file_sniff("lock"),
    units=_lock_units,
    encode=_encode_marker,
    encode_types=frozenset({"store_lock"}),
)

CONFIG = Format(
    id="rocketmq-config",
    description="RocketMQ broker config JSON (fastjson): consumerOffset, topics, subscriptionGroup, delayOffset, "
                "consumerFilter, consumerOrderInfo, topicQueueMapping, timermetrics, and their .bak copies",
    recognised_by="a known name (topics.json...), or *.json in a store's config directory; .bak too",
    sniff=_config_sniff,
    units=_config_units,
    encode=_encode_config,
    encode_types=frozenset({"store_config"}),
)


# -- the DLedger (Raft) commit log (dledger.py) -----------------------------------------------------

_DLEDGER_DATA = re.compile(r"(?:^|/)dledger-[^/]+/data/[0-9]{20}$")
_DLEDGER_INDEX = re.compile(r"(?:^|/)dledger-[^/]+/index/[0-9]{20}$")


def _path_sniff(pattern):
    """A sniffer by name and place alone (:data:`~wireinspect.catalog.NAMED`: never re-guessed by content)."""
    def sniff(head: bytes, name: str) -> int:
        return 95 if pattern.search((name or "").replace(os.sep, "/")) else 0
    return sniff


def _dledger_units(source: Source, opts, body: bool = True):
    from wireinspect.formats.rocketmq.dledger import iter_dledger_data

    return iter_dledger_data(source, file_base=file_base(source.path or source.name), body=body,
                             limit=opts.max_decompressed, max_entry=opts.max_batch)


def _dledger_check(source: Source, opts):
    return _dledger_units(source, opts, body=opts.deep)


def _encode_dledger(obj: dict, ctx) -> list:
    from wireinspect.errors import EncodeError
    from wireinspect.formats.rocketmq.dledger import blank_bytes, entry_bytes

    t = obj.get("type") if isinstance(obj, dict) else None
    if t == "dledger_entry":
        return [(None, entry_bytes(obj, ctx))]
    if t == "dledger_blank":
        return [(None, blank_bytes(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-dledger (dledger_entry, dledger_blank, unparsed)")


def _dledger_index_units(source: Source, opts):
    from wireinspect.formats.rocketmq.dledger import data_dir_of, iter_dledger_index

    return iter_dledger_index(source, file_base=file_base(source.path or source.name),
                              data_dir=data_dir_of(source.path))


def _encode_dledger_index(obj: dict, ctx) -> list:
    from wireinspect.errors import EncodeError
    from wireinspect.formats.rocketmq.dledger import index_entry_bytes

    t = obj.get("type") if isinstance(obj, dict) else None
    if t == "dledger_index_entry":
        return [(None, index_entry_bytes(obj, ctx))]
    if t == "unparsed":
        return [(None, c) for c in encode_unparsed(obj, ctx)]
    if t in NOTE_TYPES:
        return []
    raise EncodeError(f".type: {t!r} is not a unit of rocketmq-dledger-index (dledger_index_entry, unparsed)")


DLEDGER = Format(
    id="rocketmq-dledger",
    description="RocketMQ DLedger (Raft) commit-log data file: DLedger entries (magic, size, index, term, pos, "
                "CRCs) each holding one commit-log record",
    recognised_by="path dledger-<id>/data/<20 digits>",
    sniff=_path_sniff(_DLEDGER_DATA),
    units=_dledger_units,
    check=_dledger_check,
    recoverable=True,
    rebuild=pad_to_input_size,
    honours=frozenset({"content"}),
    encode=_encode_dledger,
    encode_types=frozenset({"dledger_entry", "dledger_blank"}),
)

DLEDGER_INDEX = Format(
    id="rocketmq-dledger-index",
    description="RocketMQ DLedger index file: 32-byte entries (magic, pos, size, index, term), entry i at byte i * 32",
    recognised_by="path dledger-<id>/index/<20 digits>",
    sniff=_path_sniff(_DLEDGER_INDEX),
    units=_dledger_index_units,
    encode=_encode_dledger_index,
    encode_types=frozenset({"dledger_index_entry"}),
)


_DLEDGER_META = re.compile(r"(?:^|/)dledger-[^/]+/(?:currterm(?:\.bak|\.tmp)?|snapshot/[^/]+/(?:snapshot_meta|data))$")


def _dledger_meta_units(source: Source, opts):
    from wireinspect.formats.rocketmq.dledgersnap import iter_meta

    return iter_meta(source)


def _encode_dledger_meta(obj: dict, ctx) -> list:
    from wireinspect.formats.rocketmq.dledgersnap import encode_meta

    return [(None, encode_meta(obj, ctx))]


DLEDGER_META = Format(
    id="rocketmq-dledger-meta",
    description="DLedger's other files: currterm (MemberState's term and vote, .bak/.tmp too), a snapshot's "
                "snapshot_meta (SnapshotMeta JSON) and data (the state machine's bytes: not decoded)",
    recognised_by="path dledger-<id>/currterm(.bak|.tmp), dledger-<id>/snapshot/<dir>/snapshot_meta or data",
    sniff=_path_sniff(_DLEDGER_META),
    units=_dledger_meta_units,
    encode=_encode_dledger_meta,
    encode_types=frozenset({"dledger_meta"}),
)


# -- a DLedger log as a whole (dledgerdir.py) -------------------------------------------------------

def _dledger_log_units(source: Source, opts):
    from wireinspect.formats.rocketmq.dledgerdir import log_units

    return log_units(source, opts)


def _looks_like_dledger_log(names) -> bool:
    s = set(names)  # dledgerdir.looks_like_log, without importing it for every directory listed
    return {"data", "index"} <= s and s <= {"data", "index", "snapshot", "currterm", "currterm.bak", "currterm.tmp"}


def _dledger_data_dir(path: str, names) -> bool:
    """``dledger-<id>/data`` given as the input itself: claimed by its place (its files are a commit log's
    by their names alone)."""
    p = os.path.abspath(path)
    return os.path.basename(p) == "data" and re.match(r"dledger-", os.path.basename(os.path.dirname(p))) is not None


def _dledger_recover_files(directory: str, names, plans) -> list:
    from wireinspect.formats.rocketmq.dledgerdir import recover_files

    return recover_files(directory, names, plans)


DLEDGER_LOG = Format(
    id="rocketmq-dledger-log",
    description="RocketMQ DLedger log directory dledger-<id>/ (data/, index/, currterm, snapshot/): recovered "
                "across its files as DLedgerMmapFileStore.recover does (start file, index and term continuity, "
                "the data and index ends, files deleted, the index rebuilt)",
    recognised_by="a directory holding data and index and nothing but currterm(.bak) and snapshot; a "
                  "dledger-<id>/data directory given as the input",
    sniff=lambda head, name: 0,
    units=_dledger_log_units,
    dir_sniff=_looks_like_dledger_log,
    dir_place=_dledger_data_dir,
    dir_noun=("DLedger log", "DLedger logs"),
    recover_files=_dledger_recover_files,
)


# -- the store directory as a whole (storedir.py) ---------------------------------------------------

def _store_units(source: Source, opts):
    from wireinspect.formats.rocketmq.storedir import store_units

    return store_units(source, opts)


def _looks_like_store(names) -> bool:
    s = set(names)  # storedir.looks_like_store, without importing it for every directory listed
    if "commitlog" in s and ("consumequeue" in s or "checkpoint" in s):
        return True
    if "consumequeue" in s and any(n.startswith("dledger-") for n in s):  # DLedger mode: no commitlog/
        return True
    return "checkpoint" in s and bool(s & {"config", "abort", "lock", "commitlog", "consumequeue", "index"})


def _store_recover_files(directory: str, names, plans) -> list:
    from wireinspect.formats.rocketmq.storedir import recover_files

    return recover_files(directory, names, plans)


STORE = Format(
    id="rocketmq-store",
    description="RocketMQ store directory: which recovery the broker's next start runs (normal: the last three "
                "commit-log files; abnormal: from the checkpoint's times) and where the commit log's valid end "
                "is; consume-queue units and index entries past it",
    recognised_by="a directory holding commitlog and consumequeue (or checkpoint), dledger-<id> and consumequeue "
                  "(DLedger mode), or checkpoint beside config, abort or lock",
    sniff=lambda head, name: 0,
    units=_store_units,
    dir_sniff=_looks_like_store,
    dir_noun=("store directory", "store directories"),
    recover_files=_store_recover_files,
)

# -- RocketMQ 5 stores (batchcq.py, timer.py, compaction.py) ----------------------------------------

def _bcq_sniff(head: bytes, name: str) -> int:
    path = (name or "").replace(os.sep, "/")
    if "batchconsumequeue/" not in path:
        return 0
    from wireinspect.formats.rocketmq.batchcq import BCQ_PATH

    return 95 if BCQ_PATH.search(path) else 0


def _bcq_units(source: Source, opts):
    from wireinspect.formats.rocketmq.batchcq import iter_batchconsumequeue

    return iter_batchconsumequeue(source, commitlog=opts.commitlog)


def _encode_bcq(obj: dict, ctx) -> list:
    from wireinspect.formats.rocketmq.batchcq import encode_batchconsumequeue

    return encode_batchconsumequeue(obj, ctx)


BATCHCONSUMEQUEUE = Format(
    id="rocketmq-batchconsumequeue",
    description="RocketMQ 5 batch consume-queue file: 46-byte units (commitLogOffset, size, tagsCode, storeTime, "
                "msgBaseOffset, batchSize, compactedOffset), checked against the commit log beside it",
    recognised_by="path batchconsumequeue/<topic>/<queueId>/<20 digits>",
    sniff=_bcq_sniff,
    units=_bcq_units,
    recoverable=True,
    rebuild=pad_to_input_size,
    honours=frozenset({"commitlog"}),
    encode=_encode_bcq,
    encode_types=frozenset({"bcq_unit"}),
)

def _timer(name: str):
    def call(*args, **kw):
        from wireinspect.formats.rocketmq import timer

        return getattr(timer, name)(*args, **kw)
    return call


def _timerlog_sniff(head: bytes, name: str) -> int:
    base, parent = _parts(name)
    return 95 if parent == "timerlog" and DIGITS20.fullmatch(base) else 0


def _timercheck_sniff(head: bytes, name: str) -> int:
    base, parent = _parts(name)
    return 95 if base == "timercheck" and parent == "config" else 0


def _timer_encoder(fmt: str, types: tuple):
    def encode(obj, ctx):
        from wireinspect.formats.rocketmq.timer import encoder

        return encoder(fmt, types)(obj, ctx)
    return encode


TIMERLOG = Format(
    id="rocketmq-timerlog",
    description="RocketMQ 5 timer log file: 52-byte TimerLog units (prevPos, magic, currWriteTime, delayedTime, "
                "offsetPy, sizePy, hashCode), checked against the commit log beside it",
    recognised_by="a 20-digit file name inside a timerlog directory",
    sniff=_timerlog_sniff,
    units=lambda source, opts: _timer("iter_timerlog")(source, commitlog=opts.commitlog),
    encode=_timer_encoder("rocketmq-timerlog", ("timer_unit", "timer_blank")),
    encode_types=frozenset({"timer_unit", "timer_blank"}),
)

TIMERWHEEL = Format(
    id="rocketmq-timerwheel",
    description="RocketMQ 5 timer wheel: 32-byte slots (time, firstPos, lastPos, num, magic), the used ones "
                "checked against the timer log beside it",
    recognised_by="the name timerwheel (in a store directory)",
    sniff=_store_file_sniff("timerwheel"),
    units=lambda source, opts: _timer("iter_timerwheel")(source),
    encode=_timer_encoder("rocketmq-timerwheel", ("timer_slot",)),
    encode_types=frozenset({"timer_slot"}),
)

TIMERCHECK = Format(
    id="rocketmq-timercheck",
    description="RocketMQ 5 timer checkpoint (TimerCheckpoint): lastReadTimeMs, lastTimerLogFlushPos, "
                "lastTimerQueueOffset, masterTimerQueueOffset and the data version",
    recognised_by="the name timercheck in a config directory",
    sniff=_timercheck_sniff,
    units=lambda source, opts: _timer("iter_timercheck")(source),
    encode=_timer_encoder("rocketmq-timercheck", ("timer_checkpoint",)),
    encode_types=frozenset({"timer_checkpoint"}),
)

def _path_sniff(module_attr: str, marker: str):
    """95 for a path the regular expression ``compaction.<module_attr>`` matches (name and place only)."""
    def sniff(head: bytes, name: str) -> int:
        path = (name or "").replace(os.sep, "/")
        if marker not in path:
            return 0
        from wireinspect.formats.rocketmq import compaction

        return 95 if getattr(compaction, module_attr).search(path) else 0
    return sniff


COMPACTIONLOG = dataclasses.replace(
    COMMITLOG, id="rocketmq-compactionlog",
    description="RocketMQ 5 compaction log file: commit-log records kept by compaction (physicalOffset = the place "
                "in the compaction log) and the BLANK end marker",
    recognised_by="path compaction/compactionLog/<topic>/<queueId>/[compacting|replicating/]<20 digits>",
    sniff=_path_sniff("LOG_PATH", "compaction/compactionLog/"), replication=None)

COMPACTIONCQ = Format(
    id="rocketmq-compactioncq",
    description="RocketMQ 5 compaction consume queue (SparseConsumeQueue): batch consume-queue units pointing into "
                "the compaction log, checked against it",
    recognised_by="path compaction/compactionCq/<topic>/<queueId>/[compacting|replicating/]<20 digits>",
    sniff=_path_sniff("CQ_PATH", "compaction/compactionCq/"),
    units=lambda source, opts: _sparse_cq_units(source, opts),
    recoverable=True,
    rebuild=pad_to_input_size,
    honours=frozenset({"commitlog"}),
    encode=_encode_bcq,
    encode_types=frozenset({"bcq_unit"}),
)


def _sparse_cq_units(source: Source, opts):
    from wireinspect.formats.rocketmq.batchcq import iter_batchconsumequeue

    return iter_batchconsumequeue(source, commitlog=opts.commitlog, sparse=True)


def _position_checkpoint_sniff(head: bytes, name: str) -> int:
    base, parent = _parts(name)
    return 95 if parent == "compaction" and base in ("position-checkpoint", "position-checkpoint.bak") else 0


COMPACTION_POSITION = dataclasses.replace(
    CONFIG, id="rocketmq-compaction-position",
    description="RocketMQ 5 compaction position checkpoint (CompactionPositionMgr): fastjson queueOffsetMap "
                "(topic_queueId -> the queue offset compacted up to), and its .bak",
    recognised_by="the name position-checkpoint in a compaction directory",
    sniff=_position_checkpoint_sniff)

ROCKETMQ5_FORMATS = (BATCHCONSUMEQUEUE, TIMERLOG, TIMERWHEEL, TIMERCHECK, COMPACTIONLOG, COMPACTIONCQ,
                     COMPACTION_POSITION)

FORMATS = (COMMITLOG, CONSUMEQUEUE, INDEX, REMOTING, CHECKPOINT, ABORT, LOCK, CONFIG, DLEDGER, DLEDGER_INDEX,
           DLEDGER_META, DLEDGER_LOG, STORE) + ROCKETMQ5_FORMATS


def offsets_report(**options):
    """The ``rocketmq-offsets`` report (``catalog.REPORTS``): :class:`~.offsets.StoreOffsets`, imported when run."""
    from wireinspect.formats.rocketmq.offsets import StoreOffsets

    return StoreOffsets(**options)


# A RocketMQ message (commit-log record, pull-response record, batch entry) as a row of spark scan's records:
# the body is the value (decompressedBody when the stored one is compressed), queueOffset the offset,
# bornTimestamp (ms) the timestamp, the properties the headers and the KEYS property (space separated) the key.
MESSAGE_COLUMNS = MessageColumns("rocketmq", frozenset({"record", "batch_message"}), "body",
                                 ("decompressedBody", "body"), {"offset": "queueOffset", "timestamp": "bornTimestamp"},
                                 properties="properties", key_property="KEYS")
