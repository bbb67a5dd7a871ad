"""A project's items: filter them (the item browser's keyset pages, followed lazily), read one with every label and
its history, decide it, and act on many at once (exclude, re-open, mark gold, re-prioritise)."""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import _optional
from ._http import Http
from .types import BulkResult, ItemRow

FILTERS = (
    "state",
    "resolution",
    "disagreement",
    "model",
    "answer_type",
    "verifier",
    "verdict",
    "annotator",
    "gold",
    "q",
)


def _filters(given: Mapping[str, Any]) -> dict[str, str]:
    unknown = set(given) - set(FILTERS)
    if unknown:
        raise TypeError(f"unknown item filter {sorted(unknown)[0]!r}; filters: {', '.join(FILTERS)}")
    cleaned = {}
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "yes" if value else "no"
        cleaned[name] = str(value)
    return cleaned


class Items:
    def __init__(self, http: Http):
        self._http = http

    def filter(
        self, project_id: int, *, sort: str | None = None, page_size: int = 200, **filters: Any
    ) -> Iterator[ItemRow]:
        """Every item of the project that matches, one keyset page at a time as you iterate. Filters: state,
        resolution, disagreement (True/False), model, answer_type, verifier (id) with verdict, annotator (user id),
        gold (True/False), q (text search); `sort` as the item browser sorts."""
        params = {**_filters(filters), "sort": sort, "page_size": page_size}
        return self._http.each(f"/api/projects/{project_id}/items/", **params)

    def to_pandas(self, project_id: int, *, sort: str | None = None, **filters: Any) -> Any:
        """The matching items as a DataFrame (one row per item; the summary's fields as columns)."""
        pandas = _optional.pandas()
        rows = []
        for item in self.filter(project_id, sort=sort, **filters):
            row = {key: value for key, value in item.items() if key != "summary"}
            row.update({f"summary_{key}": value for key, value in (item.get("summary") or {}).items()})
            rows.append(row)
        return pandas.DataFrame(rows)

    def get(self, item_id: int) -> dict[str, Any]:
        """An item with every label, note and verdict, side by side."""
        return self._http.get(f"/api/items/{item_id}/")

    def history(self, item_id: int) -> builtins.list[dict[str, Any]]:
        """The item's append-only history: every label, change, decision and action, with who and when."""
        return self._http.get(f"/api/items/{item_id}/history/")

    def adjudicate(
        self, item_id: int, value: Any = None, *, rationale: str, unsuitable: bool = False
    ) -> dict[str, Any]:
        """Decide an item that needs adjudication; the rationale is required and kept in its history."""
        return self._http.post(
            f"/api/items/{item_id}/adjudicate/", {"value": value, "unsuitable": unsuitable, "rationale": rationale}
        )

    def override(self, item_id: int, value: Any = None, *, rationale: str, unsuitable: bool = False) -> dict[str, Any]:
        """Admins: change a resolved item's final label, with a rationale."""
        return self._http.post(
            f"/api/items/{item_id}/override/", {"value": value, "unsuitable": unsuitable, "rationale": rationale}
        )

    def bulk(
        self,
        project_id: int,
        action: str,
        *,
        item_ids: Sequence[int] | None = None,
        filters: Mapping[str, Any] | None = None,
        rationale: str = "",
        value: Any = None,
        change: int = 0,
    ) -> BulkResult:
        """Apply one action ("exclude", "reopen", "mark_gold", "priority") to the items given, or to every item the
        filters match (at most 2,000 per call). Items it does not fit are left alone and counted by reason."""
        body: dict[str, Any] = {"action": action, "rationale": rationale, "change": change}
        if value is not None:
            body["value"] = value
        if filters is not None:
            body.update(all_matching=True, filters=_filters(filters))
        else:
            body["item_ids"] = list(item_ids or [])
        return self._http.post(f"/api/projects/{project_id}/items/bulk/", body)

    def exclude(
        self,
        project_id: int,
        item_ids: Sequence[int] | None = None,
        *,
        rationale: str,
        filters: Mapping[str, Any] | None = None,
    ) -> BulkResult:
        """Take items out of the workflow and of every export."""
        return self.bulk(project_id, "exclude", item_ids=item_ids, filters=filters, rationale=rationale)

    def reopen(
        self,
        project_id: int,
        item_ids: Sequence[int] | None = None,
        *,
        rationale: str,
        filters: Mapping[str, Any] | None = None,
    ) -> BulkResult:
        """Send resolved items back for one more label; their final value is set aside until they settle again."""
        return self.bulk(project_id, "reopen", item_ids=item_ids, filters=filters, rationale=rationale)

    def mark_gold(
        self,
        project_id: int,
        item_ids: Sequence[int] | None = None,
        *,
        value: Any,
        filters: Mapping[str, Any] | None = None,
    ) -> BulkResult:
        """Make unlabeled items gold with the known answer `value`."""
        return self.bulk(project_id, "mark_gold", item_ids=item_ids, filters=filters, value=value)

    def reprioritise(
        self,
        project_id: int,
        change: int,
        item_ids: Sequence[int] | None = None,
        *,
        filters: Mapping[str, Any] | None = None,
    ) -> BulkResult:
        """Add `change` (negative to lower) to the items' priority: higher priority is labeled first."""
        return self.bulk(project_id, "priority", item_ids=item_ids, filters=filters, change=change)
