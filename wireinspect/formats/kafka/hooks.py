"""What the record batch (:mod:`.records`) calls on the layers built on it, without importing them.

A :class:`~.records.Batch` (and a legacy :class:`~.legacy.Message`) labels Schema Registry framed keys and values, decodes internal-topic and
KRaft control records and writes ``dump --json --raw``; the code for each lives above it (``registry/``,
``internal/``, ``log_encode.py``), and ``formats/kafka/__init__.py`` registers it here (lazily: a
verify that decodes no record loads none of it). Each hook is ``None`` until registered.
"""

from __future__ import annotations


class Hooks:
    """The hooks of a batch, with their shapes (``r``: a :class:`~.recordtable.Record`; ``data``: the
    batch's record bytes; ``enc``: bytes -> JSON string):

    * ``schema_json(data, r, enc) -> dict``: ``keySchema``/``valueSchema`` of a registry-framed record;
    * ``schema_nodes(node, data, r, base)``: their tree nodes under the record's node;
    * ``registry_active() -> bool``: a registry is loaded (any framed-looking value may resolve);
    * ``decode_records(records, data, base, kind, control, problems, place)``: internal-topic and
      control records' keys and values decoded into ``r.decoded`` (problems appended at ``place(i)``);
    * ``internal_json(batch, enc, extra, shared_keys=True) -> dict | None``: the ``dump --json``
      object of a plain valid internal-topic batch straight from its columns;
    * ``raw_json(batch, read, enc) -> dict``: ``dump --json --raw``'s members;

    and what a legacy (magic 0/1) entry calls (:mod:`.legacy`):

    * ``decode_record(kind, control, data, message, base) -> (keyDecoded, valueDecoded) | None``: an
      internal topic's key and value inside a legacy message;
    * ``message_raw_json(message, read, enc) -> dict``: ``dump --json --raw``'s members.
    """

    __slots__ = ("schema_json", "schema_nodes", "registry_active", "decode_records", "internal_json", "raw_json",
                 "decode_record", "message_raw_json")

    def __init__(self):
        for name in self.__slots__:
            setattr(self, name, None)


HOOKS = Hooks()
