"""The unit protocol: what every format's decoder yields and what ``ops/`` may rely on.

Units are the top-level things ``dump`` prints one at a time (a record batch, a legacy message, an
index table, a protocol frame, a RocketMQ commitlog record, an unparsed range...).
"""

from __future__ import annotations

from typing import Callable, Protocol, runtime_checkable

from wireinspect.model import Node


@runtime_checkable
class Unit(Protocol):
    """Every unit: ``type`` (the JSON ``"type"``), absolute ``position`` and ``length`` in bytes,
    ``problems`` (list of :class:`~wireinspect.model.Problem`), and its two projections.

    Optional: ``entries`` (int, default 1: what ``verify`` counts as the unit's ``batches``; 0 for
    units that hold no entry: notes, unparsed ranges, a capture's summary; a sidecar table: its
    entries), ``records_count``, ``notes`` (findings that are not damage)."""

    type: str
    position: int
    length: int
    problems: list

    def to_json(self, enc: Callable) -> dict:
        """The documented ``dump --json`` object (docs/json.md); ``enc`` turns bytes into JSON text."""

    def to_tree(self) -> Node:
        """The field tree, every node with its absolute byte position and length."""


@runtime_checkable
class LogUnit(Unit, Protocol):
    """A unit of a log format (``Format.recoverable``): an entry the broker's recovery judges."""

    valid: bool  # as the broker's recovery judges it
    records_count: int
    base_offset: int | None  # logical offsets, None when unknown
    last_offset: int | None


@runtime_checkable
class RawUnit(Unit, Protocol):
    """A unit that can add to its JSON what ``encode`` cannot recompute (``dump --json --raw``)."""

    def raw_json(self, read: Callable[[int, int], bytes], enc: Callable) -> dict:
        """Keys to add: ``read(position, n)`` reads the input at absolute positions (bytes)."""
