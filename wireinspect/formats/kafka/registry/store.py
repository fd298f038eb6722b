"""The schemas a Schema Registry keeps in its own topic (``_schemas``, one partition), read offline.

Keys are JSON objects such as ``{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}``;
a SCHEMA record's value is ``{"subject","version","id","schema","schemaType"?,"deleted"?,...}``
(``schemaType`` AVRO when absent); a null value is a tombstone (hard delete). Other key types
(CONFIG, MODE, NOOP, DELETE_SUBJECT, CLEAR_SUBJECT...) are not schemas and are passed over. A later
record for the same subject and version replaces the earlier one. A soft-deleted schema
(``"deleted": true``) still resolves: old data was written with it. A record whose key is not JSON
(or is JSON nested past the parser's bound), or a SCHEMA record whose value is not such an object, is
passed over with a note (:attr:`Registry.notes`), as the registry's own reader logs and skips it.

:func:`load` reads a partition directory (its ``.log`` segments in offset order) or one segment file;
:func:`activate` makes a registry the one record keys and values are resolved against (a context
variable: ``dump --schemas DIR``, or a ``_schemas-N`` directory among the inputs; the CLI runs each
command in a copy of the context, so a registry never outlives the command that read it).
"""

from __future__ import annotations

import contextvars
import json
import os
import re
from dataclasses import dataclass

from wireinspect.errors import InputError

SCHEMAS_DIR = re.compile(r"^_schemas-[0-9]+$")
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("wireinspect_registry", default=None)


@dataclass
class Schema:
    """One registered schema: ``id``, ``subject``, ``version``, ``schema_type`` (AVRO, JSON, PROTOBUF),
    ``text`` (the schema as registered), ``deleted`` (soft-deleted), ``guid`` (when the registry
    recorded one), ``subjects`` (every subject the same id is registered under)."""

    id: int
    subject: str
    version: int
    schema_type: str
    text: str
    deleted: bool = False
    guid: str | None = None
    references: tuple = ()

    def describe(self) -> dict:
        d = {"subject": self.subject, "version": self.version, "schemaType": self.schema_type}
        if self.deleted:
            d["deleted"] = True
        return d


class Registry:
    """Schemas by id and by GUID, as the ``_schemas`` records left them; ``source``: what was read;
    ``notes``: the records passed over because they do not read (one line each, naming the record)."""

    def __init__(self, source: str = ""):
        self.source = source
        self.by_version: dict = {}  # (subject, version) -> Schema
        self.records = 0
        self.notes: list = []
        self._ids = self._guids = None  # by id and by GUID: built on the first lookup after a change

    def add(self, key: bytes | None, value: bytes | None, where: str = "a record") -> None:
        """One record of ``_schemas`` (anything that is not a SCHEMA record is passed over; one that
        does not read, with a note naming it by ``where``)."""
        k, why = _json(key) if key else (None, None)
        if why:
            self.notes.append(f"{where} passed over: its key is {why}")
            return
        if not isinstance(k, dict) or k.get("keytype") != "SCHEMA":
            return
        subject, version = k.get("subject"), k.get("version")
        if not isinstance(subject, str) or not isinstance(version, int):
            return
        self.records += 1
        self._ids = self._guids = None
        if value is None:
            self.by_version.pop((subject, version), None)
            return
        v, why = _json(value)
        if why is None and (not isinstance(v, dict) or not isinstance(v.get("id"), int)
                            or not isinstance(v.get("schema"), str)):
            why = "not a schema (an object with an integer id and a schema text)"
        if why:
            self.notes.append(f"{where} passed over: the value of {subject} version {version} is {why}")
            return
        guid = v.get("guid") if isinstance(v.get("guid"), str) else None
        kind = v.get("schemaType") if isinstance(v.get("schemaType"), str) else None
        refs = v.get("references")
        self.by_version[(subject, version)] = Schema(
            v["id"], subject, version, (kind or "AVRO").upper(), v["schema"], bool(v.get("deleted")),
            guid.lower() if guid else None, tuple(refs) if isinstance(refs, list) else ())

    def merge(self, other: "Registry") -> None:
        """Take ``other``'s schemas too (its record for a subject and version replaces this one's)."""
        self.by_version.update(other.by_version)
        self.records += other.records
        self.notes += other.notes
        self._ids = self._guids = None

    def lookup(self, schema_id: int | None = None, guid: str | None = None) -> list:
        """The schemas registered under ``schema_id`` (or ``guid``), live ones first; ``[]`` if none."""
        if self._ids is None:
            ids, guids = {}, {}
            for key in sorted(self.by_version):  # the earliest subject and version first
                s = self.by_version[key]
                ids.setdefault(s.id, []).append(s)
                if s.guid:
                    guids.setdefault(s.guid, []).append(s)
            for found in (*ids.values(), *guids.values()):
                found.sort(key=lambda s: s.deleted)  # live ones first (stable: earliest first among them)
            self._ids, self._guids = ids, guids
        found = self._ids.get(schema_id, []) if schema_id is not None else self._guids.get((guid or "").lower(), [])
        return list(found)

    def __len__(self) -> int:
        return len({s.id for s in self.by_version.values()})


def _json(b) -> tuple[object, str | None]:
    """``b`` (UTF-8 JSON) parsed: ``(value, None)``, or ``(None, why)`` when it does not read. Nesting
    is bounded by the parser's own check (CPython's scanner raises RecursionError at the interpreter's
    recursion limit, about 1000 levels), which is turned into a reason here."""
    try:
        return json.loads(bytes(b)), None
    except RecursionError:
        return None, "JSON nested too deep to read"
    except (ValueError, UnicodeDecodeError) as e:
        return None, f"not JSON ({str(e)[:60]})"


def _segments(path: str) -> list:
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith(".log"))
        return [os.path.join(path, n) for n in names]
    return [path]


def load(path: str, max_decompressed: int | None = None) -> Registry:
    """The registry held by ``path`` (a ``_schemas-N`` partition directory or one of its segments);
    records that do not read are in its ``notes``. Raises :class:`InputError` when it cannot be read
    or holds no SCHEMA record."""
    from wireinspect.formats.kafka.segment import iter_log
    from wireinspect.inputs.source import FileSource

    reg = Registry(path)
    segs = _segments(path)
    kw = {"limit": max_decompressed} if max_decompressed else {}
    try:
        for seg in segs:
            with FileSource(seg) as src:
                for unit in iter_log(src, records=True, **kw):
                    recs = unit.to_json(bytes).get("records") or []
                    for r in recs:
                        if isinstance(r, dict) and "key" in r and not r.get("unverified"):
                            reg.add(r.get("key"), r.get("value"), f"{seg}: the record at offset {r.get('offset')}")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    if not reg.records:
        passed = f"; {len(reg.notes)} passed over, the first: {reg.notes[0]}" if reg.notes else ""
        raise InputError(f"{path}: holds no Schema Registry SCHEMA record (give the registry's _schemas "
                         f"partition directory, e.g. .../_schemas-0){passed}")
    return reg


def find_partitions(paths) -> list:
    """The ``_schemas-N`` directories among ``paths`` or below them (for ``dump`` to resolve ids
    with what the inputs themselves hold)."""
    found = []
    for p in paths:
        p = p.rsplit(":", 1)[0] if ":" in p and not os.path.exists(p) else p
        if not os.path.isdir(p):
            continue
        if SCHEMAS_DIR.match(os.path.basename(os.path.normpath(p))):
            found.append(p)
            continue
        for top, dirs, _ in os.walk(p):
            dirs.sort()
            for d in list(dirs):
                if SCHEMAS_DIR.match(d):
                    found.append(os.path.join(top, d))
                    dirs.remove(d)
    return found


def registry_for(paths, given: str | None = None, max_decompressed: int | None = None) -> Registry | None:
    """The registry ``dump`` resolves against: ``given`` (``--schemas DIR``; :class:`InputError` when it
    holds no SCHEMA record), else the ``_schemas-N`` partitions among ``paths`` merged (those that hold
    none are passed over); ``None`` when there is none."""
    if given is not None:
        return load(given, max_decompressed)
    reg = None
    for d in find_partitions(paths):
        try:
            got = load(d, max_decompressed)
        except InputError:
            continue
        if reg is None:
            reg = got
        else:
            reg.merge(got)
    return reg


def activate(reg: Registry | None) -> None:
    """Resolve record keys and values against ``reg`` from now on (``None``: no registry)."""
    _ACTIVE.set(reg)


def active() -> Registry | None:
    return _ACTIVE.get()
