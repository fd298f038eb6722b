"""Kafka's internal topics: the keys and values of their records decoded from Kafka's own JSON
record definitions (``protocol/specs/internal/``), with the protocol walker
(:mod:`wireinspect.formats.kafka.protocol.walker`) and its compiled plans.

* :mod:`.kinds`: the topic kinds (``offsets``, ``transactions``, ``share-state``, ``metadata``,
  ``remote-log-metadata``) and :func:`~.kinds.internal_kind`, a kind from a file's path;
* :mod:`.registry`: which spec decodes which record type of which kind, and the KRaft control
  records' specs;
* :mod:`.decode`: the framings (coordinator, metadata, control) -> :class:`~.decode.Decoded`, its
  JSON and tree projections; :func:`~.decode.decode_batch_records` for a batch's records;
* :mod:`.consumer`: the consumer-protocol bytes inside GroupMetadataValue members;
* :mod:`.encode`: key and value bytes back from ``keyDecoded``/``valueDecoded``.

The JSON contract (``keyDecoded``/``valueDecoded``) is in docs/json.md.
"""
