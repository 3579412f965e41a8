"""`njcredits ledger copy --from SRC --to DEST`: a team's ledger moved from one database to the other
(a SQLite file into PostgreSQL when the team comes to share it, or back), with every run, file,
record, group key and decision, each row as it was (the rows read in the order they were written
keep their row numbers, so the order of a record's versions is the same after the copy).

The source is only read, as one moment of it (runs may go on writing to it meanwhile: what they
write after that moment is not copied). The destination must be empty: a ledger that holds runs is refused, never
merged into. It is given the source's schema version, the rows are copied in one transaction (a
copy that fails leaves the destination as empty as it was), and then it is migrated to this
njcredits's schema as any ledger is.
"""

from __future__ import annotations

import sqlite3

from batch.run.ledger.backends import connect, location, on_server, shown
from batch.run.ledger.schema import SCHEMA_VERSION, migrate, schema_version

TABLES = ["runs", "files", "records", "record_keys", "decisions"]  # in an order the references allow
NUMBERED = {"files", "records", "decisions"}  # read in the order their rows were written: rowid copied
CHUNK = 10_000


class CopyRefused(Exception):
    """The copy cannot be made (the destination holds runs, the source is no ledger or a newer one)."""


def copy_ledger(source, destination) -> dict[str, int]:
    """Copy the ledger `source` into the empty ledger `destination` (each a path or a URL); returns
    the rows copied per table."""
    source, destination = location(source), location(destination)
    if not on_server(source) and not source.is_file():
        raise CopyRefused(f"There is no ledger at {shown(source)}: give the ledger to copy with --from.")
    try:
        with connect(source, read_only=True) as probe:
            schema_version(probe)
    except sqlite3.DatabaseError as err:  # a file that is no SQLite database at all
        raise CopyRefused(f"{shown(source)} is not an njcredits ledger ({err}): nothing to copy.") from err
    with connect(source, read_only=True) as src, src.snapshot():  # one moment of the source, runs writing or not
        version = schema_version(src)
        if not version:
            raise CopyRefused(f"{shown(source)} is not an njcredits ledger (no runs table): nothing to copy.")
        if version > SCHEMA_VERSION:
            raise CopyRefused(
                f"The ledger {shown(source)} was written by a newer njcredits (schema {version}; this one knows {SCHEMA_VERSION}): "
                "copy it with that version."
            )
        if not on_server(destination):
            destination.parent.mkdir(parents=True, exist_ok=True)
        with connect(destination) as dest:
            if "runs" in dest.tables() and (held := dest.one("SELECT COUNT(*) FROM runs")[0]):
                raise CopyRefused(
                    f"The ledger {shown(destination)} already holds {held:,} run{'s' if held != 1 else ''}: a copy goes only into an "
                    "empty ledger (nothing was copied). Give --to a new file or an empty database."
                )
            if (made := schema_version(dest)) > version:  # its tables made by a later migration than the copy's rows know
                raise CopyRefused(
                    f"The ledger {shown(destination)} already has the tables of schema {made}, and the ledger to copy is of schema "
                    f"{version}: its rows would miss what the migrations between give them. Copy into a new file or an empty "
                    "database, or let a run of this njcredits migrate the source first."
                )
            migrate(dest, upto=version)
            counts = {}
            with dest.writing():
                for table in TABLES:
                    if table not in src.tables():
                        continue
                    columns = src.columns(table)
                    if table in NUMBERED:
                        columns = ["rowid", *columns]
                    cur = src.execute(f"SELECT {', '.join(columns)} FROM {table}" + (" ORDER BY rowid" if table in NUMBERED else ""))
                    counts[table] = 0
                    while rows := cur.fetchmany(CHUNK):
                        dest.insert_many(table, columns, [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows])
                        counts[table] += len(rows)
                    if table in NUMBERED and dest.kind == "postgresql":  # the next row written is numbered after the copied ones
                        dest.execute(
                            f"SELECT setval(pg_get_serial_sequence('{table}', 'rowid'), COALESCE((SELECT MAX(rowid) FROM {table}), 0) + 1,"
                            " false)"
                        )
            migrate(dest)
    return counts
