"""One copy of a Redpanda partition for ``wireinspect replicas`` (formats/replica.py's :class:`Copy`), read
from a partition directory (``<data>/<namespace>/<topic>/<partition>_<revision>/``), and the rule by which
Redpanda's raft truncates a follower.

Reading: nothing is parsed again. The directory's own check (``partition.check_partition``: segments in
base-offset order, continuity, terms, index files) gives the damage; the segment walk
(``segment.iter_segment``, no records: headers and both CRC-32C verdicts) gives the entries, one per
batch (raft offsets: every batch type counts, ``raft_configuration`` included).

Terms: Redpanda's 61-byte batch header carries no term (``src/v/model/record.h``:
``record_batch_header::context::term`` is "not part of the upstream kafka batch format" and is not
written: "expect all fields to be serialized, except context fields"); a segment's term is in its name
(``<base offset>-<term>-v1.log``) and every batch read from it gets that term
(``storage/log_reader.cc``: ``_header.ctx.term = _reader._seg.offsets().get_term()``). Segments roll
when the term changes (``disk_log_impl::maybe_roll_unlocked``: ``if (t != term() ...) new_segment``),
so the terms of a copy are ``[(term, first offset)]`` of its segments in offset order, and the term at
an offset is its segment's (``disk_log_impl::get_term``).

The rule (:func:`raft_truncation`), as redpanda-data/redpanda @ 1c6cff34 ``src/v/raft`` applies it:

1. The new leader replicates its configuration as the first batch of its new term
   (``vote_stm::replicate_config_as_new_leader``), at its log end.
2. ``append_entries`` carries ``prev_log_index``/``prev_log_term`` (the leader's term at that offset:
   ``recovery_stm``, ``_log->get_term(prev_log_idx)``). The follower (``consensus::do_append_entries``)
   rejects an index past its log end (section 1: "would leave gap"; the leader then sends from the
   follower's ``last_dirty_log_index`` + 1) and an index whose term differs from its own (section 2;
   ``recovery_stm`` then moves ``next_index`` back and retries: raft §5.3). Below the follower's start
   offset the term is not checked.
3. Once accepted, the follower skips the leader's batches whose term matches its own at their last
   offset (``find_mismatch_consumer``) and truncates at the first one that does not
   (``_log->truncate(truncate_at)``, ``truncate_at = adjusted_prev_log_index + 1``).

So the follower keeps the longest prefix, from the last offset where both copies have the same term,
that agrees in term with the leader; a follower longer than the leader loses what lies past the
leader's log end (the new term's batch replaces it). Two things on-disk copies do not show are left
out: the follower's commit index (kept in the kvstore; Redpanda refuses to truncate below it, section
3's "stale append entries"), and snapshots (a leader whose log starts past the follower's end installs
one). ``rounds`` also says whether the follower would vote for the leader (raft §5.4.1, the
``log_ok`` of ``consensus::do_vote``: a later last term, or the same and a log at least as long):
a leader it would not elect is an unclean case (a forced reconfiguration).

Memory: a copy is its entries (one per batch), its terms (one per term change) and segments; the rule
walks the terms only, never the offsets between.
"""

from __future__ import annotations

import os

from wireinspect.errors import InputError
from wireinspect.formats.replica import Copy, Entry, Truncation, batch_records, damage, digest



def read_copy(directory: str, opts) -> Copy:
    """The copy held by the Redpanda partition directory ``directory`` (see the module docstring), named
    by its data directory (``<data>`` of ``<data>/<namespace>/<topic>/<partition>_<revision>``: the node's;
    Redpanda keeps its node id in the kvstore, not in a file). Raises :class:`InputError` when it cannot be listed."""
    from wireinspect.formats.options import options_or_default
    from wireinspect.formats.redpanda.names import ntp_of, segment_name
    from wireinspect.formats.redpanda.partition import check_partition
    from wireinspect.formats.redpanda.segment import iter_segment
    from wireinspect.inputs.source import FileSource

    opts = options_or_default(opts)
    if not os.path.isdir(directory):
        raise InputError(f"{directory}: not a directory")
    try:
        names = os.listdir(directory)
    except OSError as e:
        raise InputError(f"{directory}: cannot list the directory: {e.strerror}") from None
    unit = check_partition(directory, names, opts=opts)
    ntp = ntp_of(directory) or (None,) * 4
    data_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(directory)))) if ntp[1] else None
    copy = Copy(path=directory, name=data_dir or directory, topic=ntp[1], partition=ntp[2], terms_source="segments")
    for p in unit.problems:
        copy.damage.append(damage(p.code, getattr(p, "file", None), p.position, p.message))
    for seg in unit.segments:
        name = seg["file"]
        term = segment_name(name)[1]
        first = last = None
        try:
            with FileSource(os.path.join(directory, name)) as src:
                for u in iter_segment(src, records=False, max_batch=opts.max_batch):
                    for p in u.problems:
                        copy.damage.append(damage(p.code, name, p.position, p.message))
                    if u.type != "redpanda_batch" or u.base_offset is None or not u.rp:
                        continue
                    copy.entries.append(Entry(u.base_offset, u.last_offset, term, digest(src, u.position, u.length),
                                              u.valid, name, u.position, u.length, u.records_count))
                    first = u.base_offset if first is None else first
                    last = u.last_offset
        except InputError as e:
            copy.damage.append(damage("unreadable_file", name, 0, str(e)))
        copy.segments.append({"file": name, "baseOffset": seg["baseOffset"], "term": term, "firstOffset": first,
                              "lastOffset": last, "bytes": seg["size"]})
    copy.entries.sort(key=lambda e: (e.base, e.position))
    if copy.entries:
        copy.log_start = copy.entries[0].base
        copy.log_end = max(e.last for e in copy.entries) + 1
    for e in copy.entries:  # the term of each batch is its segment's: one entry per term change
        if e.crc_ok and (not copy.batch_terms or copy.batch_terms[-1][0] != e.term):
            copy.batch_terms.append((e.term, e.base))
    copy.terms = copy.batch_terms
    copy.notes.append("terms from the segment names; the committed offset is in Redpanda's kvstore, not here: "
                      "compared up to the shortest log end")
    return copy


def _spans(terms, start: int, end: int) -> list[tuple[int, int, int]]:
    """``[(first, end, term)]``: the offsets ``start``..``end`` - 1 cut where the term changes."""
    out = []
    for i, (t, s) in enumerate(terms):
        hi = terms[i + 1][1] if i + 1 < len(terms) else end
        lo = max(s, start)
        if hi > lo:
            out.append((lo, min(hi, end), t))
    return out


def _term_at(spans, o: int):
    for lo, hi, t in spans:
        if lo <= o < hi:
            return t
    return None


def _pieces(foll, lead) -> list[tuple[int, int, int, int | None]]:
    """The follower's spans cut by the leader's: ``[(first, end, follower's term, leader's term or None)]``
    (None: the leader holds no such offsets). Linear in both."""
    out, j = [], 0
    for lo, hi, ft in foll:
        while j < len(lead) and lead[j][1] <= lo:
            j += 1
        o = lo
        while o < hi:
            if j < len(lead) and lead[j][0] <= o:
                e = min(hi, lead[j][1])
                out.append((o, e, ft, lead[j][2]))
                if e == lead[j][1]:
                    j += 1
            else:
                e = min(hi, lead[j][0]) if j < len(lead) else hi
                out.append((o, e, ft, None))
            o = e
    return out


def raft_truncation(leader_terms, leader_start: int, leader_end: int, follower_terms, follower_start: int,
                    follower_end: int, new_term: int) -> tuple[int, list, str]:
    """Where the follower's log ends once the leader leads in ``new_term``: ``(offset, rounds, rule)``
    (see the module docstring). ``*_terms``: ``[(term, first offset)]`` in offset order; ``*_start``/
    ``*_end``: the first offset held and the offset after the last one. ``rounds``: the vote check,
    then each ``append_entries`` the answer turns on (``prevLogIndex``, ``prevLogTerm``,
    ``followerTerm``, ``result``: ``gap``, ``term-mismatch``, ``accepted``), then the truncation
    (``truncateAt``). ``rule``: ``"empty"`` (the follower holds nothing), ``"no-divergence"`` or
    ``"term-mismatch"``. Work: linear in the number of terms."""
    lead = _spans(leader_terms, leader_start, leader_end) + [(leader_end, leader_end + 1, new_term)]
    foll = _spans(follower_terms, follower_start, follower_end)
    l_last = lead[-2][2] if len(lead) > 1 else None
    f_last = foll[-1][2] if foll else None
    granted = f_last is None or (l_last is not None and (l_last > f_last or (l_last == f_last
                                                                            and leader_end >= follower_end)))
    rounds: list = [{"vote": {"candidateLastTerm": l_last, "candidateLastOffset": leader_end - 1,
                              "voterLastTerm": f_last, "voterLastOffset": follower_end - 1, "granted": granted}}]
    if not foll:
        return follower_end, rounds, "empty"
    prev = leader_end - 1  # the configuration batch of the new term follows the leader's last offset
    if prev > follower_end - 1:
        rounds.append({"prevLogIndex": prev, "prevLogTerm": _term_at(lead, prev), "followerTerm": None,
                       "result": "gap"})
        prev = follower_end - 1
    # the last offset <= prev where both have the same term (recovery_stm steps back until it is accepted)
    pieces = _pieces(foll, lead)
    match = max((min(hi - 1, prev) for lo, hi, ft, lt in pieces if ft == lt and lo <= prev), default=follower_start - 1)
    if match < prev:
        rounds.append({"prevLogIndex": prev, "prevLogTerm": _term_at(lead, prev), "followerTerm": _term_at(foll, prev),
                       "result": "term-mismatch"})
    if match >= 0:
        rounds.append({"prevLogIndex": match, "prevLogTerm": _term_at(lead, match),
                       "followerTerm": _term_at(foll, match), "result": "accepted"})
    # skip what matches (find_mismatch_consumer), truncate at the first offset that does not
    cut = next((max(lo, match + 1) for lo, hi, ft, lt in pieces if hi > match + 1 and ft != lt), follower_end)
    rounds.append({"truncateAt": cut})
    return cut, rounds, "no-divergence" if cut >= follower_end else "term-mismatch"


def truncation(leader: Copy, follower: Copy, term: int) -> Truncation:
    """Where ``follower`` ends once ``leader`` leads in raft term ``term`` (:func:`raft_truncation`)."""
    offset, rounds, rule = raft_truncation(leader.terms, leader.log_start or 0, leader.log_end or 0, follower.terms,
                                           follower.log_start or 0, follower.log_end or 0, term)
    return Truncation(offset, term, rounds, rule)


def records(copy: Copy, entries) -> list[dict]:
    """The records of ``entries`` (batches of ``copy``), as :func:`~wireinspect.formats.replica.batch_records`
    lists them, with ``term``; each batch read again through the segment walk."""
    from wireinspect.formats.redpanda.segment import iter_segment

    return batch_records(copy, entries,
                         lambda src, pos: next(iter(iter_segment(src, records=True, start=pos)), None),
                         "term", "base_sequence", "producer_id")

def identity(copy: Copy) -> tuple:
    """Topic and partition from the directory names (the revision may differ between nodes after a move)."""
    return copy.topic, copy.partition, None
