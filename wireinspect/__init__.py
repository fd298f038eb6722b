"""wireinspect: a forensic inspector for message-queue bytes (Kafka, Kafka 0.7/Jafka, RocketMQ)."""

__version__ = "0.2.0"
