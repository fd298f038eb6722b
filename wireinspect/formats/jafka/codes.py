"""Kafka 0.7 / Jafka request and error code tables and the request size limit: what the stream
sniffer (:mod:`.stream`) needs without the layouts of :mod:`.requests` (which re-exports them).

Sources: ``kafka.api.RequestKeys`` / ``io.jafka.api.RequestKeys``, ``kafka.common.ErrorMapping``,
``max.socket.request.bytes``.
"""

from __future__ import annotations

REQUEST_TYPES = {0: "PRODUCE", 1: "FETCH", 2: "MULTIFETCH", 3: "MULTIPRODUCE", 4: "OFFSETS", 5: "CREATE",
                 6: "DELETE"}
ERROR_CODES = {-1: "Unknown", 0: "NoError", 1: "OffsetOutOfRange", 2: "InvalidMessage", 3: "WrongPartition",
               4: "InvalidFetchSize"}
NO_RESPONSE = (0, 3)
MAX_REQUEST = 100 << 20  # max.socket.request.bytes default (both brokers)
