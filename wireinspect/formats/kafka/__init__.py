"""Apache Kafka: record batches (magic 0/1/2), log segments and their sidecar files.

The record batch (``records.py``) imports nothing built on it: the layers above register what it calls
(``hooks.py``) here, each imported when first called.
"""

from wireinspect.formats.kafka.hooks import HOOKS


def _schema_json(data, r, enc):
    from wireinspect.formats.kafka.registry.labels import record_schemas

    return record_schemas(data, r, enc)


def _schema_nodes(node, data, r, base):
    from wireinspect.formats.kafka.registry.labels import add_schema_nodes

    add_schema_nodes(node, data, r, base)


_ACTIVE = []  # registry.store.active, once imported (asked once per batch on the JSON fast path)


def _registry_active() -> bool:
    if not _ACTIVE:
        from wireinspect.formats.kafka.registry.store import active

        _ACTIVE.append(active)
    return _ACTIVE[0]() is not None


def _decode_records(records, data, base, kind, control, problems, place):
    from wireinspect.formats.kafka.internal.decode import decode_batch_records

    decode_batch_records(records, data, base, kind, control, problems, place)


def _internal_json(batch, enc, extra, shared_keys=True):
    from wireinspect.formats.kafka.internal.fastpath import batch_json

    return batch_json(batch, enc, extra, shared_keys=shared_keys)


def _raw_json(batch, read, enc):
    from wireinspect.formats.kafka.log_encode import batch_raw_json

    return batch_raw_json(batch, read, enc)


def _decode_record(kind, control, data, message, base):
    from wireinspect.formats.kafka.internal.decode import decode_record

    return decode_record(kind, control, data, message, base)


def _message_raw_json(message, read, enc):
    from wireinspect.formats.kafka.log_encode import message_raw_json

    return message_raw_json(message, read, enc)


HOOKS.schema_json, HOOKS.schema_nodes, HOOKS.registry_active = _schema_json, _schema_nodes, _registry_active
HOOKS.decode_records, HOOKS.internal_json, HOOKS.raw_json = _decode_records, _internal_json, _raw_json
HOOKS.decode_record, HOOKS.message_raw_json = _decode_record, _message_raw_json
