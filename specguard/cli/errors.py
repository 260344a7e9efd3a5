"""One place that turns failures into one clear line and exit code 2 (tracebacks only with SPECGUARD_DEBUG=1)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from specguard.cli.parsing import UsageError
from specguard.errors import InputError
from specguard.report import error_json


def debug_enabled() -> bool:
    return os.environ.get("SPECGUARD_DEBUG", "") not in ("", "0")


@contextmanager
def clean_errors(json_output: Callable[[], bool | str] = lambda: False) -> Iterator[None]:
    try:
        yield
    except InputError as error:
        _fail(error.one_line(), json_output())
    except (UsageError, KeyboardInterrupt, SystemExit):  # usage errors: cli/main.py reports them
        raise
    except Exception as error:
        if debug_enabled():
            raise
        _fail(f"internal error ({error.__class__.__name__}): {error}; rerun with SPECGUARD_DEBUG=1 for the traceback", json_output())


def _fail(message: str, as_json: bool | str) -> None:
    print_error(message, as_json)
    raise SystemExit(2)


def print_error(message: str, as_json: bool | str, *, see: str | None = None) -> None:
    """An error as one line on stderr (``see``: the command whose --help to point at), or under
    ``as_json`` as a document on stdout: True for JSON, "sarif" for a SARIF log holding it.
    A secret the message quotes (``--api-key VALUE``, ``HF_TOKEN=...``, an ``hf_`` token) is masked."""
    from specguard.redact import redact_text

    message = redact_text(message)
    if as_json == "sarif":
        from specguard.report import error_sarif

        print(error_sarif(message))
    elif as_json:
        print(error_json(message))
    else:
        print(f"specguard: error: {message}" + (f" (see {see} --help)" if see else ""), file=sys.stderr)

