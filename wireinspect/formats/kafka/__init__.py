"""Apache Kafka: record batches (magic 0/1/2), log segments and their sidecar files."""
