"""Background jobs of every kind (imports, verification runs, exports, project setups, annotator-model refits):
list, inspect, cancel, resume, restart, and wait with a progress bar."""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable
from typing import Any

from tqdm.auto import tqdm

from . import errors
from ._http import Http
from .types import Job

FINISHED = ("succeeded", "failed", "cancelled")


def job_ref(job: str | dict[str, Any]) -> str:
    """`kind-id` ("import-3") from a job payload, a payload carrying one under "job", or the reference itself."""
    if isinstance(job, str):
        return job
    common = job.get("job", job)
    return f"{common['kind']}-{common['id']}"


def wait_for(
    fetch: Callable[[], dict[str, Any]],
    *,
    progress: bool = True,
    poll_interval: float = 1.0,
    timeout: float | None = None,
    raise_on_failure: bool = True,
    unit: str = "it",
) -> Any:
    """Fetch a job's payload until it has ended, drawing its progress (tqdm); returns the last payload.

    Raises JobFailed when it failed or was cancelled (unless `raise_on_failure` is false) and WaitTimeout when
    `timeout` seconds pass first."""
    deadline = None if timeout is None else time.monotonic() + timeout
    bar = None
    try:
        while True:
            payload = fetch()
            job = payload.get("job", payload)
            done, total = int(job["progress"]["done"]), int(job["progress"]["total"])
            if progress:
                if bar is None:
                    bar = tqdm(total=total or None, desc=job.get("title", "job"), unit=unit, leave=True)
                bar.total = total or None
                bar.n = done
                bar.set_postfix_str(job["status"], refresh=False)
                bar.refresh()
            if job["status"] in FINISHED:
                break
            if deadline is not None and time.monotonic() > deadline:
                raise errors.WaitTimeout(f"{job.get('title', 'the job')} is still {job['status']} after {timeout} s")
            time.sleep(poll_interval)
    finally:
        if bar is not None:
            bar.close()
    if raise_on_failure and job["status"] != "succeeded":
        raise errors.JobFailed(job)
    return payload


class Jobs:
    def __init__(self, http: Http):
        self._http = http

    def list(self, *, kind: str | None = None, status: str | None = None) -> builtins.list[Job]:
        """Jobs of every kind, newest first (at most 200), optionally of one kind ("import", "verification-run",
        "export", "project-setup", "annotator-model") or in one status."""
        return self._http.get("/api/jobs/", kind=kind, status=status)

    def get(self, job: str | dict[str, Any]) -> Job:
        """One job by reference ("export-4") or from any payload that carries one."""
        return self._http.get(f"/api/jobs/{job_ref(job)}/")

    def cancel(self, job: str | dict[str, Any]) -> Job:
        return self._http.post(f"/api/jobs/{job_ref(job)}/cancel/")

    def resume(self, job: str | dict[str, Any], *, force: bool = False) -> Job:
        """Queue a stopped job again; kinds that can go on from what is done do so (a run), the others start over."""
        return self._http.post(f"/api/jobs/{job_ref(job)}/resume/", {"force": force})

    def restart(self, job: str | dict[str, Any], *, force: bool = False) -> Job:
        return self._http.post(f"/api/jobs/{job_ref(job)}/restart/", {"force": force})

    def wait(
        self,
        job: str | dict[str, Any],
        *,
        progress: bool = True,
        poll_interval: float = 1.0,
        timeout: float | None = None,
        raise_on_failure: bool = True,
    ) -> Job:
        """Wait until the job has ended, with a progress bar; raises JobFailed if it failed or was cancelled."""
        ref = job_ref(job)
        return wait_for(
            lambda: self._http.get(f"/api/jobs/{ref}/"),
            progress=progress,
            poll_interval=poll_interval,
            timeout=timeout,
            raise_on_failure=raise_on_failure,
        )
