"""Read a text file the user named, bounded: the one way specguard reads untrusted text files.

A path on the command line can name anything: ``/dev/zero`` (endless), a FIFO (``open`` waits
for a writer forever), a directory, a 10 GB log. Each is refused before it costs time or memory:

- the file is opened without blocking (``O_NONBLOCK``: a FIFO's ``open`` returns at once) and
  refused unless ``fstat`` of what was opened says it is a regular file, so nothing can be
  swapped in between the check and the read;
- at most ``limit + 1`` bytes are read, whatever the size the file claims (``/proc`` files
  claim 0), and more than ``limit`` is an error;
- the bytes must be UTF-8.

Every refusal is an ``InputError``: one line naming the file (as the caller labels it, e.g.
``--requirements reqs.txt``), the limit where one applies, and what to do next.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from specguard.errors import InputError

MAX_TEXT_BYTES = 1024 * 1024


class TooLargeError(InputError):
    """The file holds more than the caller's limit (a caller that sums several files says so)."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words for a message."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def refuse_unless_regular(path: Path, label: str, *, hint: str) -> None:
    """Refuse ``path`` if it exists and is not a regular file (symlinks followed), without
    opening it: for a path about to be read by someone else or compared before a write."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise InputError(f"{label}: cannot read it ({error.strerror or error.__class__.__name__})", hint=hint) from None
    if not stat.S_ISREG(mode):
        raise InputError(f"{label} is {file_kind(mode)}, not a file", hint=hint)


def open_regular(path: Path | str, label: str, *, noun: str = "a file", hint: str) -> int:
    """A descriptor of ``path``, refused unless it is a regular file. Opened without blocking and
    checked on the opened file, so a FIFO cannot hang the open and nothing is swapped in between;
    then set blocking (a regular file never blocks). An OSError of the open is the caller's to word."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{label} is {file_kind(mode)}, not {noun}", hint=hint)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_bytes_bounded(path: Path, label: str, *, limit: int = MAX_TEXT_BYTES, hint: str) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them."""
    try:
        descriptor = open_regular(path, label, hint=hint)
    except FileNotFoundError:
        raise InputError(f"{label}: no such file", hint=hint) from None
    except IsADirectoryError:
        raise InputError(f"{label} is a directory, not a file", hint=hint) from None
    except OSError as error:
        raise InputError(f"{label}: cannot read it ({error.strerror or error.__class__.__name__})", hint=hint) from None
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(limit + 1 - size, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise InputError(f"{label}: cannot read it ({error.strerror or error.__class__.__name__})", hint=hint) from None
    finally:
        os.close(descriptor)
    if size > limit:
        raise TooLargeError(f"{label} is larger than {_size(limit)}, the most specguard reads", hint=hint)
    return b"".join(chunks)


def read_text_bounded(path: Path, label: str, *, limit: int = MAX_TEXT_BYTES, hint: str) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` bytes of it."""
    return decode_utf8(read_bytes_bounded(path, label, limit=limit, hint=hint), label, hint=hint)


def read_stream_bounded(stream, label: str, *, limit: int = MAX_TEXT_BYTES, hint: str) -> str:
    """At most ``limit`` bytes of UTF-8 text from a binary stream (stdin's ``buffer``)."""
    try:
        data = stream.read(limit + 1)
    except OSError as error:
        raise InputError(f"{label}: cannot read it ({error.strerror or error.__class__.__name__})", hint=hint) from None
    if len(data) > limit:
        raise TooLargeError(f"{label} is larger than {_size(limit)}, the most specguard reads", hint=hint)
    return decode_utf8(data, label, hint=hint)


def decode_utf8(data: bytes, label: str, *, hint: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{label} is not UTF-8 text (byte {error.start})", hint=hint) from None


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit // 1024} KiB"
