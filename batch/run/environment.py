"""Whose fault: the machine's (a full, read-only or failing disk, a folder that cannot be written, a
worker that cannot start) or the file's. An environment failure never sends a file to failed/: the
file stays in the inbox, the message names the environment, and the run's exit status is 3."""

from __future__ import annotations

import errno
import os
import sqlite3

# errors that say something about the machine, not about a workbook
ENVIRONMENT_ERRNOS = {
    errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO, errno.EMFILE, errno.ENFILE, errno.ENOMEM
}  # fmt: skip
# errors no read of a file can give: whatever raised them was writing, so they are the environment's
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}


class EnvironmentStop(Exception):
    """The environment stopped this file (or the run): the message names the environment."""


class WriteFailed(Exception):
    """The environment stopped a write of the run (the error behind it in `error`)."""

    def __init__(self, error: OSError):
        super().__init__(str(error))
        self.error = error


def os_error(err: BaseException | None) -> OSError | None:
    """The OS error behind `err`: itself, or the one a library wrapped (xlsxwriter's FileCreateError
    keeps it in its arguments and as its cause), or None."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError):
            return err
        inner = next((a for a in getattr(err, "args", ()) if isinstance(a, OSError)), None)
        err = inner or err.__cause__ or err.__context__
    return None


def ledger_error(err: BaseException) -> bool:
    """An error of the ledger's database: SQLite's, or PostgreSQL's driver's (psycopg, imported only
    where a PostgreSQL ledger is used)."""
    return isinstance(err, sqlite3.Error) or type(err).__module__.split(".")[0] == "psycopg"


def environment_message(err: BaseException, where: str, stays: bool = True) -> str:
    """One sentence naming the environment (the folder, and the error with its name), never the workbook."""
    tail = "; the file stays in the inbox for the next run." if stays else "."
    if isinstance(err, sqlite3.Error):
        return f"the ledger cannot be written ({err}); check its disk" + tail
    if ledger_error(err):
        return f"the ledger's database server failed ({_one_line(err)}); check the server and the network to it" + tail
    oserr = os_error(err)
    code = oserr.errno if oserr is not None else None
    name = f", {errno.errorcode[code]}" if code in errno.errorcode else ""
    if code in (errno.ENOSPC, errno.EDQUOT):
        what = "no space left" if code == errno.ENOSPC else "the disk quota is used up"
        return f"{what} on the disk of {where} ({os.strerror(code)}{name}); free some space" + tail
    if code == errno.EROFS:
        return f"{where} is on a read-only filesystem ({os.strerror(code)}{name})" + tail
    if code in (errno.EACCES, errno.EPERM):
        return f"{where} cannot be written (permission denied{name})" + tail
    if code == errno.EFBIG:
        return f"{where} cannot take a file this large: the file-size limit was reached ({os.strerror(code)}{name})" + tail
    if code == errno.EIO:
        return f"the disk of {where} failed ({os.strerror(code)}{name}); check the disk" + tail
    return f"{where} failed ({os.strerror(code or 0)}{name})" + tail


def is_environment(err: BaseException) -> bool:
    """An error of the machine: a full, read-only or failing disk, a file-size limit, a folder that
    cannot be written (also as SQLite says it of the ledger, and as a library wraps it)."""
    if isinstance(err, sqlite3.OperationalError):
        return any(w in str(err) for w in ("full", "readonly", "read-only", "disk I/O", "unable to open"))
    if ledger_error(err):  # the server went away, or refused: never the workbook's
        return type(err).__name__ in (
            "OperationalError",
            "InterfaceError",
            "AdminShutdown",
            "CannotConnectNow",
            "DiskFull",
            "ConnectionTimeout",
        )
    oserr = os_error(err)
    return oserr is not None and oserr.errno in ENVIRONMENT_ERRNOS


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split())


def cannot_start(detail: str) -> str:
    """A worker process could not start (njcredits itself cannot be imported there): the environment's."""
    return f"a worker process could not start ({detail}); check the njcredits installation; the file stays in the inbox for the next run."
