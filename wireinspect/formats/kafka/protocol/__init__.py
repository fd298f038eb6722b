"""Kafka's wire protocol, decoded from Kafka's own JSON message definitions (``specs/``).

* :mod:`.specs_loader`: loading and merging the newest and 3.9.0 definitions, compiled plans;
* :mod:`.walker`: the generic walker (every type, compact encodings, tagged fields, records);
* :mod:`.frames`: request/response frames, header rules, :class:`~.frames.Frame` units;
* :mod:`.stream`: frame splitting, correlation matching, resynchronisation; the ``kafka`` stream
  protocol (interface in :mod:`wireinspect.streams`) that captures are decoded with;
* :mod:`.dumpformat`: what the ``kafka-stream`` dump format needs of Kafka (sniff, direction).

The frame JSON contract is in docs/protocol.md.
"""
