"""What a DLedger log directory holds beside ``data/`` and ``index/``: ``currterm`` and ``snapshot/``.

Read at openmessaging/dledger d0545484103f2cd1207fbd7aee201d5b4a882eff:

* ``currterm`` (``MemberState.TERM_PERSIST_FILE``): ``java.util.Properties`` text with ``currTerm`` (the
  last term this member knows) and ``voteLeader`` (whom it voted for in it, or empty), written by
  ``MemberState.persistState`` through ``IOUtils.string2File``: the new text goes to ``currterm.tmp``,
  the old one to ``currterm.bak``, then the ``.tmp`` is renamed to ``currterm`` (a ``.tmp`` left behind
  is an interrupted write).
* ``snapshot/`` (``DLedgerConfig.getSnapshotStoreBaseDir``, ``SnapshotManager``): one directory
  ``snapshot_<lastIncludedIndex>`` per snapshot (``FileSnapshotStore``), each holding ``snapshot_meta``
  (``FileSnapshotWriter.sync``: fastjson of ``SnapshotMeta``, ``{"lastIncludedIndex":N,"lastIncludedTerm":T}``)
  and ``data`` (written by the state machine's ``onSnapshotSave``: its own bytes, no DLedger layout, so
  it is listed, not decoded); ``tmp`` (a snapshot being saved) and ``install_tmp`` (one being installed
  from the leader) are unfinished. A snapshot exists only for a DLedger server with a state machine and
  ``enableSnapshot`` (default false): RocketMQ's DLedger commit log (apache/rocketmq
  ``DLedgerCommitLog``) registers no state machine, and its controller (``DLedgerController``) keeps the
  default and saves nothing (``DLedgerControllerStateMachine.onSnapshotSave`` is empty), so a RocketMQ
  store has no ``snapshot/``.
"""

from __future__ import annotations

import os

from wireinspect.formats.common import Note
from wireinspect.formats.rocketmq.fastjson import loads

MAX_TEXT = 1 << 16  # currterm and snapshot_meta are a few dozen bytes; more is not read
SNAPSHOT_PREFIX, META, DATA, TEMP, INSTALL_TEMP = "snapshot_", "snapshot_meta", "data", "tmp", "install_tmp"


def _text(path: str) -> str | bytes:
    from wireinspect.inputs.source import FileSource

    with FileSource(path) as src:
        if src.size > MAX_TEXT:
            return f"{src.size} bytes: larger than {MAX_TEXT}, not read"
        return src.read(0, src.size)


def read_currterm(path: str) -> dict | str:
    """``currterm`` (or its ``.bak``/``.tmp``) as ``{key: value}`` (java.util.Properties text: ``key=value``
    or ``key:value`` lines, ``#``/``!`` comments), or a string saying why it could not be read."""
    try:
        data = _text(path)
    except OSError as e:
        return f"cannot read: {e.strerror}"
    if isinstance(data, str):
        return data
    return _properties(data)


def read_snapshots(snap_dir: str) -> tuple[list, list]:
    """The snapshots of ``snapshot/``: ``([{dir, state, lastIncludedIndex, lastIncludedTerm, dataSize,
    data}], [(code, file, message)])``; ``state`` is ``saved``, ``saving`` (``tmp``) or ``installing``
    (``install_tmp``). Codes: ``bad_snapshot_meta`` (a meta that does not parse, or whose index is not the
    directory's), ``snapshot_unfinished`` and ``not_a_snapshot`` (notes)."""
    snaps, notes = [], []
    try:
        names = sorted(os.listdir(snap_dir))
    except OSError as e:
        return [], [("bad_snapshot_meta", "snapshot", f"cannot list snapshot/: {e.strerror}")]
    for n in names:
        d = os.path.join(snap_dir, n)
        rel = f"snapshot/{n}"
        if not os.path.isdir(d):
            notes.append(("not_a_snapshot", rel, "a file in snapshot/: DLedger keeps directories there"))
            continue
        state = "installing" if n == INSTALL_TEMP else "saving" if n == TEMP else "saved" \
            if n.startswith(SNAPSHOT_PREFIX) else None
        if state is None:
            notes.append(("not_a_snapshot", rel, "not a snapshot directory (snapshot_<index>, tmp, install_tmp)"))
            continue
        s = {"dir": rel, "state": state, "lastIncludedIndex": None, "lastIncludedTerm": None, "dataSize": None,
             "data": "the state machine's own bytes (StateMachine.onSnapshotSave): not decoded"}
        if state != "saved":
            notes.append(("snapshot_unfinished", rel, f"an unfinished snapshot ({'being installed from the leader' if state == 'installing' else 'being saved'}): "
                          "SnapshotManager starts it again"))
        meta = os.path.join(d, META)
        try:
            data = _text(meta)
        except OSError as e:
            data = f"cannot read: {e.strerror}"
        if isinstance(data, str):
            notes.append(("bad_snapshot_meta", f"{rel}/{META}", data))
        else:
            res = loads(data)
            v = res.value
            if res.error or not isinstance(v, dict) or not all(
                    isinstance(v.get(k), int) and not isinstance(v.get(k), bool)
                    for k in ("lastIncludedIndex", "lastIncludedTerm")):
                notes.append(("bad_snapshot_meta", f"{rel}/{META}", "not the JSON of SnapshotMeta "
                              '({"lastIncludedIndex":N,"lastIncludedTerm":T})' + (f": {res.error} at byte {res.error_at}"
                                                                                 if res.error else "")))
            else:
                s["lastIncludedIndex"], s["lastIncludedTerm"] = v["lastIncludedIndex"], v["lastIncludedTerm"]
                if state == "saved" and n[len(SNAPSHOT_PREFIX):] != str(v["lastIncludedIndex"]):
                    notes.append(("bad_snapshot_meta", f"{rel}/{META}", f"lastIncludedIndex {v['lastIncludedIndex']} "
                                  f"in the directory {n}: FileSnapshotStore names it by that index"))
        try:
            s["dataSize"] = os.path.getsize(os.path.join(d, DATA))
        except OSError:
            s["data"] = "missing"
        others = sorted(set(os.listdir(d)) - {META, DATA})
        if others:
            s["others"] = others
        snaps.append(s)
    return snaps, notes


# -- the files one by one (format rocketmq-dledger-meta) --------------------------------------------------

def iter_meta(source):
    """The unit of one of those files read alone: a ``dledger_meta`` note saying what it holds
    (``currterm``: its properties; ``snapshot_meta``: lastIncludedIndex and lastIncludedTerm, a
    ``bad_snapshot_meta`` problem when it is not SnapshotMeta's JSON; a snapshot's ``data``: the state
    machine's bytes, not decoded). Never raises on bad bytes."""
    from wireinspect.model import Problem

    name = (source.path or source.name or "").replace(os.sep, "/")
    base = name.rsplit("/", 1)[-1]
    size = source.size
    data = source.read(0, min(size, MAX_TEXT))
    probs = []
    if base.startswith("currterm"):
        if size > MAX_TEXT:
            msg = f"MemberState's term file: {size} bytes, larger than {MAX_TEXT}: not read"
        else:
            props = _properties(bytes(data))
            msg = "MemberState's persisted term and vote (java.util.Properties): " + (
                ", ".join(f"{k}={v}" for k, v in props.items()) or "empty") + (
                "; the previous text (IOUtils.string2File)" if base.endswith(".bak") else
                "; an interrupted write (IOUtils.string2File)" if base.endswith(".tmp") else "")
    elif base == META:
        res = loads(bytes(data)) if size <= MAX_TEXT else None
        v = res.value if res is not None else None
        if isinstance(v, dict) and all(isinstance(v.get(k), int) and not isinstance(v.get(k), bool)
                                       for k in ("lastIncludedIndex", "lastIncludedTerm")):
            msg = f"snapshot meta (SnapshotMeta): lastIncludedIndex {v['lastIncludedIndex']}, lastIncludedTerm " \
                  f"{v['lastIncludedTerm']}"
        else:
            msg = "snapshot meta (SnapshotMeta)"
            at = res.error_at if res is not None and res.error_at is not None else 0
            probs.append(Problem("bad_snapshot_meta", at, "not the JSON of SnapshotMeta "
                                 '({"lastIncludedIndex":N,"lastIncludedTerm":T})' + (
                                     f": {res.error}" if res is not None and res.error else
                                     f": {size} bytes, larger than {MAX_TEXT}" if res is None else "")))
    else:
        msg = (f"snapshot data ({size} bytes): the state machine's own bytes (StateMachine.onSnapshotSave), no "
               "DLedger layout: not decoded")
    yield MetaNote(0, size, probs, msg, type="dledger_meta")


MAX_RAW = 64 << 20  # bytes of such a file dump --json --raw carries (a snapshot's data may be large)


class MetaNote(Note):
    """The ``dledger_meta`` note; ``dump --json --raw`` adds the file's bytes (``fileBytes``), from which
    :func:`encode_meta` writes it back."""

    def raw_json(self, read, enc) -> dict:
        from wireinspect.codec.bytesfmt import raw_encoder

        return {} if self.length > MAX_RAW else {"fileBytes": raw_encoder()(bytes(read(0, self.length)))}


def encode_meta(obj: dict, ctx) -> bytes:
    """A ``dledger_meta`` object -> the file's bytes: its ``fileBytes`` (``dump --json --raw``); the note's
    text alone does not give them back. Raises EncodeError."""
    from wireinspect.errors import EncodeError

    if obj.get("type") != "dledger_meta":
        raise EncodeError(f".type: {obj.get('type')!r} is not dledger_meta")
    if obj.get("fileBytes") is None:
        raise EncodeError(".fileBytes: a dledger_meta object is written from its bytes: dump it with --json --raw")
    return ctx.raw(obj["fileBytes"], ".fileBytes")


def _properties(data: bytes) -> dict:
    out = {}
    for line in data.decode("latin-1").splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=len(line))
        out[line[:cut].strip()] = line[cut + 1:].strip()
    return out
