"""Where the ledger lives: a SQLite file (the default, beside the outbox) or a PostgreSQL database
(`ledger = "postgresql://user@host:port/db"`, for teams on several machines sharing one portfolio).

The ledger's code speaks to either through one small connection, `Db`. Its SQL is written once,
in what both databases understand:
- `?` placeholders (PostgreSQL's driver is given `%s`; ledger SQL holds no literal `%` and no `?`
  but its placeholders);
- `a CROSS JOIN b ON ...`: SQLite's way to have `a` read first; PostgreSQL's planner is given a
  plain JOIN and chooses;
- `rowid`: SQLite's own row number; in PostgreSQL a `rowid BIGSERIAL` column of the tables that are
  read in the order their rows were written (files, records, decisions), made by the migrations;
- `IS NOT DISTINCT FROM` for an equality where NULL equals NULL (SQLite 3.39 and later);
- a list of wanted keys (`Db.wanted`): a temporary table in SQLite, arrays in PostgreSQL (whose
  read-only connections may not make tables);
- the database's clock (`Db.now`): "ended before this run started" is decided by it, never by a
  machine's;
- a write transaction (`Db.writing`) holds the ledger's write lock: SQLite's own (BEGIN IMMEDIATE),
  in PostgreSQL a transaction-scoped advisory lock, so that writers queue in both as they always did.

A PostgreSQL URL keeps its password only where the driver needs it: `LedgerURL` prints, and is
recorded, without it (`LedgerURL.shown`). The password comes from the URL, `PGPASSWORD` or
`~/.pgpass`, as libpq reads them.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote

SCHEMES = ("postgresql://", "postgres://")
LEDGER_LOCK = 7_355_608_351_001  # the advisory lock every write transaction of a PostgreSQL ledger holds
WRITE_WAIT = 60  # seconds a write waits for another's, as SQLite's busy timeout


class LedgerURL:
    """A PostgreSQL ledger's address. `str()` is the URL without its password (`shown`), so that
    printing it, a message, a log or the ledger never holds the password; `url` is given only to the
    driver."""

    __slots__ = ("url",)

    def __init__(self, url: str):
        self.url = url

    @property
    def shown(self) -> str:
        return without_password(self.url)

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"LedgerURL({self.shown!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, LedgerURL) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    def __reduce__(self):  # a worker is given the whole address (pickled, never on a command line)
        return (LedgerURL, (self.url,))


def without_password(url: str) -> str:
    """The URL with no password: neither in its user part (`user:secret@`, where the password may
    hold an unencoded `?` or `#`, as libpq reads it) nor as a `password=` parameter (its name
    percent-encoded or not). Only those parts are cut; the rest stays as written (a word equal to
    the password elsewhere, a user or a database named like it, stays)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    slash = rest.find("/")
    authority = rest if slash < 0 else rest[:slash]
    at = authority.rfind("@")
    if at >= 0:
        rest = authority[:at].split(":", 1)[0] + rest[at:]
    head, mark, query = rest.partition("?")
    if mark:
        kept = [p for p in query.split("&") if unquote(p.split("=", 1)[0]).strip().lower() != "password"]
        head += "?" + "&".join(kept) if kept else ""
    return f"{scheme}://{head}"


def _secrets(url: str) -> list[str]:
    """The password of `url` as it may be quoted in a driver's message: as written and decoded."""
    found = []
    rest = url.partition("://")[2]
    slash = rest.find("/")
    authority = rest if slash < 0 else rest[:slash]
    if "@" in authority and ":" in authority[: authority.rfind("@")]:
        found.append(authority[: authority.rfind("@")].split(":", 1)[1])
    for part in rest.partition("?")[2].split("&"):
        key, _, value = part.partition("=")
        if unquote(key).strip().lower() == "password":
            found.append(value)
    return [w for s in found if s for w in {s, unquote(s)}]


def scrubbed(err: Exception, where) -> str:
    """A database driver's message about `where`, on one line, with the URL shown without its
    password: a driver that cannot parse a URL quotes it whole."""
    text = " ".join(str(err).split())
    if isinstance(where, LedgerURL):
        text = text.replace(where.url, where.shown)
        for secret in sorted(_secrets(where.url), key=len, reverse=True):
            text = text.replace(secret, "*****")
    return text


def location(value) -> Path | LedgerURL:
    """The ledger a setting or flag names: a PostgreSQL URL (its scheme written in lower case, as
    libpq reads it), else a SQLite file's path."""
    if isinstance(value, LedgerURL | Path):
        return value
    text = str(value)
    for scheme in SCHEMES:
        if text.lower().startswith(scheme):
            return LedgerURL(scheme + text[len(scheme) :])
    return Path(text)


def on_server(where) -> bool:
    return isinstance(where, LedgerURL)


def there(where) -> bool:
    """Whether there is a ledger to read at `where`: a SQLite file that exists; a PostgreSQL database
    always (a server that cannot be reached says so when it is read)."""
    return where is not None and (on_server(where) or Path(where).exists())


class Db:
    """One connection to the ledger, in autocommit: each statement stands alone unless run inside
    `writing()`."""

    def __init__(self, raw, kind: str):
        self.raw, self.kind = raw, kind

    def _params(self, params) -> tuple:
        return tuple(_storable(v) for v in params) if self.kind == "postgresql" else tuple(params)

    def _sql(self, sql: str) -> str:
        if self.kind != "postgresql":
            return sql
        return sql.replace("?", "%s").replace("CROSS JOIN", "JOIN")

    def execute(self, sql: str, params=()):
        if self.kind == "postgresql":
            return self.raw.execute(self._sql(sql), self._params(params) or None)
        return self.raw.execute(sql, params)

    def executemany(self, sql: str, rows) -> None:
        if self.kind == "postgresql":
            with self.raw.cursor() as cur:
                cur.executemany(self._sql(sql), [self._params(r) for r in rows])
        else:
            self.raw.executemany(sql, rows)

    def insert_many(self, table: str, columns: list[str], rows) -> None:
        """Insert `rows` (tuples in the order of `columns`): PostgreSQL's COPY, SQLite's executemany."""
        if self.kind == "postgresql":
            with self.raw.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(self._params(row))
            return
        self.raw.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)

    def one(self, sql: str, params=()):
        return self.execute(sql, params).fetchone()

    def frame(self, sql: str, params=()):
        """The query's rows as a frame, its columns named as the query names them (as pandas'
        read_sql_query makes it, for both databases)."""
        import pandas as pd

        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()  # SQLite gives a blob as bytes; PostgreSQL's driver may give a memoryview
        if self.kind == "postgresql":
            rows = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows]
        return pd.DataFrame.from_records(rows, columns=names, coerce_float=True)

    def insert(self, table: str, columns: list[str], values) -> int:
        """Insert one row; returns its rowid."""
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) RETURNING rowid"
        return self.one(sql, values)[0]

    def tables(self) -> set[str]:
        if self.kind == "postgresql":
            query = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        else:
            query = "SELECT name FROM sqlite_master WHERE type='table'"
        return {name for (name,) in self.execute(query).fetchall()}

    def columns(self, table: str) -> list[str]:
        """The table's columns in order (PostgreSQL's `rowid`, SQLite's hidden one, left out); none
        when there is no such table."""
        if self.kind == "postgresql":
            query = (
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?"
                " AND column_name != 'rowid' ORDER BY ordinal_position"
            )
            return [name for (name,) in self.execute(query, (table,)).fetchall()]
        return [row[1] for row in self.raw.execute(f"PRAGMA table_info({table})").fetchall()]

    def user_version(self) -> int:
        """The last migration recorded: SQLite's `user_version`; in PostgreSQL the `ledger_schema` table's."""
        if self.kind == "postgresql":
            if "ledger_schema" not in self.tables():
                return 0
            found = self.one("SELECT version FROM ledger_schema")
            return int(found[0]) if found else 0
        return self.raw.execute("PRAGMA user_version").fetchone()[0]

    def set_user_version(self, number: int) -> None:
        if self.kind == "postgresql":
            self.execute("CREATE TABLE IF NOT EXISTS ledger_schema (version INTEGER NOT NULL)")
            self.execute("DELETE FROM ledger_schema")
            self.execute("INSERT INTO ledger_schema (version) VALUES (?)", (int(number),))
        else:
            self.raw.execute(f"PRAGMA user_version = {int(number)}")

    def now(self) -> str:
        """The database's clock, ISO 8601 in UTC to the microsecond (`2026-12-02T17:52:55.123456+00:00`):
        the server's for PostgreSQL, this machine's for a SQLite file (which only this machine writes)."""
        if self.kind == "postgresql":
            return self.one("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')")[0]
        return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")

    @contextmanager
    def writing(self):
        """One write transaction, holding the ledger's write lock: committed when the block ends,
        rolled back when it raises."""
        if self.kind == "postgresql":
            with self.raw.transaction():
                self.raw.execute(f"SET LOCAL lock_timeout = '{int(WRITE_WAIT * 1000)}ms'")  # as SQLite's busy timeout
                self.execute("SELECT pg_advisory_xact_lock(?)", (LEDGER_LOCK,))
                yield self
            return
        self.raw.execute("BEGIN IMMEDIATE")
        try:
            yield self
            self.raw.execute("COMMIT")
        except BaseException:
            if self.raw.in_transaction:  # a COMMIT that failed (a full disk) leaves it open: never to the next block
                self.raw.execute("ROLLBACK")
            raise

    @contextmanager
    def snapshot(self):
        """Reads that see one moment of the ledger, whatever runs write meanwhile: a read transaction
        (in PostgreSQL REPEATABLE READ; in SQLite, WAL mode, a deferred one)."""
        if self.kind == "postgresql":
            with self.raw.transaction():
                self.raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                yield self
            return
        self.raw.execute("BEGIN")
        try:
            yield self
        finally:
            self.raw.execute("ROLLBACK")

    @contextmanager
    def wanted(self, columns: list[str], rows: list[tuple]):
        """The text rows `rows` as a table `wanted` (`columns`) that the block's queries join, and the
        SQL to put first in their WITH clause with its parameters: a temporary table in SQLite (nothing
        to put), arrays unnested in PostgreSQL."""
        if self.kind == "postgresql":
            arrays = [list(c) for c in zip(*map(self._params, rows), strict=True)] if rows else [[] for _ in columns]
            unnest = ", ".join("?::text[]" for _ in columns)
            yield f"wanted AS (SELECT * FROM unnest({unnest}) AS w({', '.join(columns)})),", tuple(arrays)
            return
        self.raw.execute(f"CREATE TEMP TABLE wanted ({', '.join(c + ' TEXT' for c in columns)})")
        try:
            self.raw.executemany(f"INSERT INTO wanted VALUES ({','.join('?' * len(columns))})", rows)
            yield "", ()
        finally:
            self.raw.execute("DROP TABLE temp.wanted")


# -- SQLite ---------------------------------------------------------------------------------------


def _storable(value):
    """A value as PostgreSQL can hold it: text cannot hold a NUL character (SQLite's can), so a NUL
    is kept as U+FFFD, the replacement character, in what is written and in what is looked for."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _sqlite_read_only(path: Path) -> sqlite3.Connection:
    """Open a SQLite ledger for reading only. One in WAL mode on a read-only folder cannot make its
    shared-memory file; it is then opened as immutable (no writer can be running there). Text that
    is not UTF-8 is read with escapes, never refused."""
    uri = Path(path).resolve().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60, isolation_level=None)
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.OperationalError:
        db = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)
    db.text_factory = lambda raw: raw.decode("utf-8", "backslashreplace")
    db.execute("PRAGMA temp_store=MEMORY")  # the wanted keys (`Db.wanted`) never go to a temporary file
    return db


def _sqlite_wal(db: sqlite3.Connection, seconds: float = 60) -> None:
    """Switch to WAL; a new ledger opened by two processes at once may be busy for a moment."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# -- PostgreSQL -----------------------------------------------------------------------------------

_CONNECTIONS: dict[tuple, tuple] = {}  # (process, thread, read-only): (URL, connection, when last taken)
IDLE_CHECK = 5.0  # seconds a kept connection may sit idle before it is tried before use
_INHERITED: list = []  # a forked child's copies of its parent's connections: kept, never closed (closing would end the parent's)


def _forget_after_fork() -> None:
    _INHERITED.extend(raw for _url, raw, _used in _CONNECTIONS.values())
    _CONNECTIONS.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def _psycopg():
    try:
        import psycopg
    except ImportError as err:  # the optional extra is not installed
        raise LedgerServerMissing(
            "A PostgreSQL ledger needs the driver psycopg: install njcredits with its postgres extra (pip install 'njcredits[postgres]')."
        ) from err
    return psycopg


class LedgerServerMissing(Exception):
    """A PostgreSQL ledger is named but its driver is not installed."""


def server_errors() -> tuple[type[Exception], ...]:
    """The exceptions a ledger's database raises: SQLite's, and PostgreSQL's when its driver is installed."""
    try:
        import psycopg
    except ImportError:
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)


def _server(where: LedgerURL, read_only: bool) -> Db:
    """A connection to the PostgreSQL ledger, kept for this process and thread (a run asks the
    ledger dozens of times; a new connection costs milliseconds): one for reading and one for
    writing, to the last ledger asked for (another ledger's is closed). One left broken or in a
    transaction is replaced, and one idle for a while (`watch` between runs) is tried first: the
    server may have been restarted, or the network cut, meanwhile."""
    psycopg = _psycopg()
    key = (os.getpid(), threading.get_ident(), read_only)
    url, raw, used = _CONNECTIONS.get(key, (None, None, 0.0))
    if raw is not None and (
        url != where.url
        or raw.closed
        or raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
        or (time.monotonic() - used > IDLE_CHECK and not _alive(raw))
    ):
        _CONNECTIONS.pop(key, None)
        try:
            raw.close()
        except psycopg.Error:
            pass
        raw = None
    if raw is None:
        raw = _open(where)
        if read_only:
            raw.execute("SET default_transaction_read_only = on")
    _CONNECTIONS[key] = (where.url, raw, time.monotonic())
    return Db(raw, "postgresql")


def _open(where: LedgerURL, application: str = "njcredits"):
    """A new connection to the ledger's database, in autocommit, kept alive (TCP keepalives; no idle
    timeout ends it while a run holds it between files). A driver's error is raised with the URL
    shown without its password; a database whose text is not UTF-8 is refused (the ledger keeps
    names as they were written, in any script)."""
    psycopg = _psycopg()
    try:
        raw = psycopg.connect(where.url, autocommit=True, application_name=application, keepalives=1, keepalives_idle=60)
    except psycopg.Error as err:
        raise psycopg.OperationalError(scrubbed(err, where)) from None
    except ValueError as err:  # a URL the driver cannot parse at all
        raise psycopg.OperationalError(scrubbed(err, where)) from None
    try:
        raw.execute("SET idle_session_timeout = 0")
    except psycopg.Error:  # a server before PostgreSQL 14 has no such timeout
        pass
    (encoding,) = raw.execute("SHOW server_encoding").fetchone()
    encoding = encoding.decode("ascii", "replace") if isinstance(encoding, bytes) else encoding  # SQL_ASCII's text is bytes
    if encoding.upper().replace("-", "") != "UTF8":
        raw.close()
        raise psycopg.OperationalError(
            f"the database of {where.shown} keeps its text as {encoding}, not UTF-8: the ledger keeps names as written, in any "
            "script; create its database with ENCODING 'UTF8'"
        )
    return raw


def _alive(raw) -> bool:
    try:
        raw.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure: the connection is replaced
        return False


def close_connections() -> None:
    """Close this process's kept connections (a command's end; tests between ledgers)."""
    for key, (_url, raw, _used) in list(_CONNECTIONS.items()):
        if key[0] == os.getpid():
            _CONNECTIONS.pop(key, None)
            raw.close()


@contextmanager
def connect(where, read_only: bool = False):
    """The ledger at `where` (a path or a LedgerURL) for the block. A SQLite file is opened for the
    block and closed after it (read-only: `mode=ro`, never created); a PostgreSQL connection is kept
    for the process."""
    if on_server(where):
        db = _server(where, read_only)
        try:
            yield db
        except BaseException:
            if db.raw.broken:
                _CONNECTIONS.pop((os.getpid(), threading.get_ident(), read_only), None)
            raise
        return
    raw = _sqlite_read_only(where) if read_only else sqlite3.connect(where, timeout=60, isolation_level=None)
    try:
        if not read_only:
            raw.execute("PRAGMA journal_mode=WAL")
        yield Db(raw, "sqlite")
    finally:
        raw.close()


def lock_key(text: str) -> int:
    """A 64-bit advisory-lock key for `text` (the same on every machine)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()[:8], "big", signed=True)


class ServerLock:
    """A session advisory lock in a PostgreSQL ledger, held until `release()` or until the process
    ends however it ends (the server ends the session of a killed process): the inbox lock across
    machines, beside the lock file each machine keeps."""

    def __init__(self, where: LedgerURL, key: int):
        self.where, self.key, self.raw = where, key, None

    def take(self, wait: bool) -> bool:
        self.raw = _open(self.where, "njcredits lock")
        while not self.raw.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()[0]:
            if not wait:
                self.raw.close()
                self.raw = None
                return False
            time.sleep(0.5)  # asked again, not waited for in the server: a stop signal still stops the wait
        return True

    def holding(self) -> bool:
        """Whether the lock is still held: its session may have been ended (the server restarted, the
        network cut) while the run went on."""
        if self.raw is None or self.raw.closed:
            return False
        try:
            row = self.raw.execute(
                "SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND granted"
                " AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1",
                ((self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF),
            ).fetchone()
        except Exception:  # noqa: BLE001 - a session that cannot answer holds nothing
            return False
        return row is not None

    def holder(self) -> str:
        """Who holds the lock, as the server knows them: the client's address and since when."""
        psycopg = _psycopg()
        try:
            with _open(self.where, "njcredits lock holder") as raw:
                row = raw.execute(
                    "SELECT a.client_addr::text, a.client_hostname, a.backend_start AT TIME ZONE 'UTC' FROM pg_locks l"
                    " JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted"
                    " AND l.classid::bigint = %s AND l.objid::bigint = %s AND l.objsubid = 1 LIMIT 1",
                    ((self.key >> 32) & 0xFFFFFFFF, self.key & 0xFFFFFFFF),
                ).fetchone()
        except psycopg.Error:
            return ""
        if not row:
            return ""
        host = row[1] or row[0] or "this server's own socket"
        return f"a session from {host}, connected {row[2]:%Y-%m-%d %H:%M} UTC" if row[2] else f"a session from {host}"

    def release(self) -> None:
        """Release the lock, then end its session. Ending the session alone releases it too, but the
        server does so as the session's process ends, after the client has gone on: a run started
        right after could still find it held."""
        if self.raw is not None:
            try:
                try:
                    self.raw.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
                except Exception:  # noqa: BLE001, S110 - a session that cannot answer: its end releases the lock
                    pass
                self.raw.close()
            finally:
                self.raw = None


def shown(where) -> str:
    """The ledger as people see it: its path, or its URL without a password."""
    return str(where)
