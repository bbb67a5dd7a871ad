"""Verifier configurations (the rule-based checker, LLM judges, cascades), verification runs (start, follow with a
progress bar, cancel, resume, restart) and selections (verdicts turned into an annotation project)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ._http import Http
from .errors import NotFound
from .jobs import Jobs, wait_for
from .types import Run, VerifierConfig


class Verifiers:
    def __init__(self, http: Http):
        self._http = http

    def list(self) -> builtins.list[VerifierConfig]:
        return self._http.all("/api/grading/verifiers/")

    def get(self, verifier: int | str) -> VerifierConfig:
        """A configuration by id or by name."""
        if isinstance(verifier, int):
            return self._http.get(f"/api/grading/verifiers/{verifier}/")
        for config in self.list():
            if config["name"] == verifier:
                return config
        raise NotFound(f"no verifier configuration is named {verifier!r}", status_code=404)

    def create(self, name: str, kind: str = "rule", **fields: Any) -> VerifierConfig:
        """A new configuration: kind "rule"; "judge" with base_url, model and api_key_env (the *name* of the server's
        environment variable holding the key; a key itself is refused); or "cascade" with cascade_judge and
        cascade_sample_rate."""
        return self._http.post("/api/grading/verifiers/", {"name": name, "kind": kind, **fields})

    def update(self, verifier_id: int, **fields: Any) -> VerifierConfig:
        return self._http.patch(f"/api/grading/verifiers/{verifier_id}/", fields)

    def delete(self, verifier_id: int) -> None:
        """Delete a configuration that has no verdicts or runs (Conflict otherwise)."""
        self._http.delete(f"/api/grading/verifiers/{verifier_id}/")

    def id_of(self, verifier: int | str) -> int:
        return verifier if isinstance(verifier, int) else int(self.get(verifier)["id"])


class Runs:
    def __init__(self, http: Http, verifiers: Verifiers):
        self._http = http
        self._verifiers = verifiers

    def start(
        self,
        verifier: int | str,
        *,
        dataset: int | None = None,
        project: int | None = None,
        answer_types: Sequence[str] = (),
        domains: Sequence[str] = (),
        models: Sequence[str] = (),
        chunk_size: int = 100,
        options: dict[str, Any] | None = None,
        follow: bool = False,
        progress: bool = True,
        timeout: float | None = None,
    ) -> Run:
        """Run a verifier (id or name) over a dataset's or a project's completions, optionally narrowed; with
        `follow`, wait for the end with a progress bar."""
        run = self._http.post(
            "/api/grading/runs/",
            {
                "verifier": self._verifiers.id_of(verifier),
                "dataset": dataset,
                "project": project,
                "answer_types": list(answer_types),
                "domains": list(domains),
                "models": list(models),
                "chunk_size": chunk_size,
                "options": options or {},
            },
        )
        return self.follow(run["id"], progress=progress, timeout=timeout) if follow else run

    def list(
        self,
        *,
        status: str | None = None,
        verifier: int | None = None,
        dataset: int | None = None,
        project: int | None = None,
    ) -> builtins.list[Run]:
        """Runs, newest first."""
        return self._http.all("/api/grading/runs/", status=status, verifier=verifier, dataset=dataset, project=project)

    def get(self, run_id: int) -> Run:
        """One run with its progress and counts; a cascade's run adds its per-stage figures under "cascade"."""
        return self._http.get(f"/api/grading/runs/{run_id}/")

    def follow(
        self,
        run_id: int,
        *,
        progress: bool = True,
        poll_interval: float = 1.0,
        timeout: float | None = None,
        raise_on_failure: bool = True,
    ) -> Run:
        """Wait until the run has ended, with a progress bar of completions verified; JobFailed if it failed (a
        failed run can be resumed: it goes on from what is verified)."""
        return wait_for(
            lambda: self._http.get(f"/api/grading/runs/{run_id}/"),
            progress=progress,
            poll_interval=poll_interval,
            timeout=timeout,
            raise_on_failure=raise_on_failure,
            unit="completion",
        )

    def cancel(self, run_id: int) -> Run:
        return self._http.post(f"/api/grading/runs/{run_id}/cancel/")

    def resume(self, run_id: int, *, force: bool = False, follow: bool = False, progress: bool = True) -> Run:
        """Queue a failed or cancelled run again; it verifies only what has no usable verdict yet."""
        run = self._http.post(f"/api/grading/runs/{run_id}/resume/", {"force": force})
        return self.follow(run_id, progress=progress) if follow else run

    def restart(self, run_id: int, *, force: bool = False, follow: bool = False, progress: bool = True) -> Run:
        """Verify the run's whole scope again."""
        run = self._http.post(f"/api/grading/runs/{run_id}/restart/", {"force": force})
        return self.follow(run_id, progress=progress) if follow else run


class Selections:
    def __init__(self, http: Http, jobs: Jobs):
        self._http = http
        self._jobs = jobs

    def create(
        self,
        dataset: str,
        strategy: str,
        verifiers: Sequence[str],
        *,
        wait: bool = True,
        progress: bool = True,
        **options: Any,
    ) -> dict[str, Any]:
        """Pick completions by their verdicts and make an annotation project of them: strategy "verifybench"
        (per question `per_side` judged correct and incorrect), "verifybench-hard" (where verifiers disagree,
        `target` of them) or "cascade" (what a cascade left to humans, `routes`). Options: seed, target, per_side,
        min_minority, strata, answer_types, domains, models, name, labels_per_item, verdict_visibility.

        Returns the selection's report with `project_id`; with `wait`, once the project's items exist."""
        created = self._http.post(
            "/api/grading/selections/",
            {"dataset": dataset, "strategy": strategy, "verifiers": list(verifiers), **options},
        )
        setup = created.get("setup_job")
        if wait and setup:
            created["setup_job"] = self._jobs.wait(setup, progress=progress)
            created["preparing"] = False
        return created

    def list(self) -> builtins.list[dict[str, Any]]:
        """Selections, newest first, without their reports."""
        return self._http.all("/api/grading/selections/")

    def get(self, selection_id: int) -> dict[str, Any]:
        """One selection with its full report (what was picked, and why)."""
        return self._http.get(f"/api/grading/selections/{selection_id}/")
