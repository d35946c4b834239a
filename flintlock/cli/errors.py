"""The one error type the ``flintlock`` command reports to its user.

A ``CliError`` is printed as two lines — ``error: <what went wrong>`` and ``hint: <what to do
next>`` — and ends the command with a non-zero exit code, never with a traceback (unless
``--verbose``). Commands translate every failure they expect into one.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError

EXIT_FAILURE = 1
EXIT_USAGE = 2


class CliError(FlintlockError):
    """A failure of a command, with a hint for the user and the exit code to end with."""

    def __init__(self, message: str, hint: str = "", exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message, hint, exit_code)
        self.message = message
        self.hint = hint
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message
