"""Errors for callers' mistakes and unreadable inputs (bad *bytes* never raise: they become Problems)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2  # also: an input that cannot be read
EXIT_INTERNAL = 3  # a bug in wireinspect (an unexpected exception); the traceback with --debug
EXIT_INTERRUPTED = 130  # SIGINT (Ctrl-C): 128 + 2, as a shell reports a command killed by it
EXIT_PIPE = 141  # dump's output was closed before the end (| head): 128 + SIGPIPE, as for cat
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15


class InputError(Exception):
    """An input cannot be read at all (missing, unreadable, a directory with nothing to read).

    The CLI prints the message and exits with status 2.
    """


class EncodeError(Exception):
    """A JSON document given to ``encode`` does not describe a valid structure."""
