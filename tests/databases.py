"""The ledger's two databases in the tests: SQLite files, and a real PostgreSQL server.

The server is a throwaway one (`.ci/postgres start` makes it and prints NJC_POSTGRES_URL, its
superuser's URL). Each test worker has its own database (`postgres_database`), and each test that
asks for a PostgreSQL ledger its own schema in it (`postgres_ledger`): a fresh, empty ledger.
Without a server (or without psycopg) those tests are skipped, saying why; with
NJC_REQUIRE_POSTGRES=1 (set by .ci/run) they fail instead, so that CI never passes without them.

The ledger, portfolio, recovery and concurrency tests run on both (`backend`, parametrized): on
PostgreSQL, every ledger the test names by path (the default OUTBOX/.njcredits/ledger.sqlite, or
--ledger PATH) is a schema of its own, the same one each time the test names that path, for every
command the test runs in its own process. A command the test starts as a process is given the URL
(`ledger_flag`). The test reads the ledger through `ledger_query`, whichever database it is.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

import batch.run.config
import batch.run.ledger.book  # noqa: F401 - imported before `backend` patches `location`: each keeps the real one to go back to
from batch.run.ledger import backends

POSTGRES_URL = os.environ.get("NJC_POSTGRES_URL", "")
REQUIRE_POSTGRES = os.environ.get("NJC_REQUIRE_POSTGRES") == "1"
_SCHEMAS = itertools.count(1)
CURRENT: dict = {}  # the running test's map of ledger paths to PostgreSQL ledgers (empty: SQLite)


def postgres_missing() -> str:
    """Why the PostgreSQL tests cannot run here ("" when they can)."""
    if not POSTGRES_URL:
        return 'no PostgreSQL server: NJC_POSTGRES_URL is not set (eval "$(.ci/postgres start)" starts a throwaway one)'
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install -e '.[test,postgres]'"
    return ""


def with_database(url: str, name: str, options: str = "") -> str:
    """`url` naming database `name` (and libpq `options`, such as a search_path)."""
    parts = urlsplit(url)
    query = f"options={quote(options)}" if options else ""
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", query, ""))


@pytest.fixture(scope="session")
def postgres_database(worker_id):
    """This test worker's own database on the throwaway server (its URL, superuser and password in it)."""
    why = postgres_missing()
    if why:
        if REQUIRE_POSTGRES:
            pytest.fail(f"NJC_REQUIRE_POSTGRES=1 but {why}")
        pytest.skip(why)
    import psycopg

    name = f"njc_test_{worker_id}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    yield with_database(POSTGRES_URL, name)
    backends.close_connections()
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def new_schema(database: str) -> backends.LedgerURL:
    """A fresh, empty PostgreSQL ledger: a schema of its own in `database`, found first by its URL."""
    import psycopg

    name = f"ledger_{os.getpid()}_{next(_SCHEMAS)}"
    with psycopg.connect(database, autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{name}"')
    return backends.LedgerURL(with_database(database, urlsplit(database).path.lstrip("/"), f"-csearch_path={name}"))


@pytest.fixture
def postgres_ledger(postgres_database):
    yield new_schema(postgres_database)
    backends.close_connections()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, monkeypatch):
    """The ledger's database for this test: "sqlite", or "postgresql", where each ledger path the
    test names is a PostgreSQL ledger of its own (the settings, --ledger and `Ledger(path)` all see
    the same)."""
    CURRENT.clear()
    if request.param == "sqlite":
        yield "sqlite"
        return
    database = request.getfixturevalue("postgres_database")
    real = backends.location
    made: dict[str, backends.LedgerURL] = {}

    def location(value):
        where = real(value)
        if isinstance(where, Path):
            key = os.path.abspath(where)
            if key not in made:
                made[key] = new_schema(database)
            return made[key]
        return where

    for module in ("batch.run.ledger.backends", "batch.run.ledger.book", "batch.run.config"):
        monkeypatch.setattr(f"{module}.location", location)
    CURRENT["location"] = location
    yield "postgresql"
    backends.close_connections()
    CURRENT.clear()


def ledger_of(path) -> Path | backends.LedgerURL:
    """The ledger the test means by `path`: the SQLite file, or its PostgreSQL ledger."""
    return CURRENT["location"](path) if CURRENT else Path(path)


def ledger_flag(path) -> list[str]:
    """The --ledger a command started as a process is given for the ledger at `path` (none on
    SQLite, where the path is the command's own default or given by the test)."""
    return ["--ledger", ledger_of(path).url] if CURRENT else []


def ledger_query(path, sql: str, params=()) -> list[tuple]:
    """The rows of `sql` (SQLite's dialect, as the ledger's code writes it) in the ledger at `path`."""
    with backends.connect(ledger_of(path)) as db:
        return [tuple(row) for row in db.execute(sql, params).fetchall()]
