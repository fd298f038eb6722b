"""Schema Registry framing inside Kafka record keys and values, and the offline registry.

* :mod:`.framing`: what a key or value says about its schema (Confluent's magic byte 0 and int32
  schema id, the V1 GUID form, Protobuf message indexes, the ``__key_schema_id``/``__value_schema_id``
  header strategy, AWS Glue's 18-byte header, Apicurio's 8-byte global id), each with a confidence;
* :mod:`.store`: the schemas a ``_schemas`` partition holds (the registry's own topic), read offline;
* :mod:`.payload`: a payload decoded with its schema (Avro through fastavro, JSON Schema payloads as
  JSON, Protobuf as wire-format fields without a schema);
* :mod:`.fields`: the ``keySchema``/``valueSchema`` JSON objects and tree nodes of a record.

Facts: confluentinc/schema-registry ``SchemaId.java`` and the serializers; the project's reference
``internal-topics-redpanda-registry.md`` section 4.
"""
