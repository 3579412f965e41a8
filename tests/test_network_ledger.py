"""A SQLite ledger on a network filesystem is refused before anything is touched (exit 3, naming
the filesystem): SQLite's locking relies on the local kernel. The filesystem is told by the kernel's
mount table (`batch.run.ledger.mounts`), faked here at that one seam."""

from __future__ import annotations

import datetime as dt

import pytest
from click.testing import CliRunner
from test_portfolio import transfer
from test_reviews import transfers_workbook

import batch.run.ledger.network as ledger_module
from batch.cli import main
from batch.run.ledger import mounts, network_filesystem


@pytest.fixture
def share(tmp_path, monkeypatch):
    """`tmp_path/share` mounted from a file server (nfs4), the rest of the machine local (ext4)."""
    where = tmp_path / "share"
    where.mkdir()
    monkeypatch.setattr(ledger_module, "mounts", lambda: [("/", "ext4"), (str(where.resolve()), "nfs4"), ("/proc", "proc")])
    return where


KIND_CASES = [
    ("nfs4", "nfs4"), ("nfs", "nfs"), ("cifs", "cifs"), ("smb3", "smb3"), ("fuse.sshfs", "fuse.sshfs"), ("ceph", "ceph"),
    ("9p", "9p"), ("ext4", None), ("xfs", None), ("tmpfs", None), ("fuse.gocryptfs", None), ("overlay", None),
]  # fmt: skip


@pytest.mark.parametrize("kind,said", KIND_CASES)
def test_which_filesystems_are_network_ones(tmp_path, monkeypatch, kind, said):
    monkeypatch.setattr(ledger_module, "mounts", lambda: [("/", "ext4"), (str(tmp_path.resolve()), kind)])
    assert network_filesystem(tmp_path / "outbox" / ".njcredits" / "ledger.sqlite") == said  # folders not made yet


def test_the_longest_mount_point_holding_the_path_decides(tmp_path, monkeypatch):
    local = tmp_path / "share" / "local"
    local.mkdir(parents=True)
    monkeypatch.setattr(ledger_module, "mounts", lambda: [("/", "ext4"), (str((tmp_path / "share").resolve()), "nfs"),
                                                          (str(local.resolve()), "ext4"), (str(tmp_path / "sh"), "cifs")])  # fmt: skip
    assert network_filesystem(local / "ledger.sqlite") is None
    assert network_filesystem(tmp_path / "share" / "ledger.sqlite") == "nfs"
    assert network_filesystem(tmp_path / "shared" / "ledger.sqlite") is None  # "/sh" is not a folder of "/shared"


def test_the_mount_table_is_read_with_its_escapes(tmp_path, monkeypatch):
    table = tmp_path / "mountinfo"
    table.write_text(
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "90 27 0:55 / /mnt/finance\\040team rw,relatime shared:1 - nfs4 server:/export rw,vers=4.2\n"
        "not a line of the table\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(ledger_module, "MOUNTINFO", table)
    assert mounts() == [("/", "ext4"), ("/mnt/finance team", "nfs4")]
    monkeypatch.setattr(ledger_module, "MOUNTINFO", tmp_path / "none")
    assert mounts() == []  # no table to read: nothing is refused


def test_a_run_whose_ledger_is_on_a_share_is_refused_before_anything_is_touched(tmp_path, share):
    inbox, outbox = tmp_path / "inbox", share / "outbox"
    transfers_workbook(inbox / "nov.xlsx", [transfer("T-1", "C-1", 6_000_000, dt.date(2026, 11, 10), 6_000_000)])
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox)])
    assert result.exit_code == 3
    assert "is on a network filesystem (nfs4)" in result.output and "Put the ledger on a local disk" in result.output
    assert sorted(p.name for p in inbox.iterdir()) == ["nov.xlsx"] and not outbox.exists()  # nothing touched
    # the ledger on a local disk, the outbox on the share: the run goes on
    result = CliRunner().invoke(main, ["run", str(inbox), "--out", str(outbox), "--ledger", str(tmp_path / "ledger.sqlite")])
    assert result.exit_code == 0, result.output
    assert (outbox / "nov.annotated.xlsx").exists()


@pytest.mark.parametrize("command", [["history"], ["portfolio"], ["validate"]])
def test_the_commands_that_read_a_ledger_on_a_share_refuse_it(tmp_path, share, command):
    outbox = share / "outbox"
    (outbox / ".njcredits").mkdir(parents=True)
    (outbox / ".njcredits" / "ledger.sqlite").write_bytes(b"")
    args = [*command, "--out", str(outbox)]
    if command == ["validate"]:
        args.insert(1, str(transfers_workbook(tmp_path / "a.xlsx", [transfer("T-1", "C-1", 1, dt.date(2026, 1, 1), 1)])))
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3 and "network filesystem (nfs4)" in result.output, result.output


def test_watch_refuses_a_ledger_on_a_share(tmp_path, share):
    (tmp_path / "inbox").mkdir()
    result = CliRunner().invoke(main, ["watch", str(tmp_path / "inbox"), "--out", str(share / "outbox")])
    assert result.exit_code == 3 and "network filesystem (nfs4)" in result.output
    assert not (share / "outbox").exists()
