"""Judge calls kept at the judge's limit from the first to the last, and the gate every call passes.

Pure: no Django. A `CallGate` decides when a call to one judge configuration may start in this process: no more in
flight than the share of the limit this process holds (all of it, unless a shared lease says otherwise), no faster
than the optional requests- and tokens-per-minute limits allow, and not at all while the endpoint has asked
everyone to wait (429, Retry-After). A throttling answer also halves the number of calls the gate lets through at
once, which then grows back by one per window of successful calls (additive increase, multiplicative decrease),
so the whole judge slows down, not only the call that was refused.

A `JudgeStream` owns one `JudgeClient` and a thread per slot of the limit. A judgement submitted to it is taken by
the next free thread, so the calls in flight are refilled as each returns, whatever chunk or run they belong to.
Its result arrives through a `Future`; the caller keeps the answer (the database cache) as soon as it arrives.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass

Clock = Callable[[], float]


class _Bucket:
    """A token bucket refilled at `rate` per second up to `capacity`; it may go below zero (tokens known only after
    a call), and then lets nothing through until it has refilled."""

    def __init__(self, rate: float, capacity: float, clock: Clock):
        self.rate, self.capacity, self._clock = rate, capacity, clock
        self.level, self._at = capacity, clock()

    def refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._at) * self.rate)
        self._at = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` is there (0 when it is)."""
        self.refill()
        if self.level >= amount:
            return 0.0
        return (amount - self.level) / self.rate if self.rate > 0 else math.inf


@dataclass(frozen=True)
class GateFigures:
    in_flight: int
    waiting: int
    granted: int
    window: float
    max_in_flight: int
    calls: int
    throttled: int


class CallGate:
    """When a call to one judge may start in this process. Thread-safe."""

    def __init__(
        self,
        limit: int,
        *,
        requests_per_minute: int = 0,
        tokens_per_minute: int = 0,
        clock: Clock = time.monotonic,
        granted: int | None = None,
    ):
        self.limit = max(1, int(limit))
        self._clock = clock
        self._cond = threading.Condition()
        self.in_flight = 0
        self.waiting = 0
        self.granted = self.limit if granted is None else granted
        self.window = float(self.limit)
        self.paused_until = 0.0
        self._last_cut = -math.inf
        self._requests_per_minute = requests_per_minute
        self._tokens_per_minute = tokens_per_minute
        self._share = 1.0
        self._requests = (
            _Bucket(requests_per_minute / 60, max(1.0, requests_per_minute / 60), clock)
            if (requests_per_minute)
            else None
        )
        self._tokens = _Bucket(tokens_per_minute / 60, tokens_per_minute / 60, clock) if tokens_per_minute else None
        self.max_in_flight = 0
        self.calls = 0
        self.throttled_calls = 0

    # -- what the shared lease sets

    def set_share(self, granted: int, share: float) -> None:
        """This process may have `granted` calls in flight, and `share` (0..1) of the per-minute limits."""
        with self._cond:
            self.granted = max(0, granted)
            self._share = max(0.0, min(1.0, share))
            for bucket, per_minute in (
                (self._requests, self._requests_per_minute),
                (self._tokens, self._tokens_per_minute),
            ):
                if bucket is not None:
                    bucket.refill()
                    bucket.rate = per_minute / 60 * self._share
            self._cond.notify_all()

    def cap(self, granted: int) -> int:
        """Make `granted` the most calls this process may have in flight from now on; returns those in flight."""
        with self._cond:
            self.granted = max(0, granted)
            self._cond.notify_all()
            return self.in_flight

    def pause(self, seconds: float) -> None:
        """Nobody starts a call for `seconds` (another process heard a 429)."""
        with self._cond:
            self.paused_until = max(self.paused_until, self._clock() + seconds)

    @property
    def wanted(self) -> int:
        with self._cond:
            return min(self.limit, self.in_flight + self.waiting)

    def figures(self) -> GateFigures:
        with self._cond:
            return GateFigures(
                self.in_flight,
                self.waiting,
                self.granted,
                self.window,
                self.max_in_flight,
                self.calls,
                self.throttled_calls,
            )

    # -- calls

    def _cap(self) -> int:
        return max(0, min(self.granted, self.limit, max(1, int(self.window))))

    def _delay(self) -> float:
        """Seconds to wait before a call may start now (0: it may); the caller holds the condition."""
        now = self._clock()
        if now < self.paused_until:
            return self.paused_until - now
        if self.in_flight >= self._cap():
            return 0.25  # woken sooner by a release or a new share
        if self._requests is not None and (wait := self._requests.wait_for(1.0)) > 0:
            return min(wait, 1.0)
        if self._tokens is not None and (wait := self._tokens.wait_for(0.0)) > 0:
            return min(wait, 1.0)
        return 0.0

    def acquire(self) -> None:
        with self._cond:
            self.waiting += 1
            try:
                while (delay := self._delay()) > 0:
                    self._cond.wait(delay)
            finally:
                self.waiting -= 1
            self.in_flight += 1
            self.calls += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self._requests is not None:
                self._requests.level -= 1

    def release(self, *, throttled_for: float | None = None, tokens: int = 0) -> None:
        """A call ended. `throttled_for`: the endpoint refused it for load (429) and asked to wait that long (0 when
        it did not say)."""
        with self._cond:
            self.in_flight -= 1
            now = self._clock()
            if self._tokens is not None and tokens:
                self._tokens.refill()
                self._tokens.level -= tokens
            if throttled_for is not None:
                self.throttled_calls += 1
                self.paused_until = max(self.paused_until, now + throttled_for)
                # one cut per window of calls: the calls already in flight when the endpoint objected are one event
                if now - self._last_cut >= max(1.0, throttled_for):
                    self.window = max(1.0, self.window / 2)
                    self._last_cut = now
            elif self.window < self.limit:
                self.window = min(float(self.limit), self.window + 1.0 / self.window)
            self._cond.notify_all()

    @contextmanager
    def call(self) -> Iterator[CallTicket]:
        self.acquire()
        ticket = CallTicket()
        try:
            yield ticket
        finally:
            self.release(throttled_for=ticket.throttled_for, tokens=ticket.tokens)


@dataclass
class CallTicket:
    """What the caller learns about its call and tells the gate when the call ends."""

    throttled_for: float | None = None
    tokens: int = 0


class JudgeStream:
    """A judge's calls from this process, at most its limit in flight and refilled as each returns.

    `judge(messages)` is the whole judgement of one prompt (a `JudgeClient.judge_uncached`, which passes the gate for
    each HTTP attempt and sleeps between retries outside it); it runs on one of `threads` threads."""

    def __init__(self, judge: Callable, threads: int, *, name: str = "judge"):
        self._judge = judge
        self._queue: deque[tuple[object, Future]] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._busy = 0
        self._threads = [
            threading.Thread(target=self._serve, name=f"{name}-{index}", daemon=True)
            for index in range(max(1, threads))
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, messages) -> Future:
        future: Future = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("the judge stream is closed")
            self._queue.append((messages, future))
            self._cond.notify()
        return future

    @property
    def queued(self) -> int:
        with self._cond:
            return len(self._queue)

    @property
    def busy(self) -> int:
        with self._cond:
            return self._busy

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed and not self._queue:
                    return
                messages, future = self._queue.popleft()
                self._busy += 1
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(self._judge(messages))
                    except BaseException as error:  # the caller gets it from the future
                        future.set_exception(error)
            finally:
                with self._cond:
                    self._busy -= 1

    def close(self, *, wait: bool = True) -> None:
        with self._cond:
            self._closed = True
            for _, future in self._queue:
                future.cancel()
            self._queue.clear()
            self._cond.notify_all()
        if wait:
            for thread in self._threads:
                thread.join(timeout=5)
