"""One worker process's share of a run: claim chunks, verify them, commit them, until nothing is left to claim.

The rule-based verifier works a chunk at a time (it is CPU-bound; more processes make it faster), while one thread
claims and reads the next chunk and another writes the last one. A judge's or a
cascade's chunks are streamed: the worker keeps claiming chunks while fewer than two limits' worth of judgements are
waiting, submits what the cache does not already hold to the process's judge (grading.judges.limits.run_judge), keeps
each answer in the cache as it arrives, and commits a chunk as soon as its last judgement is in. The judge therefore
has its limit in flight from the start of the run to its end, across chunk boundaries, and a worker killed midway has
paid for nothing but the calls that were in flight.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import timedelta
from decimal import Decimal

from django.db import close_old_connections, connection

from ..judges.client import JudgeResult
from ..judges.limits import RunJudge, run_judge
from ..models import VerificationRun, VerifierConfig
from ..verdict_writes import cache_judge_answers, cached_judge_answers
from . import chunks as chunk_store
from .outcomes import RuleOutcome, asks_judge, cascade_outcome, judge_input, verify_with_rules
from .scope import CompletionRow, chunk_rows

logger = logging.getLogger(__name__)

QUEUE_LIMITS = 2  # judgements waiting per slot of the limit before another chunk is claimed
STAGE_SWITCH_INTERVAL = 0.001  # seconds: how long the database stages of a rule run wait for the verifier's GIL


def verify_rule_rows(rows: list[CompletionRow]) -> list[RuleOutcome]:
    """The rule-based verdicts of a chunk's rows (a seam tests use to watch chunks go by)."""
    return verify_with_rules(rows)


class ChunkBeater:
    """Keeps the heartbeats of the chunks this worker holds fresh, from a thread."""

    def __init__(self, interval: float):
        self._held: dict[int, chunk_store.HeldChunk] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._interval = interval
        self._thread = threading.Thread(target=self._run, name="run-chunk-heartbeat", daemon=True)
        self._thread.start()

    def hold(self, chunk: chunk_store.HeldChunk) -> None:
        with self._lock:
            self._held[chunk.pk] = chunk

    def drop(self, chunk: chunk_store.HeldChunk) -> None:
        with self._lock:
            self._held.pop(chunk.pk, None)

    def give_back_all(self) -> None:
        """The worker stops with chunks unfinished (an error, a stop): they go back to be claimed at once."""
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for chunk in held:
            chunk_store.release(chunk)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                with self._lock:
                    held = list(self._held.values())
                try:
                    chunk_store.beat(held)
                except Exception:
                    logger.warning("chunk heartbeat failed", exc_info=True)
                    close_old_connections()
        finally:
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@dataclass
class _Asked:
    """A judgement this worker is waiting for, and how many completions of its window need it."""

    future: Future
    users: int = 0
    kept: bool = False  # its answer was taken (and kept in the cache when it can be): it may be handed out
    answered_first: bool = False


@dataclass
class _StreamedChunk:
    held: chunk_store.HeldChunk
    rows: list[CompletionRow]
    rules: list[RuleOutcome] | None  # a cascade's rule verdicts
    keys: dict[int, str]  # row index -> prompt key, for the rows the judge is asked about
    results: dict[int, JudgeResult] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.keys)


class RunWorker:
    """Claims and verifies a run's chunks in this process. `check()` raises to stop (a cancel, a takeover)."""

    def __init__(
        self,
        run: VerificationRun,
        verifier: VerifierConfig,
        *,
        stale_after: timedelta,
        check: Callable,
        delay: float = 0.0,
    ):
        self.run, self.verifier, self.stale_after = run, verifier, stale_after
        self.check, self.delay = check, delay
        self.verified = 0

    def work(self) -> int:
        """Verify chunks until none is left to claim; returns the usable verdicts this worker committed."""
        beater = ChunkBeater(max(0.2, self.stale_after.total_seconds() / 6))
        try:
            if self.verifier.kind == VerifierConfig.Kind.RULE:
                self._work_by_chunk(beater)
            else:
                _JudgeWindow(self, beater).work()
        finally:
            beater.close()
            beater.give_back_all()
        return self.verified

    def claim(self, beater: ChunkBeater) -> chunk_store.HeldChunk | None:
        held = chunk_store.claim(self.run.pk, self.stale_after)
        if held is not None:
            beater.hold(held)
        return held

    def commit(self, beater: ChunkBeater, held: chunk_store.HeldChunk, outcomes) -> None:
        try:
            self.verified += chunk_store.commit(held, self.verifier, outcomes)
        except chunk_store.ChunkLost:
            logger.warning(
                "run %s: chunk %s-%s was taken over; its verdicts were not written",
                self.run.pk,
                held.first_id,
                held.last_id,
            )
        finally:
            beater.drop(held)
        if self.delay:
            time.sleep(self.delay)

    def _work_by_chunk(self, beater: ChunkBeater) -> None:
        if not _ChunkWriter.usable():
            while True:
                self.check()
                held = self.claim(beater)
                if held is None:
                    return
                rows = chunk_rows(self.run, held.first_id, held.last_id)
                outcomes = verify_rule_rows(rows)
                self.commit(beater, held, [(row.pk, outcome) for row, outcome in zip(rows, outcomes, strict=True)])
        # Three stages at once: a thread claims and reads the next chunk and another writes the last one while this
        # one is verified here (the verifier is CPU-bound; the other two are mostly the database's time).
        writer = _ChunkWriter(self, beater)
        reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-chunk-reader")
        following = reader.submit(self._claim_and_read, beater)
        # The verifier holds the GIL; after each round trip to the database the reader and the writer would wait for
        # it up to the switch interval (5 ms by default), tens of times per chunk, and fall behind the verifier.
        switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(switch_interval, STAGE_SWITCH_INTERVAL))
        try:
            while True:
                self.check()
                held, rows = following.result()
                if held is None:
                    break
                following = reader.submit(self._claim_and_read, beater)
                outcomes = verify_rule_rows(rows)
                writer.put(held, [(row.pk, outcome) for row, outcome in zip(rows, outcomes, strict=True)])
        except BaseException:
            wait([following])  # a chunk it claims meanwhile is given back with the others the worker holds
            writer.close(raise_error=False)  # what is verified is still written; the first error wins
            raise
        finally:
            sys.setswitchinterval(switch_interval)
            reader.submit(lambda: connection.close()).result()  # the reader thread's own connection
            reader.shutdown()
        writer.close()

    def _claim_and_read(self, beater: ChunkBeater) -> tuple[chunk_store.HeldChunk | None, list[CompletionRow]]:
        held = self.claim(beater)
        return held, chunk_rows(self.run, held.first_id, held.last_id) if held is not None else []


class _ChunkWriter:
    """Commits a worker's verified chunks from a thread of its own, so that the next chunk is verified while the last
    one is written: the rule-based verifier is CPU-bound, a chunk's write mostly the database's time. At most one
    verified chunk waits for the writer, so memory stays a few chunks whatever the run's size."""

    def __init__(self, worker: RunWorker, beater: ChunkBeater):
        self.worker, self.beater = worker, beater
        self._queue: queue.Queue = queue.Queue(maxsize=1)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="run-chunk-writer", daemon=True)
        self._thread.start()

    @staticmethod
    def usable() -> bool:
        """A second connection sees what this one committed (PostgreSQL, outside a transaction of the caller's:
        a run executed inside a test's transaction, or on SQLite with its single writer, commits inline)."""
        return connection.vendor == "postgresql" and not connection.in_atomic_block

    def put(self, held: chunk_store.HeldChunk, verified: list) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put((held, verified))

    def _run(self) -> None:
        try:
            while (job := self._queue.get()) is not None:
                if self._error is None:
                    try:
                        self.worker.commit(self.beater, *job)
                    except BaseException as error:  # handed to the worker's thread at its next put or at the end
                        self._error = error
        finally:
            connection.close()

    def close(self, *, raise_error: bool = True) -> None:
        self._queue.put(None)
        self._thread.join()
        if raise_error and self._error is not None:
            raise self._error


class _JudgeWindow:
    """The chunks a worker streams through the judge, and the judgements they wait for."""

    def __init__(self, worker: RunWorker, beater: ChunkBeater):
        self.worker, self.beater = worker, beater
        verifier = worker.verifier
        self.cascade = verifier.kind == VerifierConfig.Kind.CASCADE
        judge_config = verifier.cascade_judge if self.cascade else verifier
        assert judge_config is not None  # a cascade always names its judge (a check constraint)
        self.judge_config: VerifierConfig = judge_config
        self.judge: RunJudge = run_judge(self.judge_config)
        self.chunks: list[_StreamedChunk] = []
        self.asked: dict[str, _Asked] = {}
        self.arrived: queue.SimpleQueue[str] = queue.SimpleQueue()

    def waiting(self) -> int:
        return sum(len(chunk.keys) - len(chunk.results) for chunk in self.chunks)

    def work(self) -> None:
        stopping: BaseException | None = None
        exhausted = False
        while True:
            if stopping is None:
                try:
                    self.worker.check()
                except BaseException as reason:  # Cancelled or Superseded: finish what is in flight, then stop
                    stopping = reason
                    self._give_back_unstarted()
            if stopping is None and not exhausted:
                exhausted = self._fill()
            if not self.chunks:
                break
            self._take_answers(timeout=0.5)
            self._commit_complete()
        if stopping is not None:
            self._keep_answers_in_flight()
            raise stopping

    def _keep_answers_in_flight(self) -> None:
        """After a stop, the calls already on the wire are paid for: keep their answers for the next execution."""
        deadline = time.monotonic() + self.judge.settings.timeout_seconds * (self.judge.settings.max_retries + 1)
        while any(not asked.future.done() for asked in self.asked.values()) and time.monotonic() < deadline:
            self._take_answers(timeout=0.5)
        self._take_answers(timeout=0.01)

    def _fill(self) -> bool:
        """Claim chunks while fewer than QUEUE_LIMITS limits' worth of judgements wait; True when none is left."""
        target = QUEUE_LIMITS * self.judge.settings.concurrency_limit
        while self.waiting() < target:
            held = self.worker.claim(self.beater)
            if held is None:
                return True
            self._start(held)
        return False

    def _start(self, held: chunk_store.HeldChunk) -> None:
        rows = chunk_rows(self.worker.run, held.first_id, held.last_id)
        rules = verify_rule_rows(rows) if self.cascade else None
        asked_rows = [
            index
            for index, row in enumerate(rows)
            if rules is None or asks_judge(self.worker.verifier, row, rules[index])
        ]
        client = self.judge.client
        messages = {index: client.first_messages(judge_input(rows[index])) for index in asked_rows}
        keys = {index: client.cache_key(message) for index, message in messages.items()}
        chunk = _StreamedChunk(held, rows, rules, keys)
        unknown = {key for key in keys.values() if key not in self.asked}
        kept = cached_judge_answers(unknown) if unknown else {}
        for index, key in keys.items():
            if key in kept:
                chunk.results[index] = client.result_from_cache(kept[key])
                continue
            asked = self.asked.get(key)
            if asked is None:
                future = self.judge.submit(messages[index], key)
                asked = self.asked[key] = _Asked(future)
                future.add_done_callback(self._arrival_of(key))
            asked.users += 1
        self.chunks.append(chunk)
        self._collect(chunk)

    def _arrival_of(self, key: str) -> Callable[[Future], None]:
        return lambda _: self.arrived.put(key)

    def _take_answers(self, timeout: float) -> None:
        """Wait for answers, keep the new ones in the cache at once (one insert for all that arrived), and hand
        them to the chunks that wait for them."""
        arrived = []
        try:
            arrived.append(self.arrived.get(timeout=timeout))
            while True:
                arrived.append(self.arrived.get_nowait())
        except queue.Empty:
            pass
        fresh = []
        for key in arrived:
            asked = self.asked.get(key)
            if asked is None or asked.future.cancelled():
                continue
            result, cacheable = asked.future.result()
            asked.kept = True
            if cacheable and not self.judge.keeps_answers:
                fresh.append((key, self.judge.client.cache_entry(result)))
        if fresh:
            settings = self.judge.settings
            cache_judge_answers(
                fresh,
                template_name=settings.template.name,
                template_version=settings.template.version,
                model=settings.model,
            )
        for chunk in self.chunks:
            self._collect(chunk)

    def _collect(self, chunk: _StreamedChunk) -> None:
        for index, key in chunk.keys.items():
            if index in chunk.results:
                continue
            asked = self.asked.get(key)
            if asked is None or not asked.kept:
                continue
            result, _ = asked.future.result()
            if asked.answered_first:
                result = replace(result, cache_hit=True, cost=Decimal(0), attempts=0)  # paid once, by its first user
            asked.answered_first = True
            chunk.results[index] = result
            asked.users -= 1
            if asked.users == 0:
                del self.asked[key]

    def _commit_complete(self) -> None:
        for chunk in [chunk for chunk in self.chunks if chunk.complete]:
            self.chunks.remove(chunk)
            self.worker.commit(self.beater, chunk.held, self._outcomes(chunk))

    def _outcomes(self, chunk: _StreamedChunk) -> list[tuple[int, object]]:
        if chunk.rules is None:
            return [(chunk.rows[index].pk, result) for index, result in sorted(chunk.results.items())]
        judge = self.judge_config
        return [
            (row.pk, cascade_outcome(rule, chunk.results.get(index), judge))
            for index, (row, rule) in enumerate(zip(chunk.rows, chunk.rules, strict=True))
        ]

    def _give_back_unstarted(self) -> None:
        """On a stop: judgements not yet on a thread are withdrawn, and the chunks that needed them go back."""
        for asked in self.asked.values():
            asked.future.cancel()
        for chunk in list(self.chunks):
            if any(
                self.asked.get(key) is not None and self.asked[key].future.cancelled() for key in chunk.keys.values()
            ):
                self.chunks.remove(chunk)
                self.beater.drop(chunk.held)
                chunk_store.release(chunk.held)
        self.asked = {key: asked for key, asked in self.asked.items() if not asked.future.cancelled()}
