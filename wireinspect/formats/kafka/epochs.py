"""Kafka's leader-epoch rule (KIP-101, KIP-279, KIP-320): where a follower's log ends once it follows a
leader, computed as Kafka 4.0 computes it.

* :class:`EpochCache` is ``org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache``: ``assign``
  (with ``isUpdateNeeded`` and ``maybeTruncateNonMonotonicEntries``), ``end_offset_for``
  (``endOffsetFor``), ``truncate_from_end`` (``truncateFromEndAsyncFlush``), ``latest_epoch``.
* :func:`follower_truncation` is the follower's side: ``Partition.makeLeader`` assigns the new epoch
  at the leader's log end offset; the follower fetches with ``lastFetchedEpoch`` (its latest epoch) at
  its log end offset; the leader answers a diverging epoch from ``UnifiedLog.endOffsetForEpoch`` when
  ``epoch < lastFetchedEpoch || endOffset < fetchOffset`` (``Partition.fetchRecords``); the follower
  applies ``AbstractFetcherThread.getOffsetTruncationState`` (an epoch it does not know: truncate to
  the end of its largest smaller epoch and ask again, KIP-279) and truncates
  (``UnifiedLog.truncateTo``), until no divergence is answered. A follower with no epoch truncates to
  its high watermark (``ReplicaManager.initialFetchOffset``,
  ``AbstractFetcherThread.truncateToHighWatermark``); a leader with no answer (no epoch) is
  ``OffsetOutOfRange``, handled by ``AbstractFetcherThread.fetchOffsetAndTruncate``.

Tested against Kafka's own classes (kafka-storage 4.0.0) on the scenarios of
``tests/formats/kafka/replicas/``. Memory: the caches hold at most one entry per epoch given; the loop
ends after at most one round per follower entry (each round removes one, or stops as ``stuck``).
"""

from __future__ import annotations

import bisect

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class EpochCache:
    """``LeaderEpochFileCache``'s entries ``[(epoch, startOffset)]``, epochs and offsets increasing."""

    __slots__ = ("epochs", "starts")

    def __init__(self, entries=()):
        self.epochs: list[int] = []
        self.starts: list[int] = []
        for e, s in entries:
            self.epochs.append(e)
            self.starts.append(s)

    def entries(self) -> list[tuple[int, int]]:
        return list(zip(self.epochs, self.starts))

    def latest_epoch(self) -> int | None:
        return self.epochs[-1] if self.epochs else None

    def assign(self, epoch: int, start: int) -> bool:
        """``assign(epoch, startOffset)``: append unless the latest entry has this epoch and starts at or
        before ``start``; entries with an epoch >= ``epoch`` or a start >= ``start`` go first
        (``maybeTruncateNonMonotonicEntries``). Negative values are refused (Kafka throws
        ``IllegalArgumentException``): returns False."""
        if epoch < 0 or start < 0:
            return False
        if self.epochs and not (epoch != self.epochs[-1] or start < self.starts[-1]):
            return False
        while self.epochs and (self.epochs[-1] >= epoch or self.starts[-1] >= start):
            self.epochs.pop()
            self.starts.pop()
        self.epochs.append(epoch)
        self.starts.append(start)
        return True

    def end_offset_for(self, requested: int, log_end: int) -> tuple[int, int]:
        """``endOffsetFor(requestedEpoch, logEndOffset)``: ``(epoch, endOffset)``. The latest epoch ends at
        ``log_end``; another at the start of the first larger epoch, answered with the largest epoch
        <= ``requested`` (or ``requested`` itself when none is smaller: the log start moved past it);
        undefined (-1, -1) for an undefined request or one above every epoch."""
        if requested == UNDEFINED_EPOCH or not self.epochs:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if self.epochs[-1] == requested:
            return requested, log_end
        hi = bisect.bisect_right(self.epochs, requested)  # the first entry with an epoch > requested
        if hi == len(self.epochs):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if hi == 0:
            return requested, self.starts[0]
        return self.epochs[hi - 1], self.starts[hi]

    def truncate_from_end(self, end: int) -> None:
        """``truncateFromEndAsyncFlush(endOffset)``: drop the entries starting at or after ``end``."""
        while self.starts and self.starts[-1] >= end:
            self.epochs.pop()
            self.starts.pop()


def end_offset_for_epoch(cache: EpochCache, epoch: int, log_end: int):
    """``UnifiedLog.endOffsetForEpoch``: ``(epoch, endOffset)``, or None when the offset is undefined."""
    e, off = cache.end_offset_for(epoch, log_end)
    return None if off == UNDEFINED_EPOCH_OFFSET else (e, off)


def follower_truncation(leader_epochs, leader_end: int, follower_epochs, follower_end: int,
                        follower_hw: int | None, new_epoch: int) -> tuple[int, list, str]:
    """Where the follower's log ends after following the leader elected in ``new_epoch``:
    ``(offset, rounds, rule)``. ``*_epochs``: ``[(epoch, startOffset)]`` (the copies'
    ``LeaderEpochFileCache`` entries); ``*_end``: log end offsets; ``follower_hw``: its high watermark
    (None: unknown, taken as its log end offset). ``rounds``: ``{"lastFetchedEpoch", "epoch",
    "endOffset", "truncateTo", "again"}`` per diverging answer; ``rule``: ``"no-divergence"``,
    ``"diverging-epoch"``, ``"high-watermark"`` (the follower has no epoch), ``"out-of-range"`` (the
    leader has none) or ``"stuck"`` (Kafka's truncateTo would not move and the same answer would come
    again: the fetcher loops)."""
    leader = EpochCache(leader_epochs)
    leader.assign(new_epoch, leader_end)  # Partition.makeLeader
    follower = EpochCache(follower_epochs)
    leo = follower_end
    rounds: list = []
    if follower.latest_epoch() is None:
        return min(leo, follower_hw if follower_hw is not None else leo), rounds, "high-watermark"
    for _ in range(2 * len(follower.epochs) + 4):  # each round moves the log end down; bounded all the same
        fetch_epoch = follower.latest_epoch()
        if fetch_epoch is None:  # a fetch without lastFetchedEpoch: no divergence check
            break
        ans = end_offset_for_epoch(leader, fetch_epoch, leader_end)
        if ans is None:  # OffsetOutOfRange: fetchOffsetAndTruncate
            return (leader_end if leader_end < leo else leo), rounds, "out-of-range"
        if not (ans[0] < fetch_epoch or ans[1] < leo):
            break
        mine = end_offset_for_epoch(follower, ans[0], leo)  # getOffsetTruncationState
        if mine is None:
            to, again = min(ans[1], leo), False
        elif mine[0] != ans[0]:
            to, again = min(mine[1], leo), True
        else:
            to, again = min(mine[1], ans[1], leo), False
        rounds.append({"lastFetchedEpoch": fetch_epoch, "epoch": ans[0], "endOffset": ans[1], "truncateTo": to,
                       "again": again})
        if to >= leo:
            return leo, rounds, "stuck"
        follower.truncate_from_end(to)  # UnifiedLog.truncateTo
        leo = to
    else:
        return leo, rounds, "stuck"
    return leo, rounds, "diverging-epoch" if rounds else "no-divergence"


def epochs_of_batches(batches) -> list[tuple[int, int]]:
    """The entries a ``LeaderEpochFileCache`` gets from appending ``batches`` (``(partitionLeaderEpoch,
    baseOffset, magic)`` in log order): ``UnifiedLog.append`` assigns every magic-2 batch's epoch at its
    base offset (a negative epoch is skipped)."""
    cache = EpochCache()
    for epoch, base, magic in batches:
        if magic >= 2:
            cache.assign(epoch, base)
    return cache.entries()
