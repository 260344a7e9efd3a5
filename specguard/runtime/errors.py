"""Errors the reference runtime reports to its user as one clear line."""

from __future__ import annotations


class RuntimeInputError(Exception):
    """Bad user input (flags, checkpoint, request): reported without a traceback."""


class CheckpointError(RuntimeInputError):
    """A checkpoint directory is missing, partial or of an unsupported architecture."""


class RequestError(RuntimeInputError):
    """A request the server refuses (HTTP 400); the server keeps serving."""


class SchedulerExited(RuntimeError):
    """The scheduler process ended (crashed, or was killed) while the server still needed it."""
