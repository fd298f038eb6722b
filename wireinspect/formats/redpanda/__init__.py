"""Redpanda's on-disk storage (redpanda-data/redpanda, ``src/v/storage``): segments
``<base offset>-<term>-v1.log`` of little-endian batch headers with Kafka records inside, and the
``<namespace>/<topic>/<partition>_<revision>/`` directories that hold them.

``header.py`` (the 61-byte batch header, batch types), ``batch.py`` (one batch: header, both CRCs,
records through the Kafka record loop), ``segment.py`` (the walk: zero tail, resynchronisation),
``encode.py`` (back to bytes), ``partition.py`` (a partition directory), ``baseindex.py`` and
``compactionindex.py`` (``.base_index``, ``.compaction_index``), ``indexcheck.py`` (both against their
segment), ``names.py`` (file and directory names), ``format.py`` (the descriptors). The raw keys of ``dump --json --raw`` are Kafka's
(:func:`~wireinspect.formats.kafka.log_encode.raw_keys`, ``raw_whole``)."""
