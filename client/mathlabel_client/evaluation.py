"""Evaluation: verifiers and judges against the final human labels (meta-evaluation), and models by Pass@k, G-Pass@k
and mG-Pass@k; as the API's JSON, or as pandas DataFrames."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from . import _optional
from ._http import Http


class Evaluation:
    def __init__(self, http: Http):
        self._http = http

    def meta_eval(self, project_id: int, verifiers: Sequence[str] | None = None) -> dict[str, Any]:
        """Each verifier (by name; every one with verdicts on the project when none is given) scored against the
        project's final labels: per answer class and model, TPR/TNR/PPV/NPV, macro-F1, coverage, agreement."""
        return self._http.get(f"/api/projects/{project_id}/meta-eval/", verifier=list(verifiers or []) or None)

    def meta_eval_frame(self, project_id: int, verifiers: Sequence[str] | None = None) -> Any:
        """The meta-evaluation as a DataFrame, one row per verifier and scope (overall, answer class, answer type,
        model, cascade stage, agreement with another verifier), as the CSV download has it."""
        pandas = _optional.pandas()
        response = self._http.request(
            "GET",
            f"/api/projects/{project_id}/meta-eval/",
            params={"verifier": list(verifiers or []) or None, "format": "csv"},
            headers={"Accept": "text/csv"},
        )
        return pandas.read_csv(io.StringIO(response.text), keep_default_na=False, na_values=[""])

    def model_eval(
        self,
        dataset_id: int,
        source: str,
        *,
        k: Sequence[int] | None = None,
        tau: Sequence[float | str] | None = None,
        bootstrap: int | None = None,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """Accuracy, greedy accuracy, Pass@k, G-Pass@k_tau and mG-Pass@k per model, with 95% bootstrap intervals.
        `source` is "project:<id>" (final human labels) or "verifier:<name>" (its verdicts)."""
        return self._http.get(
            f"/api/datasets/{dataset_id}/model-eval/",
            source=source,
            k=[str(value) for value in k] if k else None,
            tau=[str(value) for value in tau] if tau else None,
            bootstrap=bootstrap,
            seed=seed,
        )

    def model_eval_frame(self, dataset_id: int, source: str, **options: Any) -> Any:
        """The model evaluation as a DataFrame: one row per model, a column per figure, and `<figure> low` and
        `<figure> high` columns for its interval."""
        pandas = _optional.pandas()
        result = self.model_eval(dataset_id, source, **options)
        rows = []
        for model, figures in result["models"].items():
            row: dict[str, Any] = {"model": model}
            for name, value in figures.items():
                if name == "samples_per_question":
                    row["samples_min"], row["samples_max"] = value.get("min"), value.get("max")
                elif name == "ci":
                    for figure, interval in value.items():
                        row[f"{figure} low"], row[f"{figure} high"] = interval if interval else (None, None)
                elif name == "questions":
                    row.update({f"{figure} questions": count for figure, count in value.items()})
                else:
                    row[name] = value
            rows.append(row)
        frame = pandas.DataFrame(rows)
        frame.attrs["warnings"] = list(result.get("warnings", []))
        return frame
