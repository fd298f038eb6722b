"""The unit protocol: what every format's decoder yields and what ``ops/`` may rely on.

Units are the top-level things ``dump`` prints one at a time (a record batch, a legacy message, an
index table, a protocol frame, a RocketMQ commitlog record, an unparsed range...).

Every unit class inherits :class:`UnitBase`, which gives each optional member of the protocol its
"none" value, so that ``ops/``, ``render/`` and ``spark/`` read members directly (no ``getattr``
probing). A unit class declares ``type``, ``position``, ``length``, ``problems``, ``to_json`` and
``to_tree`` itself, and overrides the optional members it has (as a class attribute, an instance
attribute, a slot or a property). :class:`Unit`, :class:`LogUnit` and :class:`RawUnit` are the same
members written as ``typing.Protocol`` classes (``runtime_checkable``: ``isinstance(u, Unit)``).

Optional methods (``json_line``, ``raw_json``, ``raw_bytes``, ``report_table``, ``record_contents``,
``show_records``) are ``None`` on
units that do not have them: a caller tests ``unit.raw_json is not None`` before calling it.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, runtime_checkable

from wireinspect.model import Node, Problem


class _NoProblems:
    """The default of :attr:`UnitBase.valid`: ``not unit.problems``, read each time (lazily parsed
    units add problems as they are rendered). A non-data descriptor: a subclass's class attribute,
    slot or property, or an instance attribute set in ``__init__``, takes precedence."""

    def __get__(self, unit, owner=None):
        if unit is None:
            return self
        return not unit.problems


class UnitBase:
    """Base class of every unit: the defaults of the optional members of :class:`Unit`.

    Required, declared by each subclass (not here):

    * ``type`` (str): the JSON ``"type"`` (``"batch"``, ``"message"``, ``"frame"``, ``"unparsed"``...).
    * ``position``, ``length`` (int, bytes): where the unit's bytes are, absolute in the input (for a
      capture's or stream dump's unit: in the byte stream of its direction).
    * ``problems`` (list of :class:`~wireinspect.model.Problem`): damage found, absolute positions.
    * ``to_json(enc) -> dict``: the documented ``dump --json`` object (docs/json.md); ``enc(bytes)``
      gives the JSON text of bytes (base64, hex or text, ``--bytes``).
    * ``to_tree() -> Node``: the field tree, every node with its absolute position and length.

    Optional, with their defaults here (the "none" value of each):

    * ``entries`` (int, 1): what ``verify`` counts as the unit's ``batches`` (entries of the log or
      file): 0 for units that hold no entry (notes, unparsed ranges, a capture's summary); a sidecar
      table: its number of entries; the fast path's run: the batches it stands for.
    * ``records_count`` (int, 0): records/messages the unit holds (``verify``'s ``records``,
      ``dump --max-records``).
    * ``notes`` (sequence of Problem, ``()``): findings that are not damage (``verify``'s ``notes``).
    * ``valid`` (bool, ``not problems``): as the broker's recovery judges the entry (``recover``
      keeps the valid prefix; ``verify``'s ``validBytes`` of a log format; Spark's ``unitValid``).
    * ``base_offset``, ``last_offset`` (int or None): the logical offsets of the first and last
      record (Kafka offsets; RocketMQ queue/commit-log offsets), None when the unit has none
      (``dump --offset``).
    * ``base_timestamp``, ``max_timestamp`` (int or None, ms since the epoch): the smallest and the
      largest record timestamp (``dump --time``; ``recover``'s rebuilt time index). A unit with only
      ``max_timestamp`` (a legacy message) is taken to start at it.
    * ``producer_id`` (int or None): the idempotent producer's id (``dump --producer-id``).
    * ``file_position`` (int or None, bytes): a capture's unit: the capture *file* position of its
      first byte (``dump``'s progress bar).
    * ``file_size`` (int or None, bytes): the file size a unit of a fixed-size file says its file
      has (RocketMQ ``mappedFileSize``), for ``recover``.
    * ``summary_text`` (str or None): one line that ``verify`` prints instead of its valid-prefix
      tail (a capture's summary).
    * ``report_table`` (None, or a method ``() -> (title, header, rows, footer)``): the table
      ``verify`` prints for the unit (a partition directory).
    * ``json_line`` (None, or a method ``(enc, mode, dumps, extra) -> str | bytes``): a hand-tuned
      ``dump --json`` line (without the newline; bytes: UTF-8) equal to ``dumps(to_json(enc) | extra)``; ``mode``
      names ``enc`` (``"base64"``, ``"hex"``, ``"text"``); not used with ``--raw``/``--iso-times``.
    * ``raw_json`` (None, or a method ``(read, enc) -> dict``): the keys ``dump --json --raw`` adds,
      what ``encode`` cannot recompute (docs/json.md); ``read(position, n)`` reads the input at
      absolute positions (bytes).
    * ``raw_bytes`` (None, or a method ``() -> bytes``): the unit's bytes when they are not the
      input's at ``position`` (a stream's frame), for ``dump --hexdump``.
    * ``record_contents`` (None, or a method ``() -> list``): each record's ``(key, value, headers)``
      in the order of the unit's JSON ``records`` (a plain message: itself): ``key``/``value`` bytes or
      None, ``headers`` a sequence of ``(name bytes, value bytes or None)``, for the content filters
      (``dump --key``..., :mod:`wireinspect.ops.content`); a format without keys or headers gives
      ``None``/``()`` for them (Kafka 0.7's payload is the value; RocketMQ's key is the ``KEYS``
      property, its headers the properties, its value the body, decompressed).
    * ``record_columns`` (None, or a method ``(want=None) -> (dict, tuple) | None``): the unit's JSON
      object without its records, and its records as columns ``(position, length, offset, timestamp,
      key, value, header counts, header keys, header values, bytes of keys and values)``, when it gives
      them straight from its bytes (a plain valid Kafka batch), else ``None``: the columnar tables'
      rows (``sql``, ``scan``, Spark), which otherwise read ``to_json``. ``want``: the names among
      ``key``, ``value``, ``headers`` to build (None: all); the others are ``None``, never copied.
    * ``record_buffers`` (None, or a method ``(want=None, bases=(0,) * 5) -> (dict, tuple) | None``): the same as
      ``record_columns`` with the columns as Arrow buffers (``formats/kafka/recordtable.buffers``: no
      object per record), when the unit can give them, else ``None`` (then ``record_columns``).
    * ``record_lines`` (None, or a method ``(tail: str) -> bytes | None``): the unit's ``dump --records``
      lines (UTF-8; ``codec/text.record_line``, each ending with ``tail``) when it writes them straight from its
      bytes (a plain valid Kafka batch), else ``None``: then the op builds them from
      ``record_contents`` and ``to_json``.
    * ``tree_head`` (None, or a method ``() -> Node``): the root node of ``to_tree()`` without its
      children (its line, and every problem of the unit's tree on it), for the one-line outputs
      (``dump --summary``) of units whose tree is big; ``None``: they take ``to_tree()``.
    * ``show_records`` (None, or a method ``(indexes: frozenset) -> None``): from now on the unit's
      projections (``to_json``, ``to_tree``, ``json_line``) show only the records at those indexes of
      ``record_contents()`` (present whenever ``record_contents`` is).

    Where a capture's (or a stream dump's) unit sits, read by ``inputs/capture`` (filters, summary,
    problem locations) and ``streams.py``; None for a file's units:

    * ``protocol`` (str or None): the stream protocol's id (``"kafka"``, ``"rocketmq"``, ``"jafka"``).
    * ``conversation`` (:class:`~wireinspect.streams.Conversation` or None): its TCP connection.
    * ``direction`` (``"request"``, ``"response"`` or None): the stream it is in.
    * ``latency_ms`` (float or None, ms): a captured response's time since its request's first packet.
    * ``timestamp`` (float or None, seconds since the epoch): a captured frame's time (the packet that
      carried its first byte).

    ``__slots__`` is empty, so a slotted subclass stays without a ``__dict__``.
    """

    __slots__ = ()

    entries: int = 1
    records_count: int = 0
    notes: Sequence[Problem] = ()
    valid: bool = _NoProblems()  # type: ignore[assignment]
    base_offset: int | None = None
    last_offset: int | None = None
    base_timestamp: int | None = None
    max_timestamp: int | None = None
    producer_id: int | None = None
    file_position: int | None = None
    file_size: int | None = None
    summary_text: str | None = None
    report_table: Callable[[], tuple] | None = None
    json_line: Callable[..., str | bytes] | None = None
    raw_json: Callable[[Callable[[int, int], bytes], Callable], dict] | None = None
    raw_bytes: Callable[[], bytes] | None = None
    record_contents: Callable[[], list] | None = None
    record_columns: Callable[..., tuple | None] | None = None
    record_buffers: Callable[..., tuple | None] | None = None
    record_lines: Callable[[str], bytes | None] | None = None
    tree_head: Callable[[], object] | None = None
    show_records: Callable[[frozenset], None] | None = None
    protocol: str | None = None
    conversation: object | None = None
    direction: str | None = None
    latency_ms: float | None = None
    timestamp: float | None = None


@runtime_checkable
class Unit(Protocol):
    """Every unit: the members ``ops/``, ``render/`` and ``spark/`` may read (see :class:`UnitBase`
    for each one's shape, unit and default)."""

    type: str
    position: int
    length: int
    problems: list
    entries: int
    records_count: int
    notes: Sequence[Problem]
    valid: bool
    base_offset: int | None
    last_offset: int | None
    base_timestamp: int | None
    max_timestamp: int | None
    producer_id: int | None
    file_position: int | None
    file_size: int | None
    summary_text: str | None
    report_table: Callable[[], tuple] | None
    json_line: Callable[..., str | bytes] | None
    raw_json: Callable[[Callable[[int, int], bytes], Callable], dict] | None
    raw_bytes: Callable[[], bytes] | None
    record_contents: Callable[[], list] | None
    record_columns: Callable[..., tuple | None] | None
    record_buffers: Callable[..., tuple | None] | None
    record_lines: Callable[[str], bytes | None] | None
    tree_head: Callable[[], object] | None
    show_records: Callable[[frozenset], None] | None
    protocol: str | None
    conversation: object | None
    direction: str | None
    latency_ms: float | None
    timestamp: float | None

    def to_json(self, enc: Callable) -> dict:
        """The documented ``dump --json`` object (docs/json.md); ``enc`` turns bytes into JSON text."""

    def to_tree(self) -> Node:
        """The field tree, every node with its absolute byte position and length."""


@runtime_checkable
class LogUnit(Unit, Protocol):
    """A unit of a log format (``Format.recoverable``): an entry the broker's recovery judges, as
    ``recover`` reads it (``valid``, ``records_count``, ``base_offset``, ``last_offset``; also
    ``max_timestamp`` and ``file_size`` for the rebuilt sidecars). Every path of a log format
    (``units``, ``check``, ``entries``) yields LogUnits: the fast path's runs of batches too."""

    valid: bool  # as the broker's recovery judges it
    records_count: int
    base_offset: int | None  # logical offsets, None when unknown
    last_offset: int | None


@runtime_checkable
class RawUnit(Unit, Protocol):
    """A unit that adds to its JSON what ``encode`` cannot recompute (``dump --json --raw``):
    ``isinstance(u, RawUnit)`` is true only when ``u.raw_json`` is a method (not the default None)."""

    def raw_json(self, read: Callable[[int, int], bytes], enc: Callable) -> dict:
        """Keys to add: ``read(position, n)`` reads the input at absolute positions (bytes)."""
