"""The `--history` file of `ask`: earlier turns, read for follow-ups and appended to.

The path comes from a user, so the file is handled as if someone else chose it:

- only a history file is ever read or replaced: a JSON list of turns, each an object with a
  `question`. Anything else (another program's file, a typo naming a source) is refused, never
  overwritten; so are symbolic links (checked with lstat and opened with O_NOFOLLOW, so that a
  link swapped in between is refused too), directories, FIFOs, sockets and devices, each with
  one line that says what the path is. A FIFO is never opened, and the open does not block;
- its size is bounded (MAX_BYTES) when read and when written, and it keeps the last MAX_TURNS
  turns;
- a turn is appended under an exclusive lock on a lock file beside it (`.<name>.lock`), by
  reading the file again under the lock, writing a temporary file in the same folder and
  renaming it over the old one, so concurrent asks keep every turn and a reader never sees a
  half-written file. An ask waits at most LOCK_SECONDS for the lock, then says so;
- the file is written readable by its owner only (0600): questions can be confidential.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import tempfile
import time
from pathlib import Path
from typing import Any

from lexkb.limits import QueryError

MAX_TURNS = 50
MAX_BYTES = 2_000_000
LOCK_SECONDS = 10.0  # how long an ask waits for another to finish writing the same history
_MODE = 0o600


class HistoryError(QueryError):
    """A `--history` path lexkb will not read or write; the message says why."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (name the file itself)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _raw(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no file yet."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise HistoryError(f"history {path} cannot be read: {error.strerror}") from error
    if not stat.S_ISREG(found.st_mode):
        raise HistoryError(f"history {path} is {_kind(found.st_mode)}; refusing to use it")
    if found.st_size > MAX_BYTES:
        raise HistoryError(
            f"history {path} has {found.st_size:,} bytes; a history file holds at most "
            f"{MAX_BYTES:,}: start a new one"
        )
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            message = f"history {path} is {_kind(stat.S_IFLNK)}; refusing to use it"
            raise HistoryError(message) from error
        raise HistoryError(f"history {path} cannot be read: {error.strerror}") from error
    with os.fdopen(fd, "rb") as file:
        opened = os.fstat(file.fileno())
        # Swapped for something else between lstat and open.
        if not stat.S_ISREG(opened.st_mode):
            raise HistoryError(f"history {path} is {_kind(opened.st_mode)}; refusing to use it")
        raw = file.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise HistoryError(f"history {path} grew past {MAX_BYTES:,} bytes; start a new one")
    return raw


def _turns(path: Path, raw: bytes) -> list[dict[str, Any]]:
    """The turns of a history file's bytes; an empty file has none."""
    if not raw.strip():
        return []
    not_history = f"history {path} is not a lexkb history file"
    try:
        turns = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise HistoryError(f"{not_history} (not UTF-8 JSON); refusing to overwrite it") from error
    if not isinstance(turns, list) or not all(
        isinstance(t, dict) and isinstance(t.get("question"), str) for t in turns
    ):
        raise HistoryError(
            f"{not_history} (not a list of turns with a question each); refusing to overwrite it"
        )
    return turns


def read_history(path: Path | None) -> list[dict[str, Any]]:
    """The earlier turns in `path`: none when it is None or there is no file yet. Raises
    HistoryError for anything that is not a history file."""
    if path is None:
        return []
    raw = _raw(path)
    return [] if raw is None else _turns(path, raw)


def _encoded(turns: list[dict[str, Any]]) -> bytes:
    """The last MAX_TURNS turns, fewer when that is what fits MAX_BYTES."""
    turns = turns[-MAX_TURNS:]
    while True:
        raw = json.dumps(turns, indent=1, ensure_ascii=False).encode("utf-8")
        if len(raw) <= MAX_BYTES or len(turns) <= 1:
            return raw
        turns = turns[1:]


def _lock(path: Path) -> int:
    """An open lock file beside `path`, held exclusively."""
    lock = path.with_name(f".{path.name}.lock")
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(lock, flags, _MODE)
    except OSError as error:
        raise HistoryError(f"history lock {lock} cannot be opened: {error.strerror}") from error
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise HistoryError(f"history lock {lock} is not a regular file; refusing to use it")
    deadline = time.monotonic() + LOCK_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise HistoryError(
                    f"history {path} has been locked by another ask for over {LOCK_SECONDS:g} s"
                ) from None
            time.sleep(0.02)


def append_turn(path: Path, turn: dict[str, Any]) -> None:
    """Add `turn` to the history in `path`, keeping the turns other asks added meanwhile."""
    fd = _lock(path)
    try:
        raw = _raw(path)
        turns = [] if raw is None else _turns(path, raw)
        _replace(path, _encoded([*turns, turn]))
    finally:
        os.close(fd)  # releases the lock


def _replace(path: Path, encoded: bytes) -> None:
    """Write a temporary file beside `path` (mkstemp makes it 0600) and rename it over `path`."""
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(handle, "wb") as file:
            file.write(encoded)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        raise HistoryError(f"history {path} cannot be written: {error.strerror}") from error
