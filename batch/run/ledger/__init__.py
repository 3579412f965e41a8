"""The run ledger: every run, every file and every record result, in a SQLite file (the default) or
a PostgreSQL database shared by several machines (`backends`).

It answers "what did we run in March and what came out", lets a run skip a file whose SHA-256
was already processed successfully, keeps the per-record results that the run report's `Changes`
sheet compares month over month, and keeps the portfolio: the records whose limits run across
workbooks, runs and months, and the BEIP, BRRAP and Grow NJ records that Grow NJ checks for prior
incentives (C.34:1B-247 e.).

- `schema`: the numbered migrations, the same on both databases;
- `book`: the `Ledger`, what a run writes (and `history` lists);
- `reads`: what a run reads (only runs that ended before it started);
- `network`: a SQLite ledger is never kept on a network filesystem;
- `copy`: a team's ledger moved from one database to the other (`njcredits ledger copy`).
`history` opens the ledger read-only (`Ledger.for_reading`): it never migrates, and reads an older
ledger as it is.
"""

from importlib import import_module

# what each part gives, imported when first asked for (`from batch.run.ledger import Ledger`): the
# settings read a ledger's address without importing pandas and the rest
_PARTS = {
    "backends": ["LedgerServerMissing", "LedgerURL", "location", "on_server", "server_errors", "shown", "there"],
    "book": ["Ledger", "LedgerEmpty", "RecordRows", "record_rows"],
    "network": ["NETWORK_FILESYSTEMS", "LedgerOnNetwork", "mounts", "network_filesystem", "refuse_network_ledger"],
    "reads": [
        "ENDED_BEFORE", "LedgerUnreadable", "portfolio_holds", "read_decisions", "read_earlier_names", "read_entries",
        "read_portfolio", "read_prior_records", "read_returned", "read_standing", "read_versions",
    ],
    "schema": ["BASE_SCHEMA", "DECISION_FIELDS", "MIGRATIONS", "RECORD_FIELDS", "SCHEMA_VERSION", "migrate", "schema_version",
               "version_by_tables"],
}  # fmt: skip
_WHERE = {name: part for part, names in _PARTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
