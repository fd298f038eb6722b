"""Filters on record content (``dump``/``view`` ``--key``, ``--key-regex``, ``--value-contains``,
``--header``), as kcat and grep users expect them.

A unit (batch, legacy message or wrapper, Kafka 0.7/Jafka message, RocketMQ commit-log record) is
kept when at least one of its records matches every filter given (the filters combine with AND,
within one record); the unit then shows only its matching records (tree, JSON, summary), and says
how many matched: ``"recordsShown"`` in JSON, ``N of M records match`` on its tree/summary line.
Units that hold no records (index tables, unparsed stretches, notes) are left out, as
``--offset`` leaves out units without offsets.

Comparisons are on bytes: ``--key`` and ``--value-contains`` take the argument's bytes (UTF-8, or
the bytes the shell gave for an argument that is not UTF-8: ``surrogateescape``); ``--key-regex``
is a Python regular expression searched (``re.search``, not anchored) in the key's text, the key
decoded as UTF-8 with ``errors="surrogateescape"`` (an invalid byte 0xNN reads as U+DCNN); a
``null`` key matches no key filter, a ``null`` value no ``--value-contains``. ``--header NAME=VALUE``
wants a header NAME whose value is VALUE's bytes (``NAME=`` an empty value), ``--header NAME`` one
named NAME with any value (``null`` too); several ``--header`` must all hold in the same record.

The format's side is two members of the unit protocol (:mod:`wireinspect.formats.unit`):
``record_contents()`` (each record's ``(key, value, headers)`` as bytes, in the order of the unit's
``records``) and ``show_records(indexes)`` (the projections then show those records only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import click


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@dataclass
class ContentFilter:
    """The content filters given (``None``/empty: not given). ``given`` names them for messages
    (``--key 'k1'``...). Counts over the inputs read so far: ``units_seen``/``records_seen`` (of units
    that hold records), ``units_shown``/``records_shown``; ``last`` is ``(shown, total)`` of the unit
    :meth:`select` yielded last."""

    key: bytes | None = None
    key_regex: re.Pattern | None = None
    value_contains: bytes | None = None
    headers: tuple = ()  # ((name bytes, value bytes or None: any), ...)
    given: tuple = ()
    units_seen: int = 0
    records_seen: int = 0
    units_shown: int = 0
    records_shown: int = 0
    last: tuple = field(default=(0, 0))

    def matches(self, key, value, headers) -> bool:
        """Does one record (``key``, ``value``: bytes or None; ``headers``: ``(name bytes, value
        bytes or None)`` pairs) match every filter?"""
        if self.key is not None and key != self.key:
            return False
        if self.key_regex is not None and (key is None or
                                           self.key_regex.search(bytes(key).decode("utf-8", "surrogateescape")) is None):
            return False
        if self.value_contains is not None and (value is None or self.value_contains not in value):
            return False
        for name, want in self.headers:
            if not any(n == name and (want is None or v == want) for n, v in headers):
                return False
        return True

    def select(self, units):
        """The units that hold a matching record, each told (``show_records``) to show only those
        (unless every record of it matches); ``last`` holds ``(shown, total)`` of the unit yielded
        last."""
        for u in units:
            contents = u.record_contents
            if contents is None:
                continue
            recs = contents()
            self.units_seen += 1
            self.records_seen += len(recs)
            keep = [i for i, (k, v, h) in enumerate(recs) if self.matches(k, v, h)]
            if not keep:
                continue
            self.units_shown += 1
            self.records_shown += len(keep)
            if len(keep) < len(recs):  # (every record matches: the unit as it is, its fast JSON path too)
                u.show_records(frozenset(keep))
            self.last = (len(keep), len(recs))
            yield u

    def note(self) -> str:
        """The words a shown unit's tree and summary line end with: ``3 of 100 records match``."""
        return f"{self.last[0]} of {self.last[1]} records match"

    def nothing_matched(self) -> str | None:
        """The line for stderr when no record of any input read matched (``None`` when some did)."""
        if self.records_shown:
            return None
        n, units = self.records_seen, self.units_seen
        return (f"no record matches {' '.join(self.given)} (the inputs read hold {n} record{'s' * (n != 1)} "
                f"in {units} batch{'es' * (units != 1)} or message{'s' * (units != 1)})")


def parse_filter(key: str | None, key_regex: str | None, value_contains: str | None,
                 headers: tuple = ()) -> ContentFilter | None:
    """The :class:`ContentFilter` of ``dump``/``view``'s options, or None when none is given; a bad
    regular expression or an empty header name is a usage error (``click.UsageError``)."""
    if key is None and key_regex is None and value_contains is None and not headers:
        return None
    given = []
    f = ContentFilter()
    if key is not None:
        f.key = _bytes(key)
        given.append(f"--key {key!r}")
    if key_regex is not None:
        try:
            f.key_regex = re.compile(key_regex)
        except re.error as e:
            raise click.UsageError(f"--key-regex {key_regex!r}: not a regular expression: {e}") from None
        given.append(f"--key-regex {key_regex!r}")
    if value_contains is not None:
        f.value_contains = _bytes(value_contains)
        given.append(f"--value-contains {value_contains!r}")
    hs = []
    for h in headers:
        name, eq, value = h.partition("=")
        if not name:
            raise click.UsageError(f"--header {h!r}: give NAME=VALUE, or NAME for any value")
        hs.append((_bytes(name), _bytes(value) if eq else None))
        given.append(f"--header {h!r}")
    f.headers = tuple(hs)
    f.given = tuple(given)
    return f
