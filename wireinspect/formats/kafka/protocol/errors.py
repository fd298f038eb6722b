"""Kafka's error codes by name: the table of ``org.apache.kafka.common.protocol.Errors`` (code, name,
default message), kept as data in ``errors.json`` beside this module (its ``source`` key gives the
commit and blob it was read from). Used wherever a Kafka error code is shown to a person: the tree
(``ErrorCode = 35 UNSUPPORTED_VERSION``) and a frame's line (``dump --summary``). JSON keeps the
numbers (what the bytes hold)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

_TABLE = Path(__file__).with_name("errors.json")


@functools.cache
def _errors() -> dict:
    """``{code: (name, message or None)}`` from ``errors.json``."""
    with open(_TABLE, encoding="utf-8") as f:
        return {e["code"]: (e["name"], e["message"]) for e in json.load(f)["errors"]}


def error_name(code) -> str | None:
    """Kafka's name of error ``code`` (``35`` -> ``"UNSUPPORTED_VERSION"``, ``0`` -> ``"NONE"``);
    None for a code Kafka does not define (or a value that is not an int)."""
    if type(code) is not int:
        return None
    e = _errors().get(code)
    return e[0] if e is not None else None


def error_message(code) -> str | None:
    """Kafka's default message for error ``code`` (None for NONE and for unknown codes)."""
    e = _errors().get(code) if type(code) is int else None
    return e[1] if e is not None else None


def error_display(code: int) -> str:
    """An error code field's value as the tree shows it: ``"35 UNSUPPORTED_VERSION"``;
    ``"9999 (no Kafka error has this code)"`` for a code Kafka does not define."""
    name = error_name(code)
    return f"{code} {name}" if name is not None else f"{code} (no Kafka error has this code)"


def is_error_field(name: str) -> bool:
    """Whether a protocol field of this name holds a Kafka error code (``ErrorCode``,
    ``PartitionErrorCode``, ``TopicConfigErrorCode``, ``AcknowledgeErrorCode``...: int16 fields whose
    name ends in ``ErrorCode``, as Kafka's message specs name them)."""
    return name.endswith("ErrorCode")
