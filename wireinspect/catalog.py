"""The catalog: every format wireinspect reads and every stream protocol, as explicit tuples, and how
an input's format is chosen.

The formats under :mod:`wireinspect.formats` declare their :class:`~wireinspect.formats.base.Format`
descriptors and stream protocols; the capture formats (pcap/pcapng captures, stream dumps) are
declared generically by :mod:`wireinspect.captures`, over the capture machinery of
:mod:`wireinspect.inputs.capture`. This module imports both directly (a format that fails to import
fails loudly) and binds them: the protocols the captures choose from, the stream dump format of each
protocol that has one. It sits above both, so that no format imports an input and no input names a
format; the inputs that choose a format (``inputs/open.py``, ``inputs/listing.py``) sit above it.

Every command imports this module, so what it imports is kept light: the descriptor modules and
the stream protocol objects import their decoders inside the hooks that use them, and the reports
(:data:`REPORTS`) are imported when one is run. Reading a Kafka segment imports Kafka's readers only.
"""

from __future__ import annotations

from dataclasses import dataclass

from wireinspect.captures import pcap_format, stream_dump_format
from wireinspect.formats.base import Format
from wireinspect.formats.jafka.format import FORMATS as JAFKA, MESSAGE_COLUMNS as JAFKA_MESSAGES
from wireinspect.formats.jafka.stream import PROTOCOL as JAFKA_PROTOCOL
from wireinspect.formats.kafka.internal.kinds import TOPICS as RECORD_KINDS  # noqa: F401 (the catalog's: --records-as)
from wireinspect.formats.kafka.logformat import KAFKA_LOG
from wireinspect.formats.kafka.protocol.stream import KAFKA
from wireinspect.formats.kafka.sidecar import FORMATS as KAFKA_SIDECARS
from wireinspect.formats.redpanda.format import FORMATS as REDPANDA
from wireinspect.formats.rocketmq.format import FORMATS as ROCKETMQ, MESSAGE_COLUMNS as ROCKETMQ_MESSAGES, offsets_report
from wireinspect.formats.rocketmq.stream import PROTOCOL as ROCKETMQ_PROTOCOL

STREAM_PROTOCOLS: tuple = (KAFKA, ROCKETMQ_PROTOCOL, JAFKA_PROTOCOL)
"""The stream protocols a capture's conversations are decoded with (interface:
:mod:`wireinspect.streams`); a tie between them goes to the first."""

PCAP = pcap_format(STREAM_PROTOCOLS)
KAFKA_STREAM = stream_dump_format(KAFKA)

FORMATS: tuple[Format, ...] = (KAFKA_LOG, *KAFKA_SIDECARS, *REDPANDA, *JAFKA, *ROCKETMQ, PCAP, KAFKA_STREAM)

MESSAGE_COLUMNS: tuple = (JAFKA_MESSAGES, ROCKETMQ_MESSAGES)
"""How the messages that are not Kafka records fill ``spark scan``'s record columns
(:class:`~wireinspect.formats.base.MessageColumns`, read by ``spark/schema.py``)."""

# RECORD_KINDS: the record decoders of ``--records-as`` (kind -> the internal topic whose keys and values it
# decodes; chosen by default from a partition directory's name: docs/json.md, docs/internal-topics.md)


def _group_offsets(**options):
    from wireinspect.formats.kafka.internal.groups import GroupOffsets

    return GroupOffsets(**options)


def _transactions(**options):
    from wireinspect.formats.kafka.internal.transactions import Transactions

    return Transactions(**options)


def _metadata(**options):
    from wireinspect.formats.kafka.internal.image import MetadataReplay

    return MetadataReplay(**options)


REPORTS: dict = {"group-offsets": _group_offsets, "transactions": _transactions, "metadata": _metadata,
                 "rocketmq-offsets": offsets_report}
"""The reports over the records of inputs, by command name: each a factory of an analysis (options
as keyword arguments; ``ValueError`` for options that do not go together) that the generic runner
(``ops/analyse.py``) feeds. They read Kafka's internal topics (docs/internal-topics.md): the
factories import their report (``formats/kafka/internal/``) when called."""


ENTRY_TYPES: frozenset = frozenset().union(*(f.entry_types for f in FORMATS))
"""The JSON types of the units that are entries holding records, in any format (``Format.entry_types``)."""


def all_formats() -> tuple[Format, ...]:
    """Every format, in the order ``wireinspect formats`` lists them."""
    return FORMATS


def get_format(fid: str) -> Format | None:
    """The format whose ``id`` is ``fid`` (``--format``), or None."""
    for f in FORMATS:
        if f.id == fid:
            return f
    return None


def stream_protocols() -> tuple:
    """:data:`STREAM_PROTOCOLS`."""
    return STREAM_PROTOCOLS


NAMED = 95
"""The confidence of a format that recognises a file by its name and place alone (``leader-epoch-checkpoint``,
``<store>/checkpoint``, ``consumequeue/<topic>/<queue>/<20 digits>``): such a file is never re-guessed by
its content (:func:`recognise`)."""

SURE = 80
"""A format recognised by content alone below this confidence is a guess: ``dump`` and ``verify`` say so
(``recognition`` and ``confidence`` in the JSON, a note line in the text; docs/json.md)."""


@dataclass(frozen=True)
class Recognition:
    """How an input's format was chosen: ``format`` (None: no format claims it), ``by`` (``"name"``: its
    file name and place had a say, ``"content"``: its bytes alone, ``"forced"``: ``--format``/``PATH:ID``),
    ``confidence`` (the winning sniffer's score, 0..100; 100 when forced)."""

    format: Format | None
    by: str
    confidence: int

    @property
    def guessed(self) -> bool:
        """Recognised by content alone, below :data:`SURE`: what the input is was guessed."""
        return self.format is not None and self.by == "content" and self.confidence < SURE

    def describe(self) -> str:
        """One sentence for a person: what the guess rests on and how to settle it."""
        f = self.format
        return (f"recognised as {f.id} by its content alone (confidence {self.confidence} of 100: "
                f"{f.recognised_by}); give --format ID if it is something else")


def claims_name(name: str) -> bool:
    """True when some format recognises the file ``name`` (a path: its place counts) by its name alone
    (confidence :data:`NAMED` or more with no bytes), so that its text must not be read as a hex dump (a
    checkpoint such as "0\\n1\\n0 0", a broker's ``config/topics.json``)."""
    return any(f.sniff(b"", name or "") >= NAMED for f in FORMATS)


def recognise(head: bytes, name: str) -> Recognition:
    """The format that claims ``head`` (the input's first bytes)/``name`` (its path or name) most
    confidently, and how. A format that claims the name alone with :data:`NAMED` or more wins without
    any content being looked at (a RocketMQ ``store/checkpoint`` is never read as a Kafka segment
    because its byte 16 happens to be 0)."""
    name = name or ""
    by_name = [(f.sniff(b"", name), f) for f in FORMATS]
    best_named = max(by_name, key=lambda t: t[0])  # the first of equals: the catalog's order
    if best_named[0] >= NAMED:
        return Recognition(best_named[1], "name", best_named[0])
    best, score = None, 0
    for f in FORMATS:
        s = f.sniff(head, name)
        if s > score:
            best, score = f, s
    if best is None:
        return Recognition(None, "content", 0)
    named = next(n for n, f in by_name if f is best)
    return Recognition(best, "name" if named > 0 else "content", score)


def choose_format(head: bytes, name: str) -> Format | None:
    """The format that claims ``head``/``name`` most confidently (:func:`recognise`), or ``None``."""
    return recognise(head, name).format


# Fields holding milliseconds since the epoch are declared where they are (``Int(..., ms=True)`` in a
# layout, ``layout.declare_ms``), so a unit's are declared once the module that builds it is imported.
# :func:`ms_fields` also imports these declaring modules first, so that the answer does not depend on what
# a command happened to import (the Kafka batch's and record's names, Redpanda's batch header, the Kafka
# protocol's specs); sidetables.py and internal/image.py declare no other name than these or their own
# units' (imported before their units exist), and are not loaded for it (their import costs ~20 ms).
_MS_DECLARED = ("wireinspect.formats.kafka.records", "wireinspect.formats.kafka.legacy",
                "wireinspect.formats.kafka.sidetables", "wireinspect.formats.redpanda.header",
                "wireinspect.formats.kafka.protocol.specs_loader", "wireinspect.formats.kafka.internal.image",
                "wireinspect.formats.rocketmq.bookkeeping",
                "wireinspect.formats.rocketmq.batchcq", "wireinspect.formats.rocketmq.timer")


def ms_fields() -> set:
    """The names of every field that a format declares to hold milliseconds since the epoch
    (:func:`wireinspect.layout.ms_fields`, once the declaring modules are imported): the renderers
    show their ISO-8601 time (``render.safe.field_iso``)."""
    import importlib

    from wireinspect.layout import ms_fields as declared

    for module in _MS_DECLARED:
        importlib.import_module(module)
    return declared()


def api_names() -> dict:
    """``{protocol id: {API key: name}}`` of the stream protocols whose frames ``--api`` selects (those
    with ``api_names``; Kafka's from its JSON specs): what the command line checks ``--api`` against."""
    return {p.id: p.api_names() for p in STREAM_PROTOCOLS if p.api_names is not None}


def use_schemas(paths, given: str | None, max_decompressed: int) -> list:
    """``dump``/``view`` ``--schemas DIR`` (``given``), else the ``_schemas-N`` partitions among
    ``paths``: the offline Schema Registry that Kafka record keys and values resolve against from now
    on, in the current context (:mod:`wireinspect.formats.kafka.registry.store`; no registry when there
    is none). Returns the notes of registry records that do not read (problems in the data);
    :class:`~wireinspect.errors.InputError` when ``given`` holds no registry record."""
    from wireinspect.formats.kafka.registry import store

    reg = store.registry_for(paths, given, max_decompressed)
    store.activate(reg)
    return list(reg.notes) if reg is not None else []


def coordinator_partition(kind: str, key: str, partitions: int) -> dict:
    """``coordinator-partition``: the partition of ``__consumer_offsets`` (``kind`` ``group``) or
    ``__transaction_state`` (``transactional-id``) that holds ``key`` (see
    :func:`wireinspect.formats.kafka.internal.coordinator.locate`)."""
    from wireinspect.formats.kafka.internal.coordinator import locate

    return locate(kind, key, partitions)


def topic_partition(path: str) -> tuple[str | None, int | None]:
    """``(topic, partition)`` that the place of the file ``path`` names, as the first format with a
    ``partition_of`` hook reads it (Kafka's ``<topic>-<partition>/``, Redpanda's
    ``<topic>/<partition>_<revision>/``); ``(None, None)`` when none does."""
    for f in FORMATS:
        if f.partition_of is not None:
            got = f.partition_of(path)
            if got is not None:
                return got
    return None, None
