"""What the analyses of Kafka's internal topics share: the :class:`Outcome` a report ends with, the
problems it finds, and how it walks the record dicts of ``dump --json``.

An analysis is fed the ``to_json`` objects of the units of its inputs (``feed(path, unit)``), one
input after another in offset order, and ends with :meth:`finish`. A unit with ``records`` is a
record batch: each record is the dict of the internal-topics contract (``offset``, ``timestamp`` in
ms since the epoch, ``position``, ``key``, ``value``, ``keyDecoded``, ``valueDecoded``; see
docs/internal-topics.md). Nothing here reads a file: the generic runner (``ops/analyse.py``) does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from wireinspect.codec.times import iso_ms


@dataclass
class Outcome:
    """The end of a report.

    * ``objects``: the JSON objects it prints with ``--json`` (one per line), each with a ``type``;
    * ``blocks``: what it prints on a terminal: ``("table", title, header, rows)`` (cells are str or
      int) or ``("tree", label, children)`` (children: ``(label, children)`` pairs, recursively);
      texts are raw: the renderer escapes them;
    * ``problems``: ``{"code", "path", "position", "offset", "message"}`` (record ``offset`` and byte
      ``position`` where the data says something that cannot apply, or None);
    * ``findings``: how many things the report was asked to find were found (hanging transactions):
      like problems, they make the exit status 1;
    * ``misses``: sentences for stderr when the answer covers less than was asked (a ``--group`` or
      ``--transactional-id`` no record of the inputs names); the exit status is unchanged.
    """

    objects: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    findings: int = 0
    misses: list = field(default_factory=list)


def miss(what: str, asked: str, seen) -> str:
    """``no record of group "g" in the inputs (they name 3 groups: "a", "b", "c")``: what a filter on
    ``what`` (``group``, ``transactional id``) matched none of, with the names the inputs do hold (the
    first ten, sorted)."""
    from wireinspect.codec.text import quote

    names = sorted(n for n in seen if isinstance(n, str))
    shown = ", ".join(quote(n) for n in names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    held = f"they name {len(names)} {what}{'s' * (len(names) != 1)}: {shown}" if names else f"they name no {what}"
    return f"no record of {what} {quote(asked)} in the inputs ({held})"


def problem(code: str, message: str, path: str | None = None, position: int | None = None,
            offset: int | None = None) -> dict:
    """One problem of an analysis (see :class:`Outcome`)."""
    return {"code": code, "path": path, "position": position, "offset": offset, "message": message}


def records_of(path: str, unit: dict):
    """``(record, batch)`` for every record of a unit's JSON (none for a unit that holds none)."""
    for rec in unit.get("records") or ():
        if isinstance(rec, dict):
            yield rec, unit


def where(path: str, rec: dict, batch: dict) -> dict:
    """``{"path", "recordOffset", "position"}`` of a record: its byte position, or its batch's when
    the record sits in a compressed batch (its position then counts in the decompressed bytes)."""
    pos = rec.get("position")
    if pos is None:
        pos = batch.get("position")
    return {"path": path, "recordOffset": rec.get("offset"), "position": pos}


def with_iso(obj: dict, *keys: str) -> dict:
    """``obj`` with ``<key>Iso`` (ISO-8601 UTC) beside each ms-since-the-epoch ``key`` that is a time."""
    for k in keys:
        iso = iso_ms(obj.get(k))
        if iso is not None:
            obj[k + "Iso"] = iso
    return obj


TOPIC_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>[0-9]+)$")
# the files a broker keeps at the top of a log directory, beside its partition directories (Kafka's
# names: MetaPropertiesEnsemble, LogManager, ReplicaManager, LogCleanerManager, LogLoader and KRaft's
# BootstrapDirectory): none holds records of a partition
LOG_DIR_FILES = frozenset({"meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint",
                           "log-start-offset-checkpoint", "cleaner-offset-checkpoint", ".lock",
                           ".kafka_cleanshutdown", "bootstrap.checkpoint"})
BOOTSTRAP = "bootstrap.checkpoint"  # KRaft's bootstrap metadata: the records a new cluster's log starts with


def log_dir_file(path: str) -> bool:
    """A file a broker keeps at the top of a log directory (:data:`LOG_DIR_FILES`), outside any
    partition directory."""
    return path != "-" and os.path.basename(path) in LOG_DIR_FILES and topic_of(path) is None


def topic_of(path: str) -> str | None:
    """The topic of a file in a partition directory ``<topic>-<partition>/`` (None elsewhere)."""
    m = TOPIC_DIR.match(os.path.basename(os.path.dirname(os.path.abspath(path))))
    return m.group("topic") if m else None


def decoded(rec: dict, which: str):
    """``rec["keyDecoded"]``/``rec["valueDecoded"]`` when it is a decoded object (``{"type", "data"...}``),
    else None."""
    d = rec.get(which)
    return d if isinstance(d, dict) and isinstance(d.get("data"), dict) else None


def undecoded(rec: dict, batch: dict, path: str, problems: list, which: str, what: str) -> None:
    """Note that ``rec[which]`` (``keyDecoded``/``valueDecoded``) could not be used: an
    ``undecoded_record`` problem, unless the decoder already reported why (its ``problems``: they are
    the unit's problems, which the runner reports)."""
    d = rec.get(which)
    if isinstance(d, dict) and d.get("problems"):
        return
    w = where(path, rec, batch)
    problems.append(problem("undecoded_record", f"{what} was not decoded", path, w["position"], w["recordOffset"]))


def check_decoded(rec: dict, path: str, batch: dict, problems: list, what: str) -> dict | None:
    """The decoded key of a coordinator record, or None (see :func:`undecoded`: a record whose key the
    decoder could not read, or an input whose records were not decoded at all)."""
    key = decoded(rec, "keyDecoded")
    if key is None or not isinstance(key.get("type"), str):
        undecoded(rec, batch, path, problems, "keyDecoded", f"the key of a {what} record")
        return None
    return key


def other_topic(topic: str, topics) -> str:
    """Why a partition of ``topic`` is not read by a report over ``topics``."""
    return f"a partition of {topic}, not of {' or '.join(topics)}"


def choose_segments(paths, topics) -> dict:
    """What a report over the log of ``topics`` reads (see ``ops/analyse.py``): the segments
    (``*.log``) of their partition directories and any file outside a partition directory (stdin, a
    copied segment, a hex dump); the sidecars of a partition and the files at the top of a log
    directory (:data:`LOG_DIR_FILES`) are passed over silently, and a partition of another topic with
    its reason."""
    out = {}
    for p in paths:
        topic = None if p == "-" else topic_of(p)
        if log_dir_file(p):
            out[p] = ""
        elif topic is None:
            out[p] = None
        elif topic not in topics:
            out[p] = ""
            out[os.path.dirname(p)] = other_topic(topic, topics)
        else:
            out[p] = None if p.endswith(".log") else ""
    return out
