"""The options formats read: :class:`Options`, part of the format contract beside
:class:`~wireinspect.formats.base.Format` (``units(source, opts)``, ``check``, ``entries``, a stream
protocol's ``decoder(conversation, opts)``). The commands (``cli.py``, ``ops/``, ``spark/``) build
one per invocation; a format reads its typed attributes directly (no ``getattr`` probing), and a
function that may be given no options takes :func:`options_or_default`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_ENTRY, DEFAULT_MAX_RECORDS


@dataclass
class Options:
    """What a command asks of the formats (every field typed; a format reads the ones it honours).

    * ``max_decompressed``: bytes of output per compressed unit (bomb guard); ``max_batch``: bytes of
      one entry decoded in memory; ``max_records``: records decoded per batch or compressed wrapper (a
      ``records_limit`` problem past it); ``deep``: verify decodes records too (decompressing).
    * ``start``: the byte position a log's units start at (``dump --offset``, from ``Format.seek``).
    * ``records``: decode what frames hold (``False``: verify's fast pass over a capture).
    * Captures (``Format.honours``): ``ports`` (``--port``), ``apis`` (``--api`` names or keys, as
      given), ``connections`` (``--connection``), ``correlation_ids`` (``--correlation-id``).
    * ``commitlog``: RocketMQ's commitlog directory for consume queues (``--commitlog``).
    * ``records_as``: Kafka logs: decode the records' keys and values as this internal topic's
      (``--records-as``: ``offsets``, ``transactions``, ``share-state``, ``metadata``,
      ``remote-log-metadata``; ``"none"``: never); ``None``: as the file's directory names.
    * ``headers_only``: batches, messages and frames without the records inside them
      (``--headers-only``; Kafka segments, Kafka 0.7/Jafka logs, Kafka captures).
    * ``content``: ``dump``/``view``'s filters on record content (``--key``, ``--key-regex``,
      ``--value-contains``, ``--header``: an :class:`~wireinspect.ops.content.ContentFilter`, or
      None), applied to the units by ``ops``, never read by a format (the formats that list
      ``"content"`` in ``honours`` give their units ``record_contents``/``show_records``)."""

    max_decompressed: int = DEFAULT_LIMIT
    max_batch: int = DEFAULT_MAX_ENTRY
    max_records: int = DEFAULT_MAX_RECORDS
    deep: bool = False
    start: int = 0
    records: bool = True
    ports: tuple = ()
    apis: tuple = ()
    connections: tuple = ()
    correlation_ids: tuple = ()
    commitlog: str | None = None
    records_as: str | None = None
    headers_only: bool = False
    content: object = None

    # option name (Format.honours) -> attribute: the format-specific options
    FORMAT_OPTIONS: ClassVar[dict] = {"port": "ports", "api": "apis", "connection": "connections",
                      "correlation_id": "correlation_ids", "commitlog": "commitlog",
                      "records_as": "records_as", "headers_only": "headers_only",
                      "content": "content"}

    def given(self) -> list[str]:
        """The format-specific options given, by their ``Format.honours`` names."""
        return [name for name, attr in self.FORMAT_OPTIONS.items() if getattr(self, attr)]


def options_or_default(opts: Options | None) -> Options:
    """``opts``, or the defaults when a caller gives none (a decoder called outside a command)."""
    return opts if opts is not None else Options()
