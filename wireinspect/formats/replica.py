"""What a format gives ``wireinspect replicas``: one copy of a partition as a format-neutral sequence of
entries, and the format's replication rule (docs/replicas.md).

A family that keeps copies of a partition on several machines (Kafka's replicas with leader epochs;
Redpanda's raft groups with terms; RocketMQ's master and slave commit logs with physical offsets)
declares a :class:`Replication` on the directory format that reads one copy (``Format.replication``).
``ops/replicas.py`` compares the copies it reads without knowing the family: by offset and term, never
by file (brokers roll segments at different offsets).

* :class:`Entry`: one entry of a copy (a Kafka record batch): ``base``..``last`` offsets (inclusive),
  ``term`` (Kafka's ``partitionLeaderEpoch``; -1 when the entry has none), a ``digest`` of its bytes
  (16 bytes; equal digests mean equal bytes), ``crc_ok`` (its own checksum holds), its ``file`` and
  byte ``position``/``length`` there, and ``records``, the records it holds.
* :class:`Copy`: what one copy holds (see its fields) and the family's :class:`Replication`.
* :class:`Truncation`: where a follower's log ends once it followed a leader, and the rounds that
  led there, as the family's rule computes it.

Memory: a copy is its entries (one per batch: at most the file size over the smallest entry), its
terms (at most one per entry or per checkpoint line) and its segments; nothing is indexed by offset.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, NamedTuple


class Entry(NamedTuple):
    """One entry of a copy (see the module docstring)."""

    base: int
    last: int
    term: int
    digest: bytes
    crc_ok: bool
    file: str
    position: int
    length: int
    records: int


@dataclass
class Copy:
    """One copy of a partition.

    ``path``: the directory read; ``name``: how reports name it (``broker 1`` from the broker's
    ``meta.properties``, else the path); ``broker``: the broker id or None; ``topic``, ``partition``,
    ``topic_id`` (None when the copy does not say); ``log_start``/``log_end`` (the first offset held and
    the offset after the last one; None when it holds none); ``high_watermark`` and ``recovery_point``
    (None when the broker's directory does not say); ``segments``: ``[{"file", "baseOffset",
    "firstOffset", "lastOffset", "bytes"}]``; ``terms``: ``[(term, startOffset)]`` the rule uses,
    ``terms_source`` where they come from (``"checkpoint"``, ``"batches"``), ``checkpoint_terms`` and
    ``batch_terms`` both views (None when there is no usable checkpoint); ``entries``: the
    :class:`Entry` list in offset order; ``damage``: problems found in the copy (``{"code", "file",
    "position", "message"}``, verify's); ``notes``: sentences about what the family would do with it
    (``Kafka cannot load ...``); ``replication``: the family's :class:`Replication` (set by the
    reader's caller, from the format that read it).
    """

    path: str
    name: str
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None
    topic_id: str | None = None
    log_start: int | None = None
    log_end: int | None = None
    high_watermark: int | None = None
    recovery_point: int | None = None
    segments: list = field(default_factory=list)
    terms: list = field(default_factory=list)
    terms_source: str = "batches"
    checkpoint_terms: list | None = None
    batch_terms: list = field(default_factory=list)
    entries: list = field(default_factory=list)
    damage: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    replication: "Replication | None" = None

    @property
    def latest_term(self) -> int | None:
        return self.terms[-1][0] if self.terms else None


@dataclass(frozen=True)
class Truncation:
    """Where ``follower`` ends after following ``leader`` elected in ``term``: ``offset`` (its new log end
    offset; equal to its log end offset when nothing is thrown away), ``rounds`` (what was asked and
    answered, in the family's words: ``{"lastFetchedEpoch", "epoch", "endOffset", "truncateTo",
    "again"}`` for Kafka), ``rule`` (which branch of the family's rule decided, e.g.
    ``"diverging-epoch"``, ``"high-watermark"``, ``"no-divergence"``, ``"stuck"``)."""

    offset: int
    term: int
    rounds: list
    rule: str


@dataclass(frozen=True)
class Replication:
    """A family's replication, declared on the directory format that reads a copy.

    ``term``: the name of its term (``"leaderEpoch"``); ``rule``: the name of the rule and where it
    comes from (for the reports); ``read(directory, Options) -> Copy`` (raises ``InputError`` when the
    copy cannot be read at all); ``truncation(leader: Copy, follower: Copy, term: int) -> Truncation``:
    where the follower ends once ``leader`` leads in the new ``term``; ``records(copy, entries) ->
    [dict]``: the records of those entries (``offset``, ``term``, ``timestamp``, ``key``,
    ``producerId``, ``sequence``; key as text, bytes not UTF-8 escaped); ``identity(copy) -> tuple``:
    what must be equal for two copies to be copies of one partition (names and ids).

    Optional: ``family``: who applies the rule, for the reports (``"Kafka"``, ``"Redpanda's raft"``);
    ``has_terms``: False for a family without terms (RocketMQ's master/slave: copies compared by
    physical offset alone; no term is elected); ``sniff(names) -> bool``: whether a directory holding
    ``names`` is a copy, for a format that has no ``dir_sniff`` of its own (default: the format's
    ``dir_sniff``); ``extra(copies) -> (objects, lines, differs)``: what else the family compares
    (RocketMQ's consume queues): JSON objects, terminal lines, and whether the copies differ there."""

    term: str
    rule: str
    read: Callable
    truncation: Callable
    records: Callable
    identity: Callable
    family: str = "Kafka"
    has_terms: bool = True
    sniff: Callable | None = None
    extra: Callable | None = None


def digest(src, pos: int, length: int) -> bytes:
    """A 16-byte BLAKE2b digest of ``length`` bytes of ``src`` from ``pos`` (read in bounded chunks):
    what two copies' entries are compared by."""
    from wireinspect.inputs.source import checksum

    h = hashlib.blake2b(digest_size=16)
    checksum(src, pos, pos + length, lambda data, acc: (acc.update(data), acc)[1], h)
    return h.digest()


def damage(code: str, file: str | None, position: int, message: str) -> dict:
    """One item of :attr:`Copy.damage`: a problem code, the file it is in, its byte position there."""
    return {"code": code, "file": file, "position": position, "message": message}


LIST_LIMIT = 10_000  # records listed per range in --json (the count is always whole)


def batch_records(copy: Copy, entries, first_unit, term_key: str, sequence_key: str, producer_key: str) -> list[dict]:
    """The records of ``entries`` (batches of ``copy``) as ``replicas --json`` lists them: ``offset``,
    ``term_key`` (the entry's term), ``timestamp``, ``key`` (text; bytes that are not UTF-8 escaped,
    null kept), ``producerId``, ``sequence`` (the batch's ``sequence_key`` plus the record's place).
    Each batch is read again from its file, one at a time: ``first_unit(source, position)`` gives the
    unit there with its records (None: none); ``producer_key``: its producer id's JSON name. At most
    :data:`LIST_LIMIT` records."""
    import os

    from wireinspect.codec.bytesfmt import bytes_encoder
    from wireinspect.errors import InputError
    from wireinspect.inputs.source import FileSource

    enc = bytes_encoder("text")
    out: list[dict] = []
    for e in entries:
        if len(out) >= LIST_LIMIT:
            break
        try:
            with FileSource(os.path.join(copy.path, e.file)) as src:
                u = first_unit(src, e.position)
                d = u.to_json(enc) if u is not None else {}
        except InputError:
            continue
        seq0 = d.get(sequence_key, -1)
        for r in d.get("records") or ():
            off = r.get("offset")
            out.append({"offset": off, term_key: e.term, "timestamp": r.get("timestamp"), "key": r.get("key"),
                        "producerId": d.get(producer_key),
                        "sequence": seq0 + (off - e.base) if seq0 is not None and seq0 >= 0 and off is not None
                        else None})
    return out[:LIST_LIMIT]


def hooks_of(module: str):
    """``hook(name)``: a :class:`Replication` hook that calls ``module``'s function ``name``, the module
    imported when first called (a family's copy reader is not loaded with the catalog)."""
    def hook(name: str):
        def call(*args):
            import importlib

            return getattr(importlib.import_module(module), name)(*args)
        return call
    return hook
