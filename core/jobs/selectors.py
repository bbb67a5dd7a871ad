"""Queries over the jobs of every registered kind."""

from __future__ import annotations

from . import runner


def recent_jobs(limit: int, kind_name: str = "", status: str = "", user=None) -> list:
    """The newest `limit` jobs across kinds (or of one kind), optionally in one state, newest first; only those of
    `user`'s workspaces when a user is given."""
    jobs = []
    for kind in runner.kinds():
        if kind_name and kind.name != kind_name:
            continue
        rows = runner.visible_jobs(kind, user) if user is not None else kind.model.objects.all()
        rows = rows.select_related("created_by").order_by("-created_at", "-id")
        if status:
            rows = rows.filter(status=status)
        jobs.extend(rows[:limit])
    jobs.sort(key=lambda job: job.created_at, reverse=True)
    return jobs[:limit]
