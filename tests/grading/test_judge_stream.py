"""The gate every judge call passes and the stream that keeps a judge's calls in flight (pure, no database)."""

from __future__ import annotations

import threading
import time

import pytest

from grading.judges.stream import CallGate, JudgeStream


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def start_calls(gate: CallGate, count: int) -> tuple[list[threading.Thread], list[int]]:
    started: list[int] = []

    def call(index: int) -> None:
        gate.acquire()
        started.append(index)

    threads = [threading.Thread(target=call, args=(index,), daemon=True) for index in range(count)]
    for thread in threads:
        thread.start()
    return threads, started


def settle(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition was never met")
        time.sleep(0.01)


class TestCallGate:
    def test_no_more_calls_in_flight_than_the_share_of_the_limit(self):
        gate = CallGate(4, granted=2)
        threads, started = start_calls(gate, 5)
        settle(lambda: len(started) == 2)
        time.sleep(0.05)
        assert len(started) == 2 and gate.figures().waiting == 3
        gate.set_share(4, 1.0)
        settle(lambda: len(started) == 4)
        gate.release()
        settle(lambda: len(started) == 5)
        assert gate.figures().max_in_flight == 4
        for thread in threads:
            thread.join(timeout=1)

    def test_a_429_pauses_every_call_and_halves_the_window_once_per_episode(self):
        clock = Clock()
        gate = CallGate(64, clock=clock)
        for _ in range(10):
            gate.acquire()
        for _ in range(10):  # ten calls in flight refused together: one episode, one cut
            gate.release(throttled_for=2.0)
        figures = gate.figures()
        assert figures.window == 32 and figures.throttled == 10
        assert gate.paused_until == pytest.approx(1002.0)
        clock.now += 2.5
        gate.acquire()
        gate.release(throttled_for=0.0)  # a later episode: cut again
        assert gate.figures().window == 16

    def test_the_window_grows_back_by_one_per_window_of_successes(self):
        gate = CallGate(8)
        gate.window = 4.0
        for _ in range(4):
            gate.acquire()
            gate.release()
        assert 4.9 < gate.figures().window < 5.1
        for _ in range(1000):
            gate.acquire()
            gate.release()
        assert gate.figures().window == 8

    def test_a_pause_holds_calls_back_until_it_is_over(self):
        gate = CallGate(4)
        gate.pause(0.3)
        started = time.monotonic()
        gate.acquire()
        assert time.monotonic() - started >= 0.25

    def test_requests_per_minute_space_the_calls(self):
        clock = Clock()
        gate = CallGate(10, requests_per_minute=120, clock=clock)  # 2 a second, a burst of 2
        gate.acquire()
        gate.acquire()
        assert gate._delay() == pytest.approx(0.5)
        clock.now += 0.5
        assert gate._delay() == 0.0

    def test_tokens_per_minute_hold_calls_back_while_in_deficit(self):
        clock = Clock()
        gate = CallGate(10, tokens_per_minute=600, clock=clock)  # 10 a second
        gate.acquire()
        gate.release(tokens=30)  # 20 tokens over what the bucket held
        assert gate._delay() == pytest.approx(1.0)
        clock.now += 2.0
        assert gate._delay() == 0.0

    def test_a_share_of_the_per_minute_limits_follows_the_lease(self):
        clock = Clock()
        gate = CallGate(10, requests_per_minute=600, clock=clock)
        gate.set_share(5, 0.5)
        gate._requests.level = 0
        assert gate._delay() == pytest.approx(0.2)  # 5 a second instead of 10


class TestJudgeStream:
    def test_calls_are_refilled_as_each_returns(self):
        in_flight, most = 0, 0
        lock = threading.Lock()

        def judge(seconds):
            nonlocal in_flight, most
            with lock:
                in_flight += 1
                most = max(most, in_flight)
            time.sleep(seconds)
            with lock:
                in_flight -= 1
            return seconds

        stream = JudgeStream(judge, 4)
        started = time.monotonic()
        futures = [stream.submit(0.1) for _ in range(20)]
        assert [future.result(timeout=5) for future in futures] == [0.1] * 20
        elapsed = time.monotonic() - started
        stream.close()
        assert most == 4
        assert elapsed < 0.9  # 20 calls of 0.1 s, 4 at a time: 0.5 s when nothing waits for a batch

    def test_an_error_reaches_the_caller_and_close_withdraws_what_waits(self):
        release = threading.Event()

        def judge(value):
            if value == "boom":
                raise ValueError("bad reply")
            release.wait(5)
            return value

        stream = JudgeStream(judge, 1)
        first, queued = stream.submit("slow"), stream.submit("never")
        failing = JudgeStream(judge, 1)
        with pytest.raises(ValueError, match="bad reply"):
            failing.submit("boom").result(timeout=5)
        failing.close()
        settle(lambda: stream.busy == 1)
        release.set()
        stream.close()
        assert first.result(timeout=5) == "slow"
        assert queued.cancelled() or queued.result(timeout=5) == "never"
        with pytest.raises(RuntimeError, match="closed"):
            stream.submit("late")
