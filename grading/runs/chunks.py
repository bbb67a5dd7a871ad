"""A run's chunks: planned when an execution starts, claimed by any worker process, committed whole.

- `plan` cuts what is pending into chunks, leaving alone the chunks a live worker still holds (a resume after the
  coordinating worker died finds them at work); a restart drops every chunk first (`forget`), so a chunk verified
  before it can never be committed after it.
- `claim` takes the first pending chunk, or one whose worker stopped beating, with a fresh token; the update is
  conditional, so two workers never hold one chunk.
- `commit` writes the chunk's verdicts, marks it done and adds to the run's progress and counts, in one transaction
  that first checks the worker still holds the chunk. A chunk taken over meanwhile commits nothing.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from ..models import RunChunk, VerificationRun, VerifierConfig
from ..verdict_writes import write_verdicts
from .scope import COUNT_KEYS, pending_stretches


class ChunkLost(Exception):
    """The chunk is no longer held by this worker (taken over, or dropped by a restart)."""


@dataclass(frozen=True)
class HeldChunk:
    pk: int
    run_id: int
    first_id: int
    last_id: int
    token: str


def holder_name() -> str:
    return f"{socket.gethostname()[:150]}:{os.getpid()}"


def _live(stale_after: timedelta) -> Q:
    return Q(status=RunChunk.Status.RUNNING, heartbeat_at__gte=timezone.now() - stale_after)


def forget(run: VerificationRun) -> None:
    """Drop every chunk of the run (a restart: nothing verified before it may be committed after it)."""
    RunChunk.objects.filter(run=run).delete()


def live_chunks(run_id: int, stale_after: timedelta):
    return RunChunk.objects.filter(Q(run_id=run_id) & _live(stale_after))


def plan(run: VerificationRun, chunk_size: int, stale_after: timedelta) -> int:
    """Replace the run's chunks by chunks of what is pending now, keeping those a live worker holds. Returns the
    number of completions planned."""
    with transaction.atomic():
        RunChunk.objects.filter(run=run).exclude(_live(stale_after)).delete()
        kept = list(live_chunks(run.pk, stale_after).values_list("first_id", "last_id"))
        stretches = pending_stretches(run, chunk_size, leave_out=kept)
        RunChunk.objects.bulk_create(
            [RunChunk(run=run, first_id=s.first_id, last_id=s.last_id, size=s.size) for s in stretches],
            batch_size=2000,
        )
    return sum(stretch.size for stretch in stretches)


def claim(run_id: int, stale_after: timedelta) -> HeldChunk | None:
    """Take the run's next chunk for this worker: the first pending one, else one whose worker stopped beating."""
    now = timezone.now()
    claimable = Q(status=RunChunk.Status.PENDING) | Q(
        status=RunChunk.Status.RUNNING, heartbeat_at__lt=now - stale_after
    )
    for _ in range(20):  # another worker may take the candidate first; try the next one
        candidate = (
            RunChunk.objects.filter(Q(run_id=run_id) & claimable)
            .order_by("status", "first_id")
            .values_list("pk", "status", "token")
            .first()
        )
        if candidate is None:
            return None
        pk, status, old_token = candidate
        token = uuid.uuid4().hex
        taken = (
            RunChunk.objects.filter(pk=pk, status=status, token=old_token)
            .filter(claimable)
            .update(
                status=RunChunk.Status.RUNNING,
                token=token,
                holder=holder_name(),
                heartbeat_at=now,
                claims=F("claims") + 1,
            )
        )
        if taken:
            first_id, last_id = RunChunk.objects.filter(pk=pk).values_list("first_id", "last_id").get()
            return HeldChunk(pk, run_id, first_id, last_id, token)
    return None


def beat(chunks: Sequence[HeldChunk]) -> None:
    """Keep the held chunks' heartbeats fresh."""
    if chunks:
        RunChunk.objects.filter(
            pk__in=[chunk.pk for chunk in chunks], token__in=[chunk.token for chunk in chunks]
        ).update(heartbeat_at=timezone.now())


def release(chunk: HeldChunk) -> None:
    """Give a held chunk back untouched (the worker stops before verifying it: a cancel)."""
    RunChunk.objects.filter(pk=chunk.pk, token=chunk.token, status=RunChunk.Status.RUNNING).update(
        status=RunChunk.Status.PENDING, token="", heartbeat_at=None
    )


def commit(chunk: HeldChunk, verifier: VerifierConfig, outcomes: Sequence[tuple[int, Any]]) -> int:
    """Write the chunk's verdicts and add them to the run's progress, all or nothing; returns the usable verdicts.
    Raises ChunkLost when the worker no longer holds the chunk (nothing is written then)."""
    with transaction.atomic():
        written = write_verdicts(verifier, outcomes)
        # the run's row is locked before the chunk's, as a planning execution locks them
        run = VerificationRun.objects.select_for_update().get(pk=chunk.run_id)
        if not RunChunk.objects.select_for_update().filter(pk=chunk.pk, token=chunk.token).exists():
            raise ChunkLost(f"chunk {chunk.first_id}-{chunk.last_id} of run {chunk.run_id} is held by another worker")
        RunChunk.objects.filter(pk=chunk.pk).update(
            status=RunChunk.Status.DONE,
            verified=written.usable,
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
        counts = {key: int(run.counts.get(key, 0)) for key in COUNT_KEYS}
        for status, count in written.by_status.items():
            counts[status] += count
        counts["failed"] += written.newly_failed - written.no_longer_failed
        run.counts = counts
        run.progress_done = F("progress_done") + written.usable
        run.save(update_fields=["counts", "progress_done"])
    return written.usable
