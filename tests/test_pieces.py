"""An object sent to the run in pieces as it is pickled (`batch.run.workers.send_pickled`,
`receive_pickled`): a large file's records, never pickled whole in the worker. The same object
comes back however many pieces it takes; one the sender gives up (a MemoryError as it pickles)
stands as nothing; a sender that ends midway is an end of file, not a half object."""

from __future__ import annotations

import contextlib
import errno
import io
import multiprocessing
import pickle
import threading

import numpy as np
import pandas as pd
import pytest

from batch.run import workers


class _Failing:
    """Fails as it is pickled, with `error`: a MemoryError, as an object too large for the memory
    left would, or another error."""

    def __init__(self, error: type[BaseException]):
        self.error = error

    def __reduce__(self):
        raise self.error


def _records(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "record_id": [f"T-{i}" for i in range(n)],
            "award_cents": pd.array(np.arange(n), dtype="Int64").to_numpy(dtype=object),
            "inputs": [f'{{"Business Name": "Seller {i} LLC"}}' for i in range(n)],
            "seq": np.arange(n, dtype=np.int64),  # pickled from the array's own buffer (protocol 5)
        }
    )


def _over_pipe(monkeypatch, piece_bytes: int, send, read, killed=None):
    """Over one pipe, in pieces of `piece_bytes`: (what `send(conn)` returned or raised, what
    `read(conn)` returned); then a message sent after it, read as itself. `killed(pieces)` in place
    of `send`: the sender writes part of what it sends and ends, as a killed process does."""
    monkeypatch.setattr(workers, "PIECE_BYTES", piece_bytes)
    recv, conn = multiprocessing.Pipe(duplex=False)
    returned = []

    def sender():
        if killed is None:
            try:
                returned.append(send(conn))
            except ValueError as err:
                returned.append(err)
            conn.send(("next", None, False))
        else:
            pieces = workers._Pieces(conn)
            killed(pieces)
            pieces.send()
        conn.close()

    thread = threading.Thread(target=sender)
    thread.start()
    got = read(recv)
    if killed is None:
        assert recv.recv() == ("next", None, False)  # the pieces ended where they end, whatever ended them
    thread.join()
    recv.close()
    return (returned[0] if returned else None), got


def _sent(obj, piece_bytes: int, monkeypatch, close_after: int | None = None):
    """(what `send_pickled` returned or raised, what `receive_pickled` got or raised) over one pipe;
    then a message sent after it, read as itself."""

    def killed(pieces):  # the sender ends after a few pieces
        data = pickle.dumps(obj)
        for at in range(0, min(close_after, len(data)), 100):
            pieces.write(data[at : at + 100])

    def read(recv):
        try:
            return workers.receive_pickled(recv)
        except (workers.Abandoned, EOFError) as err:
            return err

    def send(conn):
        return workers.send_pickled(conn, obj)

    return _over_pipe(monkeypatch, piece_bytes, send, read, killed if close_after is not None else None)


@pytest.mark.parametrize(
    "rows,piece_bytes",
    [
        (0, workers.PIECE_BYTES),  # an empty frame: one piece
        (10, workers.PIECE_BYTES),
        (10_000, 1 << 10),  # about 600 KB pickled in pieces of 1 KB: hundreds of pieces
        (10_000, 1),  # a piece for each write pickle makes
    ],
)
def test_the_object_comes_back_whatever_the_pieces(monkeypatch, rows, piece_bytes):
    records = _records(rows)
    returned, got = _sent(records, piece_bytes, monkeypatch)
    assert returned is True
    pd.testing.assert_frame_equal(got, records)


@pytest.mark.parametrize("error", [MemoryError, ValueError])
def test_an_object_given_up_as_it_is_pickled_stands_as_nothing(monkeypatch, error):
    # the pieces of the frame before it are sent; the error ends them as given up: a MemoryError is
    # the sender's answer (False: they go with the result), another error is raised there
    returned, got = _sent([_records(5_000), _Failing(error)], 1 << 10, monkeypatch)
    assert (returned is False) if error is MemoryError else isinstance(returned, ValueError)
    assert isinstance(got, workers.Abandoned)


def test_a_sender_that_ends_midway_is_an_end_of_file(monkeypatch):
    returned, got = _sent(_records(5_000), 1 << 10, monkeypatch, close_after=50_000)
    assert isinstance(got, EOFError)


def test_a_sender_that_stops_midway_leaves_the_waiting_to_the_receiver(monkeypatch):
    """While no piece comes, the receiver is asked every `PIECE_WAIT` seconds whether to go on
    waiting (the run: its timeout and a stop signal); what that raises ends the receiving."""
    monkeypatch.setattr(workers, "PIECE_WAIT", 0.01)
    recv, send = multiprocessing.Pipe(duplex=False)
    data = pickle.dumps(_records(100))
    send.send_bytes(workers.PIECE + data[:50])  # the first bytes, then nothing: a stopped sender
    asked = []

    def waiting():
        asked.append(1)
        if len(asked) == 5:
            raise TimeoutError("past the run's timeout")

    with pytest.raises(TimeoutError):
        workers.receive_pickled(recv, waiting)
    assert len(asked) == 5
    send.close()
    recv.close()


def _sent_each(objs, piece_bytes: int, monkeypatch, close_after: int | None = None, spool=None):
    """`_sent` of objects sent one after another (`send_pickled(..., each=True)`), read as they
    come (`receive_each`, through `spool` when given): (what the sender returned or raised, the
    objects read, then what ended the reading: None, or what it raised)."""

    def killed(pieces):  # the first object sent whole, then part of the second
        first, second = (pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL) for o in objs[:2])
        pieces.write(first)
        pieces.send()
        pieces.write(second[:close_after])

    def read(recv):
        got = []
        try:
            for obj in workers.receive_each(recv, spool=spool):
                got.append(obj)
        except (workers.Abandoned, workers.SenderGone, workers.SpoolFailed) as err:
            return got, err
        return got, None

    def send(conn):
        return workers.send_pickled(conn, objs, each=True)

    returned, (got, ended) = _over_pipe(monkeypatch, piece_bytes, send, read, killed if close_after is not None else None)
    return returned, got, ended


@pytest.mark.parametrize(
    "sizes,piece_bytes",
    [
        ([], workers.PIECE_BYTES),  # none: the end alone
        ([0], workers.PIECE_BYTES),  # one empty frame
        ([10, 0, 7], workers.PIECE_BYTES),  # each in a piece of its own (each is sent to its end before the next)
        ([3_000, 3_000, 1], 1 << 10),  # each in hundreds of pieces
        ([40, 40], 1),  # a piece for each write pickle makes
    ],
)
@pytest.mark.parametrize("spooled", [False, True])
def test_objects_sent_one_after_another_come_back_each_as_sent(monkeypatch, tmp_path, sizes, piece_bytes, spooled):
    frames = [_records(n) for n in sizes]
    with open(tmp_path / "spool", "w+b") if spooled else contextlib.nullcontext() as spool:
        returned, got, ended = _sent_each(iter(frames), piece_bytes, monkeypatch, spool=spool)  # made as they are sent
    assert returned is True and ended is None
    assert len(got) == len(frames)
    for g, f in zip(got, frames, strict=True):
        pd.testing.assert_frame_equal(g, f)


def _made_then_failing(error: type[BaseException], before: int):
    """Frames made one at a time, the next failing with `error` after `before` of them, as a block
    of records made in the memory left may."""
    for n in range(before):
        yield _records(100 + n)
    raise error


@pytest.mark.parametrize("spooled", [False, True])
@pytest.mark.parametrize("error", [MemoryError, ValueError])
def test_objects_given_up_midway_are_read_up_to_the_end_the_sender_gave(monkeypatch, tmp_path, error, spooled):
    # two frames sent whole, then the third fails as it is made: the reader has the two, then the
    # sender's giving up (Abandoned: nothing sent stands, the run lets go of what it did with them);
    # spooled, it has none: nothing is read back before the end
    with open(tmp_path / "spool", "w+b") if spooled else contextlib.nullcontext() as spool:
        returned, got, ended = _sent_each(_made_then_failing(error, 2), 1 << 10, monkeypatch, spool=spool)
    assert (returned is False) if error is MemoryError else isinstance(returned, ValueError)
    assert [len(g) for g in got] == ([] if spooled else [100, 101])
    assert isinstance(ended, workers.Abandoned)


@pytest.mark.parametrize("spooled", [False, True])
def test_a_sender_of_objects_that_ends_midway_is_gone_not_a_half_object(monkeypatch, tmp_path, spooled):
    # the first frame whole, then 500 bytes of the second and the pipe closed: SenderGone, which
    # the run tells apart from whatever its own use of each object raises (the ledger's errors)
    with open(tmp_path / "spool", "w+b") if spooled else contextlib.nullcontext() as spool:
        returned, got, ended = _sent_each([_records(50), _records(5_000)], 1 << 10, monkeypatch, close_after=500, spool=spool)
    assert [len(g) for g in got] == ([] if spooled else [50])
    assert isinstance(ended, workers.SenderGone) and not isinstance(ended, OSError)


class _FullDisk(io.BytesIO):
    """A spool whose disk fills after `room` bytes."""

    def __init__(self, room: int):
        super().__init__()
        self.room = room

    def write(self, data) -> int:
        if self.tell() + len(data) > self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return super().write(data)


def test_a_spool_that_fails_reads_every_piece_off_the_pipe_and_says_the_disks_error(monkeypatch):
    # the disk fills after 5,000 bytes of about 300 KB of three frames: nothing is read back, every
    # piece is read off the pipe (the next message is read as itself), and the disk's error is raised
    returned, got, ended = _sent_each([_records(2_000)] * 3, 1 << 10, monkeypatch, spool=_FullDisk(5_000))
    assert returned is True and got == []
    assert isinstance(ended, workers.SpoolFailed) and ended.error.errno == errno.ENOSPC
