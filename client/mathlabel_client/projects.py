"""Annotation projects: create (the server makes the items in a job, followed with a progress bar), settings and
guidelines, members and invitation links, progress, conflicts, gold items and the annotator model; and the
annotator's side (claim the next task, submit a label, skip) for scripted annotation."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ._http import Http
from .jobs import Jobs
from .types import Invitation, Member, Project


class Projects:
    def __init__(self, http: Http, jobs: Jobs):
        self._http = http
        self._jobs = jobs

    def list(self) -> builtins.list[Project]:
        """The projects this account sees (researchers: every one)."""
        return self._http.all("/api/projects/")

    def get(self, project_id: int) -> Project:
        """A project with all its settings."""
        return self._http.get(f"/api/projects/{project_id}/")

    def create(
        self,
        name: str,
        dataset: str,
        *,
        kind: str = "correctness",
        completion_ids: Sequence[int] | None = None,
        question_ids: Sequence[int] | None = None,
        seed: int | None = None,
        wait: bool = True,
        progress: bool = True,
        **settings: Any,
    ) -> Project:
        """A project over the dataset named `dataset`: every completion (kind "correctness") or question ("answer_type")
        it has, or only the ids given. Settings (labels_per_item, guidelines, aggregation, ...) may be given here.
        The items are made by a background job; with `wait`, this returns once they exist."""
        body: dict[str, Any] = {"name": name, "dataset": dataset, "kind": kind, **settings}
        if completion_ids is not None:
            body["completion_ids"] = list(completion_ids)
        if question_ids is not None:
            body["question_ids"] = list(question_ids)
        if seed is not None:
            body["seed"] = seed
        created = self._http.post("/api/projects/", body)
        if not wait:
            return created["project"]
        self._jobs.wait(created["job"], progress=progress)
        return self.get(created["project"]["id"])

    def update(self, project_id: int, **settings: Any) -> Project:
        """Change settings and guidelines (a new guidelines text is a new version); refused with the reason when the
        items' states do not allow a change. Every change is in the project's log."""
        return self._http.patch(f"/api/projects/{project_id}/", settings)

    def progress(self, project_id: int) -> dict[str, Any]:
        """Counts by state and resolution, agreement figures and the per-annotator table."""
        return self._http.get(f"/api/projects/{project_id}/progress/")

    def conflicts(self, project_id: int) -> builtins.list[dict[str, Any]]:
        """Items waiting for adjudication (adjudicators)."""
        return self._http.all(f"/api/projects/{project_id}/conflicts/")

    # -- members and invitations

    def members(self, project_id: int, *, include_removed: bool = False) -> builtins.list[Member]:
        return self._http.get(f"/api/projects/{project_id}/members/", include_removed="1" if include_removed else None)

    def add_member(self, project_id: int, username: str, role: str = "annotator") -> builtins.list[Member]:
        """Add someone who has the role (annotator or adjudicator); returns the members."""
        return self._http.post(f"/api/projects/{project_id}/members/", {"username": username, "role": role})

    def remove_member(self, project_id: int, member_id: int) -> None:
        """End a membership: no new tasks, live leases end, the labels given stay and count."""
        self._http.delete(f"/api/projects/{project_id}/members/{member_id}/")

    def invitations(self, project_id: int) -> builtins.list[Invitation]:
        return self._http.get(f"/api/projects/{project_id}/invitations/")

    def invite(self, project_id: int, role: str = "annotator", *, days: int = 7) -> Invitation:
        """A one-time invitation link (`url`, shown only in this answer) that grants the role."""
        return self._http.post(f"/api/projects/{project_id}/invitations/", {"role": role, "days": days})

    def revoke_invitation(self, project_id: int, invitation_id: int) -> Invitation:
        return self._http.delete(f"/api/projects/{project_id}/invitations/{invitation_id}/")

    # -- gold items and the annotator model

    def mark_gold(self, project_id: int, item_id: int, value: Any) -> dict[str, Any]:
        """Make an unlabeled item a gold item with its known answer."""
        return self._http.post(f"/api/projects/{project_id}/gold/", {"item_id": item_id, "value": value})

    def annotator_model(self, project_id: int) -> dict[str, Any]:
        """The latest fit of the annotator model: per annotator, estimated accuracy overall and per answer type."""
        return self._http.get(f"/api/projects/{project_id}/annotator-model/")

    def refit_annotator_model(self, project_id: int, *, wait: bool = True, progress: bool = True) -> dict[str, Any]:
        """Queue a refit of the annotator model (the one already queued or running is returned instead)."""
        queued = self._http.post(f"/api/projects/{project_id}/annotator-model/")
        if wait:
            self._jobs.wait(queued["job"], progress=progress)
            return self.annotator_model(project_id)
        return queued


class Tasks:
    """What an annotator does through the API: claim the next item, label it, skip it."""

    def __init__(self, http: Http):
        self._http = http

    def next(self, project_id: int) -> dict[str, Any] | None:
        """Claim the next item to label (a lease); None when nothing is left for you."""
        return self._http.post(f"/api/projects/{project_id}/next-task/")

    def get(self, task_id: int) -> dict[str, Any]:
        return self._http.get(f"/api/tasks/{task_id}/")

    def submit(
        self,
        task_id: int,
        value: Any = None,
        *,
        note: str = "",
        unsuitable: bool = False,
        unsuitable_reason: str = "",
        claim_next: bool = False,
    ) -> dict[str, Any]:
        """Label a task; with `claim_next` the answer's `next_task` is your next one (None when nothing is left)."""
        return self._http.post(
            f"/api/tasks/{task_id}/submit/",
            {
                "value": value,
                "note": note,
                "unsuitable": unsuitable,
                "unsuitable_reason": unsuitable_reason,
                "next": claim_next,
            },
        )

    def skip(self, task_id: int) -> dict[str, Any]:
        return self._http.post(f"/api/tasks/{task_id}/skip/")
