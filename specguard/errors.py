"""The one error type the CLI turns into a one-line message and exit code 2."""

from __future__ import annotations


class InputError(Exception):
    """Bad input: a flag, a file, a preset. ``hint`` says what to do next."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        return f"{self.message}: {self.hint}" if self.hint else self.message


def echoed(text: str, *, limit: int = 40) -> str:
    """Text the user gave, for a one-line message: a pasted 5000-digit number is not echoed whole."""
    return text if len(text) <= limit else f"{text[:30]}... ({len(text)} characters)"
