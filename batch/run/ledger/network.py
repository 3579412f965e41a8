"""A SQLite ledger is never kept on a network filesystem: SQLite's locking relies on the local
kernel, so two machines writing one ledger file there can corrupt it. The filesystem is told by the
kernel's mount table (`mounts`, the one seam tests fake)."""

from __future__ import annotations

import os
import re
from pathlib import Path

# The filesystem types (as the kernel names them in /proc/self/mountinfo) whose files live on another
# machine: SQLite's locking relies on the local kernel, so two machines writing one ledger there can
# corrupt it. A FUSE filesystem is named "fuse.<its program>" (fuse.sshfs); `network_filesystem` also
# reads the part after "fuse.".
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb", "smb2", "smb3", "smbfs", "ncpfs", "afs", "openafs", "coda", "9p", "ceph", "cephfs",
        "glusterfs", "lustre", "gpfs", "beegfs", "ocfs2", "gfs2", "orangefs", "pvfs2", "davfs", "davfs2", "sshfs", "s3fs",
        "rclone", "moosefs", "mfs", "lizardfs", "quobyte", "juicefs", "wekafs", "vboxsf", "prl_fs", "virtiofs",
    }
)  # fmt: skip
MOUNTINFO = Path("/proc/self/mountinfo")


def mounts() -> list[tuple[str, str]]:
    """Every mount point of this machine and its filesystem type, from the kernel's mount table
    (Linux: /proc/self/mountinfo, its octal escapes undone); empty where there is none to read."""
    try:
        text = MOUNTINFO.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, kind = left.split(" "), right.split(" ")
        if sep and len(fields) >= 5 and kind:
            found.append((re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]), kind[0]))
    return found


def network_filesystem(path: Path) -> str | None:
    """The type of the network filesystem `path` is on (its nearest folder that exists, resolved:
    the mount point that holds it is the longest one its path begins with), or None when it is on a
    local one, or the mount table cannot be read."""
    where = Path(os.path.abspath(path))
    while not where.exists() and where != where.parent:
        where = where.parent
    where = where.resolve()
    best, kind = "", None
    for point, fstype in mounts():
        inside = str(where) == point or str(where).startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fstype
    if kind is None:
        return None
    name = kind.removeprefix("fuse.").removeprefix("fuseblk.")
    return kind if kind in NETWORK_FILESYSTEMS or name in NETWORK_FILESYSTEMS else None


class LedgerOnNetwork(Exception):
    """A SQLite ledger on a network filesystem: refused before anything is touched."""


def refuse_network_ledger(path) -> None:
    """Raise LedgerOnNetwork when the SQLite ledger `path` would be on a network filesystem (a
    PostgreSQL ledger, a URL, is the database server's to keep)."""
    if not isinstance(path, Path):
        return
    kind = network_filesystem(path)
    if kind:
        raise LedgerOnNetwork(
            f"The ledger {path} is on a network filesystem ({kind}): SQLite's locking is not reliable there, and two "
            "machines writing one ledger can corrupt it. Put the ledger on a local disk (--ledger PATH, or ledger = "
            '"PATH" in njcredits.toml), or use PostgreSQL for a ledger shared by several machines (ledger = '
            '"postgresql://user@host/db"); nothing was touched.'
        )
