"""Typed errors of the loggp command.

Every error the CLI can expect is a LoggpError; the CLI prints its message as one line on
stderr and exits with its exit_code, never with a traceback.
"""

from __future__ import annotations


class LoggpError(Exception):
    """An expected failure, reported to the user as one line."""

    exit_code = 1


class KnobError(LoggpError, ValueError):
    """A knob name or value the shim would refuse (same text as the C parser)."""

    exit_code = 2


class ShimNotFoundError(LoggpError):
    """A binary or library of the C build is missing."""


class ToolTimeoutError(LoggpError):
    """A subprocess did not finish in time; the message names which one."""

    exit_code = 124  # as timeout(1)


class ToolFailedError(LoggpError):
    """A subprocess exited non-zero or wrote output that cannot be read."""


class CommandNotFoundError(LoggpError):
    """The command to run does not exist or cannot be executed."""

    exit_code = 127  # as a shell


class UsageError(LoggpError):
    """The command line is incomplete in a way argparse cannot see."""

    exit_code = 2


def one_line(e: BaseException) -> str:
    """An exception's message with its whitespace folded: one line for an error message."""
    return " ".join(str(e).split()) or type(e).__name__
