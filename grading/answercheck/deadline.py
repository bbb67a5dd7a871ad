"""Run a function under a hard wall-clock deadline, from any thread.

In the main thread a SIGALRM timer interrupts the work. Signals cannot be delivered to other
threads, so there the work runs in a child process owned by the calling thread; a child that
overruns is killed and replaced.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any


class DeadlineExceeded(BaseException):
    """The time limit ran out.

    A BaseException, not an Exception: parsers and sympy catch Exception in many places (a failed
    parse is retried another way), and a timeout caught there would be taken for a parse failure
    and the work would go on past the limit.
    """


class ChildProcessFailed(Exception):
    pass


# After the first interruption the timer keeps firing at this interval until the deadline is left,
# so code that swallows the first DeadlineExceeded (a bare `except:`) is interrupted again.
_REFIRE_SECONDS = 0.05


@contextmanager
def _alarm(seconds: float):
    armed = {"on": True}
    started = time.monotonic()

    def on_alarm(signum, frame):
        if armed["on"]:
            raise DeadlineExceeded(f"gave up after {seconds:g} s")

    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, seconds, _REFIRE_SECONDS)
    if previous_delay and previous_delay < seconds:
        # Nested inside an earlier deadline that ends first: that one still rules.
        signal.setitimer(signal.ITIMER_REAL, previous_delay, _REFIRE_SECONDS)
    try:
        yield
    finally:
        # Leaving must not itself be interrupted: disarm first, and should a late signal still
        # raise while doing so, start again (the handler no longer raises once "on" is False).
        while True:
            try:
                armed["on"] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous_handler)
                if previous_delay:
                    left = max(0.001, previous_delay - (time.monotonic() - started))
                    signal.setitimer(signal.ITIMER_REAL, left, previous_interval)
                break
            except DeadlineExceeded:
                continue


def remaining_budget(started: float, timeout: float) -> float:
    """Seconds left of `timeout` counted from `started` (time.monotonic()); never below a floor
    that still lets a trivial comparison finish."""
    return max(0.01, timeout - (time.monotonic() - started))


def _child_loop(connection) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        function, args, kwargs = request
        try:
            connection.send((True, function(*args, **kwargs)))
        except BaseException as error:  # reported to the parent, which decides what it means
            connection.send((False, f"{type(error).__name__}: {error}"))


class _ChildWorker:
    """One long-lived child process; restarted after a timeout so later calls stay fast."""

    def __init__(self) -> None:
        self._process = None
        self._connection = None

    def _start(self) -> None:
        context = multiprocessing.get_context("forkserver")
        parent_end, child_end = context.Pipe()
        process = context.Process(target=_child_loop, args=(child_end,), daemon=True)
        process.start()
        child_end.close()
        self._process, self._connection = process, parent_end

    def stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(timeout=5)
            self._connection.close()
        self._process = self._connection = None

    def call(self, function: Callable, args: tuple, kwargs: dict, timeout: float) -> Any:
        if self._process is None or not self._process.is_alive():
            self.stop()
            self._start()
        self._connection.send((function, args, kwargs))
        if not self._connection.poll(timeout):
            self.stop()
            raise DeadlineExceeded(f"gave up after {timeout:g} s")
        try:
            ok, value = self._connection.recv()
        except EOFError as error:
            self.stop()
            raise ChildProcessFailed("the checking process died") from error
        if not ok:
            raise ChildProcessFailed(value)
        return value


_thread_workers = threading.local()


def run_with_deadline(function: Callable, *args: Any, timeout: float, **kwargs: Any) -> Any:
    """Return function(*args, **kwargs), or raise DeadlineExceeded once `timeout` seconds pass.

    Off the main thread `function` and its arguments must be picklable (module-level function).
    Errors raised by `function` off the main thread surface as ChildProcessFailed.
    """
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    if threading.current_thread() is threading.main_thread():
        with _alarm(timeout):
            return function(*args, **kwargs)
    worker = getattr(_thread_workers, "worker", None)
    if worker is None:
        worker = _thread_workers.worker = _ChildWorker()
    return worker.call(function, args, kwargs, timeout)
