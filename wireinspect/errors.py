"""Errors for callers' mistakes and unreadable inputs (bad *bytes* never raise: they become Problems)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


class InputError(Exception):
    """An input cannot be read at all (missing, unreadable, a directory with nothing to read).

    The CLI prints the message and exits with status 2.
    """


class EncodeError(Exception):
    """A JSON document given to ``encode`` does not describe a valid structure."""
