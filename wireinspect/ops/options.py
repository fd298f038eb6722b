"""Options shared by every command."""

from __future__ import annotations

from dataclasses import dataclass, field

from wireinspect.codec.compression import DEFAULT_LIMIT, DEFAULT_MAX_ENTRY, DEFAULT_MAX_RECORDS


@dataclass
class Options:
    """``max_decompressed``: bytes of output per compressed unit (bomb guard). ``max_batch``: bytes
    of one entry decoded in memory. ``max_records``: records decoded per batch or compressed wrapper
    (a ``records_limit`` problem past it). ``deep``: verify decodes records too (decompressing).
    ``ports``: TCP ports to treat as Kafka in captures. ``extra``: per-format settings."""

    max_decompressed: int = DEFAULT_LIMIT
    max_batch: int = DEFAULT_MAX_ENTRY
    max_records: int = DEFAULT_MAX_RECORDS
    deep: bool = False
    ports: tuple = ()
    extra: dict = field(default_factory=dict)
