"""A judge configuration's limits across every worker process and machine, and the per-process judge a run uses.

Each process that calls a judge holds a `JudgeCallLease` row: the share of the configuration's concurrency limit it
may use (`granted`) and what it would like (`wanted`: its calls in flight and waiting). A thread renews the row
every `RENEW_SECONDS` (sooner when calls start waiting): under a lock on the configuration it takes what it wants
within what the live holders leave, gives back what it no longer needs, and steps down to a fair share when others
want more; it never records less than it has in flight, so the shares never add up to more than the limit. The
requests- and tokens-per-minute limits are split in proportion to the shares. A 429 heard by one process pauses
every process (`paused_until`). A holder that has not renewed for `LEASE_SECONDS` (plus the judge's timeout, the
longest a call of a dead process can still be in flight) is forgotten; a live holder that cannot reach the database
for half that time stops starting calls.

`run_judge(config)` gives this process's judge for a configuration: one HTTP client with a pool as large as the limit,
one stream of calls (grading.judges.stream) and one lease, shared by every run of that configuration in the process.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from grading.models import JudgeCallLease, VerifierConfig, judge_egress_policy
from grading.verdict_writes import cache_judge_answers

from .client import JudgeClient, JudgeSettings
from .stream import CallGate, JudgeStream

logger = logging.getLogger(__name__)

RENEW_SECONDS = 0.5
LEASE_SECONDS = float(getattr(settings, "JUDGE_LEASE_SECONDS", 15.0))

HOLDER = f"{socket.gethostname()[:120]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _holder() -> str:
    """This process's name among holders (a forked child gets its own)."""
    global HOLDER
    if not HOLDER.split(":")[1] == str(os.getpid()):
        HOLDER = f"{socket.gethostname()[:120]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    return HOLDER


def lease_expiry(timeout_seconds: float) -> timedelta:
    return timedelta(seconds=LEASE_SECONDS + timeout_seconds)


@dataclass(frozen=True)
class Renewal:
    granted: int
    share: float
    paused_for: float


def renew(
    verifier_id: int,
    holder: str,
    *,
    limit: int,
    wanted: int,
    in_flight: int | Callable[[int], int],
    timeout_seconds: float,
    paused_until=None,
) -> Renewal:
    """Record what this holder wants and take its share; returns the share and any pause another holder heard.

    `in_flight` is this holder's calls in flight, or a function that, given the new grant, makes it the holder's
    ceiling and returns the calls in flight at that moment: called under the lock, it closes the window in which a
    holder stepping down could start calls on its old share after the others were told they may use it."""
    now = timezone.now()
    with transaction.atomic():
        # the configuration's row serializes renewals on PostgreSQL; SQLite serializes them at the first write
        VerifierConfig.objects.select_for_update().filter(pk=verifier_id).values_list("pk", flat=True).first()
        mine, _ = JudgeCallLease.objects.get_or_create(
            verifier_id=verifier_id, holder=holder, defaults={"renewed_at": now}
        )
        JudgeCallLease.objects.filter(pk=mine.pk).update(renewed_at=now)
        live = JudgeCallLease.objects.filter(
            verifier_id=verifier_id, renewed_at__gte=now - lease_expiry(timeout_seconds)
        )
        JudgeCallLease.objects.filter(verifier_id=verifier_id).exclude(pk__in=live.values("pk")).delete()
        others = live.exclude(pk=mine.pk).aggregate(
            granted=Sum("granted"), wanting=Count("pk", filter=Q(wanted__gt=0)), paused=Max("paused_until")
        )
        others_granted = int(others["granted"] or 0)
        wanting = int(others["wanting"] or 0) + (1 if wanted else 0)
        grant = min(wanted, max(0, limit - others_granted))
        if wanting > 1 and others_granted + grant >= limit:
            grant = min(grant, max(1, math.ceil(limit / wanting)))  # leave room for the others to grow into
        recorded = max(grant, in_flight(grant) if callable(in_flight) else in_flight)
        JudgeCallLease.objects.filter(pk=mine.pk).update(
            granted=recorded, wanted=wanted, paused_until=paused_until, renewed_at=now
        )
    total = others_granted + recorded
    paused = others["paused"]
    return Renewal(
        granted=grant,
        share=(recorded / total) if total else 1.0,
        paused_for=max(0.0, (paused - now).total_seconds()) if paused else 0.0,
    )


def release(verifier_id: int, holder: str) -> None:
    JudgeCallLease.objects.filter(verifier_id=verifier_id, holder=holder).delete()


class SharedLease:
    """Keeps a gate's share of its configuration's limit in step with the other processes, from a thread."""

    def __init__(self, gate: CallGate, settings: JudgeSettings, verifier_id: int, demand):
        self.gate, self.settings, self.verifier_id = gate, settings, verifier_id
        self._demand = demand
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._holder = _holder()
        self._last_renewed = time.monotonic()
        self._recorded = False
        self._thread = threading.Thread(target=self._run, name=f"judge-lease-{verifier_id}", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def _fence_after(self) -> float:
        return (LEASE_SECONDS + self.settings.timeout_seconds) / 2

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                figures = self.gate.figures()
                wanted = min(self.gate.limit, self._demand())
                if wanted == 0 and figures.in_flight == 0:
                    if self._recorded:
                        self._give_back()
                    self._wake.wait(RENEW_SECONDS * 4)
                    self._wake.clear()
                    continue
                try:
                    paused_for = max(0.0, self.gate.paused_until - time.monotonic())
                    renewal = renew(
                        self.verifier_id,
                        self._holder,
                        limit=self.gate.limit,
                        wanted=wanted,
                        in_flight=self.gate.cap,
                        timeout_seconds=self.settings.timeout_seconds,
                        paused_until=timezone.now() + timedelta(seconds=paused_for) if paused_for else None,
                    )
                except Exception:
                    logger.warning("judge %s: its lease could not be renewed", self.settings.name, exc_info=True)
                    close_old_connections()
                    if time.monotonic() - self._last_renewed > self._fence_after():
                        self.gate.set_share(0, 0.0)  # fenced until the database answers again
                else:
                    self._recorded = True
                    self._last_renewed = time.monotonic()
                    self.gate.set_share(renewal.granted, renewal.share)
                    if renewal.paused_for:
                        self.gate.pause(renewal.paused_for)
                self._wake.wait(RENEW_SECONDS)
                self._wake.clear()
        finally:
            connection.close()

    def _give_back(self) -> None:
        try:
            release(self.verifier_id, self._holder)
            self._recorded = False
            self.gate.set_share(0, 0.0)
        except Exception:
            logger.warning("judge %s: its lease could not be given back", self.settings.name, exc_info=True)
            close_old_connections()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5)
        try:
            release(self.verifier_id, self._holder)
        finally:
            connection.close()


class RunJudge:
    """This process's judge for one configuration: its client, its stream of calls and its shared lease.

    Inside a transaction that other connections cannot see (a test's, or a run executed in the caller's
    transaction), the lease's own connection could not see the configuration either: the judge then uses its whole
    limit in this process, as a single process does anyway."""

    def __init__(self, config: VerifierConfig, *, shared: bool = True):
        self.settings = JudgeSettings.from_config(config)
        self.gate = CallGate(
            self.settings.concurrency_limit,
            requests_per_minute=self.settings.requests_per_minute,
            tokens_per_minute=self.settings.tokens_per_minute,
            granted=0 if shared else None,
        )
        self.client = JudgeClient(self.settings, policy=judge_egress_policy(), gate=self.gate)
        self.stream = JudgeStream(
            self.client.judge_uncached, self.settings.concurrency_limit, name=f"judge-{config.pk}"
        )
        self.lease = SharedLease(self.gate, self.settings, config.pk, self.demand) if shared else None
        self.keeper = AnswerKeeper(self.client) if shared else None

    @property
    def keeps_answers(self) -> bool:
        """Whether an answer is in the cache before its future resolves (otherwise the caller keeps it)."""
        return self.keeper is not None

    def demand(self) -> int:
        """Calls in flight or waiting: the judgements queued, and those on a thread (in a call or between retries)."""
        return self.stream.queued + self.stream.busy

    def submit(self, messages, key: str) -> Future:
        """A judgement of the prompt; its future gives (JudgeResult, cacheable)."""
        future = self.stream.submit(messages)
        if self.lease is not None:
            self.lease.wake()
        if self.keeper is None:
            return future
        return self.keeper.after(future, key)

    def close(self) -> None:
        self.stream.close()
        if self.lease is not None:
            self.lease.close()
        if self.keeper is not None:
            self.keeper.close()
        self.client.close()


class AnswerKeeper:
    """Keeps each judge answer in the cache the moment it arrives, from a thread of its own (one insert for all
    that arrived meanwhile), and only then resolves the judgement's future: a worker killed at any moment has paid
    for nothing it did not keep, but the calls on the wire."""

    def __init__(self, client: JudgeClient):
        self.client = client
        self._arrived: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="judge-answer-keeper", daemon=True)
        self._thread.start()

    def after(self, answered: Future, key: str) -> Future:
        kept: Future = Future()
        answered.add_done_callback(lambda done: self._arrived.put((key, done, kept)))
        return kept

    def _run(self) -> None:
        settings = self.client.settings
        try:
            while True:
                batch = [self._arrived.get()]
                while True:
                    try:
                        batch.append(self._arrived.get_nowait())
                    except queue.Empty:
                        break
                if any(item is None for item in batch):
                    return
                entries = []
                for key, done, _ in batch:
                    if not done.cancelled() and done.exception() is None:
                        result, cacheable = done.result()
                        if cacheable:
                            entries.append((key, self.client.cache_entry(result)))
                try:
                    if entries:
                        cache_judge_answers(
                            entries,
                            template_name=settings.template.name,
                            template_version=settings.template.version,
                            model=settings.model,
                        )
                except Exception:
                    logger.warning("judge %s: answers could not be kept", settings.name, exc_info=True)
                    close_old_connections()
                for _, done, kept in batch:
                    if done.cancelled():
                        kept.cancel()
                    elif done.exception() is not None:
                        kept.set_exception(done.exception())
                    else:
                        kept.set_result(done.result())
        finally:
            connection.close()

    def close(self) -> None:
        self._arrived.put(None)
        self._thread.join(timeout=10)


_JUDGES: dict[tuple, RunJudge] = {}
_JUDGES_LOCK = threading.Lock()


def run_judge(config: VerifierConfig) -> RunJudge:
    """This process's judge for the configuration as it is now (a changed configuration gets a new one)."""
    settings = JudgeSettings.from_config(config)
    shared = not connection.in_atomic_block
    pid = os.getpid()
    key = (config.pk, settings, pid, shared)
    with _JUDGES_LOCK:
        judge = _JUDGES.get(key)
        if judge is None:
            for stale_key in [other for other in _JUDGES if other[0] == config.pk or other[2] != pid]:
                stale = _JUDGES.pop(stale_key)
                if stale_key[2] == pid:  # a parent's judge, inherited by fork, is not this process's to close
                    stale.close()
            judge = _JUDGES[key] = RunJudge(config, shared=shared)
        return judge


def close_run_judges() -> None:
    with _JUDGES_LOCK:
        for key, judge in _JUDGES.items():
            if key[2] == os.getpid():
                judge.close()
        _JUDGES.clear()
