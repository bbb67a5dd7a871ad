"""Evaluation pages for researchers: verifiers against human labels (meta-evaluation) and model stability
(Pass@k, G-Pass@k_tau, mG-Pass@k) with a G-Pass@k-versus-tau chart drawn as inline SVG on the server."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.models import AnnotationProject
from core import roles
from core.metrics import passk
from core.metrics.judge_intervals import FIGURES
from core.taxonomy import COARSE_CLASSES, coarse_label
from reports import evaluation, selectors
from verifybench.label_rules import CORRECTNESS

from . import access, views_dashboard
from .charts import LineChart, Series, Tick

SERIES_COLORS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7b83", "#57606a")


def _require_researcher(request) -> None:
    if not roles.is_researcher(request.user):
        raise PermissionDenied("Only researchers and admins see evaluations.")


# ---------------------------------------------------------------- meta-evaluation


def _intervals(report: evaluation.VerifierReport, kind: str, name: str | None = None) -> dict[str, Any]:
    """{figure: {"low", "high"}} of one scope, only the figures that have an interval."""
    scopes = report.intervals or {}
    entry = scopes.get(kind) if name is None else scopes.get(kind, {}).get(name)
    if not entry:
        return {}
    return {
        figure: {"low": entry[figure]["low"], "high": entry[figure]["high"]}
        for figure in FIGURES
        if entry[figure]["low"] is not None
    }


def _binary_rows(report: evaluation.VerifierReport) -> list[dict[str, Any]]:
    rows = [
        {
            "scope": "All",
            "figures": report.evaluation.overall.as_dict(),
            "overall": True,
            "ci": _intervals(report, "overall"),
        }
    ]
    rows += [
        {"scope": model, "figures": figures.as_dict(), "overall": False, "ci": _intervals(report, "by_model", model)}
        for model, figures in sorted(report.evaluation.by_model.items())
    ]
    return rows


def _source_rows(report: evaluation.VerifierReport) -> list[dict[str, Any]]:
    return [
        {
            "name": source or "(none)",
            "questions": entry["questions"],
            "figures": {figure: entry[figure]["value"] for figure in FIGURES},
            "ci": _intervals(report, "by_source", source),
        }
        for source, entry in (report.intervals or {}).get("by_source", {}).items()
    ]


def _guidance(result: evaluation.MetaEvaluation, kind: str, name: str) -> dict[str, Any] | None:
    """The sample-size guidance of a scope when its widest accuracy interval is wider than the target."""
    if result.sample_size is None:
        return None
    entry = result.sample_size[kind].get(name)
    if not entry or not entry["more_items"]:
        return None
    return entry


def _comparison_blocks(result: evaluation.MetaEvaluation) -> list[dict[str, Any]]:
    blocks = []
    for comparison in result.comparisons:
        rows = []
        for kind, name, entry in evaluation.comparison_scopes(comparison):
            rows.append(
                {
                    "scope": "All"
                    if kind == "overall"
                    else (coarse_label(name) if kind == "by_answer_class" else name),
                    "kind": kind,
                    "entry": entry,
                    "accuracy": entry["accuracy"],
                    "macro_f1": entry["macro_f1"],
                }
            )
        blocks.append({"comparison": comparison, "rows": rows})
    return blocks


def _comparison_matrix(result: evaluation.MetaEvaluation) -> list[dict[str, Any]]:
    """Rows and columns in the verifiers' order: the row's accuracy minus the column's, overall, with its paired
    interval and McNemar's p-value."""
    if len(result.reports) < 2:
        return []
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for comparison in result.comparisons:
        overall = comparison.get("overall")
        if overall is None:
            continue
        accuracy = overall["accuracy"]
        forward = {"difference": accuracy["difference"], "low": accuracy["low"], "high": accuracy["high"]}
        backward = {
            "difference": None if accuracy["difference"] is None else -accuracy["difference"],
            "low": None if accuracy["high"] is None else -accuracy["high"],
            "high": None if accuracy["low"] is None else -accuracy["low"],
        }
        for cell in (forward, backward):
            cell["p"] = overall["mcnemar_p"]
            cell["significant"] = cell["low"] is not None and (cell["low"] > 0 or cell["high"] < 0)
        cells[(comparison["first"], comparison["second"])] = forward
        cells[(comparison["second"], comparison["first"])] = backward
    names = result.verifier_names
    return [{"name": row, "cells": [cells.get((row, column)) for column in names]} for row in names]


def _class_rows(report: evaluation.VerifierReport) -> list[dict[str, Any]]:
    by_class = report.evaluation.by_answer_class
    return [
        {
            "letter": letter,
            "name": name,
            "n": by_class[letter].n if letter in by_class else 0,
            "accuracy": by_class[letter].accuracy if letter in by_class else None,
            "inconclusive_rate": by_class[letter].inconclusive_rate if letter in by_class else None,
            "decided_coverage": by_class[letter].decided_coverage if letter in by_class else None,
            "decided_precision": by_class[letter].decided_precision if letter in by_class else None,
            "macro_f1": by_class[letter].macro_f1 if letter in by_class else None,
            "ci": _intervals(report, "by_answer_class", letter),
        }
        for letter, name in COARSE_CLASSES.items()
    ]


def _type_rows(report: evaluation.VerifierReport) -> list[dict[str, Any]]:
    return [
        {"code": code, **figures.as_dict(), "ci": _intervals(report, "by_answer_type", code)}
        for code, figures in sorted(report.evaluation.by_answer_type.items())
    ]


def _agreement_rows(result: evaluation.MetaEvaluation) -> list[dict[str, Any]]:
    if not result.agreement:
        return []
    names = result.verifier_names
    return [{"name": first, "cells": [result.agreement[first][second] for second in names]} for first in names]


@login_required
@require_GET
def meta_eval_page(request, project_id: int):
    project = access.project(request, project_id)
    chosen = [name for name in request.GET.getlist("verifier") if name.strip()]
    candidates = selectors.verifiers_with_verdicts_on_project(project)
    error = None
    result = None
    try:
        result = evaluation.meta_evaluate(project, chosen, evaluation.Uncertainty.parse(request.GET))
    except evaluation.EvaluationError as exc:
        error = str(exc)
    if result is not None and request.GET.get("format") == "csv":
        response = HttpResponse(evaluation.meta_evaluation_csv(result), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="meta-eval-project-{project.pk}.csv"'
        return response
    reports = []
    if result is not None:
        reports = [
            {
                "report": report,
                "class_rows": _class_rows(report),
                "type_rows": _type_rows(report),
                "binary_rows": _binary_rows(report),
                "source_rows": _source_rows(report),
                "missing_shown": report.missing_item_ids[: evaluation.MISSING_IDS_SHOWN],
            }
            for report in result.reports
        ]
        for block in reports:
            for row in block["class_rows"]:
                row["guidance"] = _guidance(result, "by_answer_class", row["letter"])
            for row in block["type_rows"]:
                row["guidance"] = _guidance(result, "by_answer_type", row["code"])
    csv_query = request.GET.copy()
    csv_query["format"] = "csv"
    return render(
        request,
        "evaluation/meta_eval.html",
        {
            "project": project,
            "candidates": candidates,
            "chosen": set(chosen) if chosen else {verifier.name for verifier in candidates},
            "result": result,
            "reports": reports,
            "agreement_rows": _agreement_rows(result) if result is not None else [],
            "comparison_blocks": _comparison_blocks(result) if result is not None else [],
            "comparison_matrix": _comparison_matrix(result) if result is not None else [],
            "wide_scopes": _wide_scopes(result) if result is not None else [],
            "csv_query": csv_query.urlencode(),
            "error": error,
        },
        status=400 if error else 200,
    )


def _wide_scopes(result: evaluation.MetaEvaluation) -> list[dict[str, Any]]:
    """Answer classes and types whose accuracy intervals are wider than the target, with the labels they need."""
    if result.sample_size is None:
        return []
    rows = []
    for kind in ("by_answer_class", "by_answer_type"):
        for name, entry in result.sample_size[kind].items():
            if entry["more_items"]:
                label = coarse_label(name) if kind == "by_answer_class" and name in COARSE_CLASSES else name
                rows.append({"name": label, **entry})
    return rows


def meta_eval_section(project: AnnotationProject) -> dict:
    """Dashboard section: one summary row per verifier with verdicts on a correctness project."""
    if project.kind != CORRECTNESS:
        return {"applies": False}
    try:
        result = evaluation.meta_evaluate(project)
    except evaluation.EvaluationError as exc:
        return {"applies": True, "error": str(exc), "rows": []}
    return {
        "applies": True,
        "labeled_items": result.labeled_items,
        "rows": [
            {
                "name": report.verifier.name,
                "kind": report.verifier.get_kind_display(),
                "coverage": report.coverage,
                "judged_items": report.judged_items,
                "accuracy": report.evaluation.overall.accuracy,
                "mean_class_accuracy": report.evaluation.mean_class_accuracy,
                "macro_f1": report.evaluation.overall.macro_f1,
                "inconclusive_rate": report.evaluation.overall.inconclusive_rate,
                "decided_precision": report.evaluation.overall.decided_precision,
            }
            for report in result.reports
        ],
    }


views_dashboard.register_section("evaluation/dashboard_section.html", meta_eval_section)


# ---------------------------------------------------------------- model evaluation and its chart


def gpass_chart(entry: dict[str, Any], ks: list[int], taus: list[str]) -> LineChart:
    """G-Pass@k_tau (y, 0-100 %) against tau (x, 0-1) for one model: one line per k, a point per tau with a value."""
    chart = LineChart()
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        y = round(chart.plot_bottom - fraction * chart.plot_height, 2)
        chart.y_ticks.append(Tick(y, f"{100 * fraction:g}"))
    ordered = sorted(taus, key=passk.tau_fraction)
    for tau in ordered:
        x = round(chart.plot_left + float(passk.tau_fraction(tau)) * chart.plot_width, 2)
        chart.x_ticks.append(Tick(x, tau))
    for index, k in enumerate(ks):
        points = []
        for tau in ordered:
            value = entry.get(passk.g_pass_key(k, tau))
            if value is None:
                continue
            x = round(chart.plot_left + float(passk.tau_fraction(tau)) * chart.plot_width, 2)
            y = round(chart.plot_bottom - value * chart.plot_height, 2)
            points.append((x, y, f"G-Pass@{k} at tau {tau}: {100 * value:.1f}%"))
        chart.series.append(
            Series(
                label=f"k = {k}",
                color=SERIES_COLORS[index % len(SERIES_COLORS)],
                legend_y=chart.plot_top + 8 + 20 * index,
                points=points,
            )
        )
    return chart


def _percent(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _metric_rows(entry: dict[str, Any], ks: list[int], taus: list[str], *, g_pass: bool = True) -> list[dict[str, Any]]:
    """Table rows of one model, values and interval ends in percent; Pass@k only when `g_pass` is off."""
    rows = [
        {"label": "Accuracy", "value": entry["accuracy"], "ci": None, "questions": entry["n_questions"]},
        {"label": "Greedy accuracy", "value": entry["greedy_accuracy"], "ci": None, "questions": None},
    ]
    for k in ks:
        keys = [(f"Pass@{k}", passk.pass_key(k))]
        if g_pass:
            keys += [(f"G-Pass@{k} tau={tau}", passk.g_pass_key(k, tau)) for tau in taus]
            keys.append((f"mG-Pass@{k}", passk.mg_pass_key(k)))
        for label, key in keys:
            rows.append(
                {
                    "label": label,
                    "key": key,
                    "value": entry.get(key),
                    "ci": entry["ci"].get(key),
                    "questions": entry["questions"].get(key),
                }
            )
    for row in rows:
        row["percent"] = _percent(row["value"])
        row["ci_percent"] = [100 * end for end in row["ci"]] if row["ci"] else None
    return rows


def _split_values(values: list[str]) -> list[str]:
    """Form fields may hold several values, "4 8 16" or "4,8,16"; query strings may repeat the field."""
    return [part for value in values for part in re.split(r"[\s,]+", value.strip()) if part]


@login_required
@require_GET
def model_eval_page(request, dataset_id: int):
    dataset = access.dataset(request, dataset_id)
    projects = selectors.correctness_projects_of_dataset(dataset)
    verifiers = selectors.verifiers_with_verdicts_on_dataset(dataset)
    sources = [(f"project:{project.pk}", f"Human labels: {project.name}") for project in projects]
    sources += [(f"verifier:{verifier.name}", f"Verdicts: {verifier.name}") for verifier in verifiers]

    source_spec = request.GET.get("source") or (sources[0][0] if sources else "")
    k_given = _split_values(request.GET.getlist("k"))
    tau_text = _split_values(request.GET.getlist("tau")) or list(evaluation.DEFAULT_TAUS)
    context: dict[str, Any] = {
        "dataset": dataset,
        "sources": sources,
        "source_spec": source_spec,
        "k_value": " ".join(k_given),
        "k_given": bool(k_given),
        "k_choice": None,
        "recommended_per_k": passk.RECOMMENDED_SAMPLES_PER_K,
        "tau_value": " ".join(tau_text),
        "models": [],
        "warnings": [],
        "error": None,
    }
    if source_spec:
        try:
            source = evaluation.parse_source(source_spec)
            taus = evaluation.parse_taus(tau_text)
            counts = evaluation.sample_counts(dataset, source)
            # Without k values from the form, they are chosen to fit the samples each question has.
            choice = evaluation.choose_ks_from_counts(counts.question_counts)
            if k_given:
                ks = evaluation.parse_ks(k_given)
            else:
                ks = choice.ks if choice is not None else list(evaluation.DEFAULT_KS)
            result = evaluation.evaluate_counts(counts, ks, taus)
        except evaluation.EvaluationError as exc:
            context["error"] = str(exc)
        else:
            g_pass = choice is None or not choice.single_sample
            context["source"] = source
            context["k_choice"] = choice
            context["k_value"] = " ".join(str(k) for k in ks)
            context["warnings"] = result["warnings"]
            context["models"] = [
                {
                    "name": name,
                    "entry": entry,
                    "rows": _metric_rows(entry, ks, taus, g_pass=g_pass),
                    "chart": gpass_chart(entry, ks, taus) if g_pass else None,
                    "chart_id": f"gpass-chart-{index}",
                }
                for index, (name, entry) in enumerate(result["models"].items())
            ]
    return render(request, "evaluation/model_eval.html", context, status=400 if context["error"] else 200)
