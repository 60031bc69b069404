"""The database under lexkb serve's store: SQLite (the file the operator names, else serve.db
beside the index root; WAL; a new one made 0600) or PostgreSQL (a URL), one connection under one lock, and the migrations that make and move its
schema forward (lexkb_service.serve.store holds what is kept in it).

One set of SQL serves both: statements are written with `?` placeholders and turned into
psycopg's `%s` for PostgreSQL; ids are random text and times are seconds since the epoch, so
neither database's own sequences or time types are needed. The schema is created and moved
forward by MIGRATIONS, each applied once, in order, inside a transaction, and recorded in
`schema_migrations`, so a store written by an older lexkb opens in a newer one.

A PostgreSQL server can restart under a running service (an upgrade, a failover, `pg_ctl
restart`), and psycopg's connection then stays closed for good: every keyed request failed with
"the connection is closed" until lexkb serve was restarted too. So the connection is made again
whenever it is found lost: a read (SELECT) that finds it lost is run once more on the new one;
a write is preceded by a ping (which reconnects), so that it never goes out on a connection
already lost, and is not repeated when the connection is lost under it (whether it was applied
is then unknown). While the server cannot be reached, StoreUnavailable says so (the API answers
503 with Retry-After) and the next request tries again. A store that cannot be opened at all
(a file that is no database, a URL psycopg refuses or a server that does not answer at start)
is a StoreError whose message says so in one line.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lexkb.core import environment

if TYPE_CHECKING:  # the optional dependency (lexkb[postgres]), imported when a URL is opened
    import psycopg

log = logging.getLogger("lexkb_service.serve")
# The default store's file name, beside the index root (store_beside).
STORE_NAME = "serve.db"
# The first bytes of every SQLite database file (https://sqlite.org/fileformat.html).
SQLITE_HEADER = b"SQLite format 3\x00"
# Seconds to wait for PostgreSQL to accept a connection: a server that does not answer fails a
# request after this long instead of holding the store's lock (and every request) longer.
CONNECT_TIMEOUT = 5
# A row as either database returns it: its columns' values, whatever types the statement read.
Row = tuple[Any, ...]

MIGRATIONS: tuple[str, ...] = (
    # 1: keys, conversations, answers (a conversation's turns, and the trace of every ask),
    # feedback on an answer.
    """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL UNIQUE,
        admin INTEGER NOT NULL DEFAULT 0,
        created_at DOUBLE PRECISION NOT NULL,
        revoked_at DOUBLE PRECISION
    );
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        title TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX conversations_owner ON conversations (owner, updated_at);
    CREATE TABLE answers (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        mode TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        source_count INTEGER NOT NULL,
        snapshot_version TEXT,
        trace TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX answers_conversation ON answers (conversation_id, created_at);
    CREATE INDEX answers_created ON answers (created_at);
    CREATE TABLE feedback (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        answer_id TEXT NOT NULL,
        rating TEXT NOT NULL,
        comment TEXT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        source_count INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX feedback_created ON feedback (created_at);
    """,
    # 2: one feedback per answer per key (the newest kept; changed in place from here on, with
    # the time of its change), and what each ask searched, the candidates it retrieved with
    # their scores, and how long it took (the admin's traces).
    """
    ALTER TABLE feedback ADD COLUMN updated_at DOUBLE PRECISION;
    UPDATE feedback SET updated_at = created_at;
    DELETE FROM feedback WHERE EXISTS (
        SELECT 1 FROM feedback newer WHERE newer.owner = feedback.owner
        AND newer.answer_id = feedback.answer_id
        AND (newer.created_at > feedback.created_at
             OR (newer.created_at = feedback.created_at AND newer.id > feedback.id))
    );
    CREATE UNIQUE INDEX feedback_one_per_answer ON feedback (owner, answer_id);
    CREATE INDEX feedback_updated ON feedback (updated_at);
    ALTER TABLE answers ADD COLUMN searched TEXT;
    ALTER TABLE answers ADD COLUMN candidates TEXT;
    ALTER TABLE answers ADD COLUMN seconds DOUBLE PRECISION;
    """,
)


class StoreError(ValueError):
    """A store lexkb will not open, or a request it refuses; the message says why."""


class StoreUnavailable(StoreError):
    """The database cannot be reached now (PostgreSQL restarting, or down): worth retrying,
    unlike other StoreErrors. The message names no host or port: it goes to key holders."""

    def __init__(self, message: str = "the store does not answer now; try again shortly") -> None:
        super().__init__(message)


def is_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def store_beside(index_root: str | Path) -> Path:
    """The SQLite store of `index_root` when none is named: serve.db in the folder that holds
    the root (var/serve.db for var/index), outside the root and never in the working directory
    unless the root lies there. An s3:// root has no such folder: StoreError."""
    if str(index_root).startswith("s3://"):
        raise StoreError(
            f"the index root {index_root} has no folder beside it for the store: name the store "
            f"with --store or ${environment.SERVE_STORE}"
        )
    return Path(index_root).expanduser().absolute().parent / STORE_NAME


def sqlite_path(target: str | Path, index_root: str | Path | None = None) -> Path:
    """The SQLite file for `target`, refused inside the index root (snapshots stay read-only)
    and when it is not a regular file."""
    path = Path(target).expanduser().absolute()
    if index_root is not None and not str(index_root).startswith("s3://"):
        root = Path(index_root).expanduser().resolve()
        if path.resolve() == root or root in path.resolve().parents:
            raise StoreError(
                f"the store {path} lies inside the index root {root}: name a file outside it "
                "(what users write never goes into the index)"
            )
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise StoreError(f"the store {path} is not a regular file")
    return path


class Database:
    """One connection to the store's database, under one lock; see the module's docstring.
    `create`: a SQLite file that does not exist is made (with its folders); otherwise its
    absence is a StoreError (a typo in a path must not leave an empty store behind)."""

    def __init__(
        self, target: str | Path, index_root: str | Path | None = None, create: bool = True
    ) -> None:
        self.postgres = is_url(str(target))
        self._lock = threading.RLock()
        if self.postgres:
            self._open_postgres(str(target))
            self.where = self.kind = "postgresql"
        else:
            path = sqlite_path(target, index_root)
            self._sqlite = _open_sqlite(path, create)
            self.where = str(path)
            self.kind = "sqlite"
        self.migrate()

    def _open_postgres(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as exc:  # the optional dependency (pip install lexkb[postgres])
            raise StoreError(
                "a PostgreSQL store needs psycopg: pip install 'lexkb[postgres]'"
            ) from exc
        self._url = url
        # psycopg's error for a lost or refused connection, kept so that the methods below catch
        # it without importing the optional module again.
        self._operational_error = psycopg.OperationalError
        self._depth = 0  # transactions open: no reconnecting in the middle of one
        self._pg: psycopg.Connection[Row] | None = None  # None while lost and not made again
        try:  # at start, what failed is the operator's to read: said in one line
            self._pg = _connect_postgres(url)
        except psycopg.Error as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreError(f"the PostgreSQL store cannot be opened: {reason}") from exc

    # -- plumbing -------------------------------------------------------------------------

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    def _rows(self, statement: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock:
            if not self.postgres:
                return self._run(self._sqlite, statement, params)
            if self._depth:  # inside a transaction: on the connection it began on, or fail
                return self._guarded(self._in_transaction(), statement, params)
            reading = statement.lstrip()[:6].upper() == "SELECT"
            if not reading:
                self._ping()  # a write never goes out on a connection already lost
            db = self._live()
            try:
                return self._run(db, statement, params)
            except self._operational_error as exc:
                if not reading or not self._lost(db):
                    raise self._unavailable(exc) from exc
                log.warning("store: the PostgreSQL connection was lost (%s); reconnecting", exc)
            return self._guarded(self._live(), statement, params)

    def _run(
        self,
        db: sqlite3.Connection | psycopg.Connection[Row],
        statement: str,
        params: Sequence[Any],
    ) -> list[Row]:
        cursor = db.execute(self._sql(statement), tuple(params))
        return list(cursor.fetchall()) if cursor.description else []

    def _guarded(
        self, db: psycopg.Connection[Row], statement: str, params: Sequence[Any]
    ) -> list[Row]:
        """`statement` on `db`, with a lost connection reported as StoreUnavailable."""
        try:
            return self._run(db, statement, params)
        except self._operational_error as exc:
            raise self._unavailable(exc) from exc

    def _in_transaction(self) -> psycopg.Connection[Row]:
        """The connection a transaction began on: made live by the ping that began it, and
        never made again in the middle of one (a lost one fails what is left of it)."""
        if self._pg is None:  # not after the ping that began it (it made one, or raised)
            raise StoreUnavailable()
        return self._pg

    def _live(self) -> psycopg.Connection[Row]:
        """The PostgreSQL connection, made again when there is none or it was lost."""
        if self._pg is not None and not self._lost(self._pg):
            return self._pg
        if self._pg is not None:
            self._pg.close()
            self._pg = None
        try:
            self._pg = _connect_postgres(self._url)
        except self._operational_error as exc:
            log.warning("store: PostgreSQL cannot be reached: %s", exc)
            raise StoreUnavailable() from exc
        return self._pg

    def _ping(self) -> None:
        """A round trip on the connection, made again when it is found lost: the health check
        before a write or a transaction, so that neither starts on a dead connection."""
        db = self._live()
        try:
            db.execute("SELECT 1")
        except self._operational_error as exc:
            if not self._lost(db):
                raise self._unavailable(exc) from exc
            log.warning("store: the PostgreSQL connection was lost (%s); reconnecting", exc)
            self._live()

    @staticmethod
    def _lost(db: psycopg.Connection[Row]) -> bool:
        return db.closed or db.broken

    def _unavailable(self, exc: Exception) -> Exception:
        """StoreUnavailable where the connection is lost (the server restarting or gone), else
        `exc` itself: a statement PostgreSQL refused is a fault here, not a reason to retry."""
        if self._pg is not None and self._lost(self._pg):
            log.warning("store: the PostgreSQL connection was lost: %s", exc)
            return StoreUnavailable()
        return exc

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock:
            if self.postgres:
                if not self._depth:
                    self._ping()
                self._depth += 1
                try:
                    with self._in_transaction().transaction():
                        yield
                except self._operational_error as exc:
                    raise self._unavailable(exc) from exc
                finally:
                    self._depth -= 1
                return
            self._sqlite.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._sqlite.execute("ROLLBACK")
                raise
            self._sqlite.execute("COMMIT")

    def migrate(self) -> int:
        """Apply the migrations not yet applied; the schema version after."""
        with self._transaction():
            self._rows(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {row[0] for row in self._rows("SELECT version FROM schema_migrations")}
            for version, script in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                for statement in filter(str.strip, script.split(";")):
                    self._rows(statement)
                self._rows(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (version, time.time()),
                )
        return len(MIGRATIONS)

    def schema_version(self) -> int:
        return int(self._rows("SELECT MAX(version) FROM schema_migrations")[0][0] or 0)

    def ping(self) -> bool:
        """Does the database answer? (/readyz)"""
        try:
            return bool(self._rows("SELECT 1")[0][0] == 1)
        except Exception:
            return False

    def close(self) -> None:
        with self._lock:
            if not self.postgres:
                self._sqlite.close()
            elif self._pg is not None:
                self._pg.close()


def _connect_postgres(url: str) -> psycopg.Connection[Row]:
    """A new connection to the PostgreSQL store at `url`, each statement its own transaction
    unless one is opened (Database._transaction)."""
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)


def _open_sqlite(path: Path, create: bool) -> sqlite3.Connection:
    """The SQLite file at `path`, in WAL mode: made 0600 when it is absent and `create`;
    StoreError when it is absent and not to be made, or is not a SQLite database (then it is
    left as it was). An existing database keeps the mode its operator gave it, with a warning
    when any user may read it."""
    if path.exists():
        _check_sqlite(path)
    elif not create:
        raise StoreError(
            f"no store at {path} (lexkb serve, or lexkb serve keys add, makes one there)"
        )
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
        os.chmod(path, 0o600)  # whatever the umask
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
    try:
        db.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise StoreError(f"the store {path} is not a SQLite database ({exc})") from exc
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _check_sqlite(path: Path) -> None:
    """StoreError when the file at `path` is not a SQLite database (an empty file is one, as
    SQLite reads it), read without changing it; a warning when other users may read it."""
    with path.open("rb") as opened:
        head = opened.read(len(SQLITE_HEADER))
    if head and head != SQLITE_HEADER:
        raise StoreError(f"the store {path} is not a SQLite database (its header is not SQLite's)")
    mode = path.stat().st_mode & 0o777
    if mode & 0o007:
        log.warning(
            "store: other users may read %s (mode %s): it holds key hashes and conversations; "
            "chmod 600 it",
            path,
            oct(mode)[2:].zfill(4),
        )
