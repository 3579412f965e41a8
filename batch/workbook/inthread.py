"""Work run in a thread of its own beside what the calling thread does next.

python-calamine parses a sheet without the interpreter's lock, so a thread of Python work beside it
(the cell scan, cutting the next block of rows) takes the other core. `Beside(fn, *args)` starts
`fn(*args)` in a thread; `result()` gives its value or raises its error.

The thread is the interpreter's plainest (`_thread`): `threading.Thread.start` waits for the new
thread to say it began, and a thread that fails to begin (out of memory under a worker's memory
limit, before it says so) would keep it waiting for ever. Here whichever comes first takes the work
(`claim`): the thread, or `result()` when the thread has not begun, which then does it itself.
`result()` waits only for a thread that took it.
"""

from __future__ import annotations

import _thread


class Beside:
    """`fn(*args)` in a thread of its own (`now`: in this one, at once: where a thread costs more
    than the work). Until `result()`, nothing else may touch what the work reads."""

    def __init__(self, fn, *args, now: bool = False):
        self.fn, self.args = fn, args
        self.value, self.error = None, None
        # plain locks: releasing one allocates nothing, so a thread out of memory still says it is done
        self.claim, self.running = _thread.allocate_lock(), _thread.allocate_lock()
        self.running.acquire()
        if now:
            self.claim.acquire()
            self.value = fn(*args)  # an error raised here, where the work was asked for
            self.running.release()
            return
        try:
            _thread.start_new_thread(self._run, ())
        except RuntimeError:  # no thread can start: the work is done when asked for
            pass

    def _run(self) -> None:
        if self.claim.acquire(False):
            self._work()

    def _work(self) -> None:
        try:
            self.value = self.fn(*self.args)
        except BaseException as err:  # raised where the value is asked for
            self.error = err
        finally:
            self.running.release()

    def _done(self) -> None:
        self.running.acquire()
        self.running.release()

    def wait(self) -> None:
        """Wait for a thread that took the work; none will take it after."""
        if self.claim.acquire(False):  # not begun: it never will
            self.running.release()
        self._done()

    def result(self):
        if self.claim.acquire(False):  # the thread has not begun: done here
            self._work()
        self._done()
        if self.error is not None:
            raise self.error
        return self.value
