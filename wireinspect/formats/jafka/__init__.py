"""Kafka 0.7 and Jafka: messages (:mod:`.messages`), log files, requests and responses
(:mod:`.requests`); the formats are in :mod:`.format`."""

from wireinspect.formats.jafka.format import FORMATS  # noqa: F401
