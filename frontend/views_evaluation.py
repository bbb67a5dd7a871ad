"""Evaluation pages for researchers: verifiers against human labels (meta-evaluation) and model stability
(Pass@k, G-Pass@k_tau, mG-Pass@k) with a G-Pass@k-versus-tau chart drawn as inline SVG on the server."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.models import AnnotationProject
from core import roles
from core.metrics import passk
from core.taxonomy import COARSE_CLASSES
from reports import evaluation, selectors
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Dataset

from . import views_dashboard
from .charts import LineChart, Series, Tick

SERIES_COLORS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7b83", "#57606a")


def _require_researcher(request) -> None:
    if not roles.is_researcher(request.user):
        raise PermissionDenied("Only researchers and admins see evaluations.")


# ---------------------------------------------------------------- meta-evaluation


def _binary_rows(report: evaluation.VerifierReport) -> list[dict[str, Any]]:
    rows = [{"scope": "All", "figures": report.evaluation.overall.as_dict(), "overall": True}]
    rows += [
        {"scope": model, "figures": figures.as_dict(), "overall": False}
        for model, figures in sorted(report.evaluation.by_model.items())
    ]
    return rows


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
        }
        for letter, name in COARSE_CLASSES.items()
    ]


def _type_rows(report: evaluation.VerifierReport) -> list[dict[str, Any]]:
    return [{"code": code, **figures.as_dict()} for code, figures in sorted(report.evaluation.by_answer_type.items())]


def _agreement_rows(result: evaluation.MetaEvaluation) -> list[dict[str, Any]]:
    if not result.agreement:
        return []
    names = result.verifier_names
    return [{"name": first, "cells": [result.agreement[first][second] for second in names]} for first in names]


@login_required
@require_GET
def meta_eval_page(request, project_id: int):
    _require_researcher(request)
    project = get_object_or_404(AnnotationProject.objects.select_related("dataset"), pk=project_id)
    chosen = [name for name in request.GET.getlist("verifier") if name.strip()]
    candidates = selectors.verifiers_with_verdicts_on_project(project)
    error = None
    result = None
    try:
        result = evaluation.meta_evaluate(project, chosen)
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
                "missing_shown": report.missing_item_ids[: evaluation.MISSING_IDS_SHOWN],
            }
            for report in result.reports
        ]
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
            "csv_query": csv_query.urlencode(),
            "error": error,
        },
        status=400 if error else 200,
    )


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
    _require_researcher(request)
    dataset = get_object_or_404(Dataset, pk=dataset_id)
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
