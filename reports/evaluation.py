"""Evaluation from the database: verifiers and judges against final human labels (meta-evaluation), and
models by Pass@k / G-Pass@k_tau / mG-Pass@k from human labels or verdicts.

The figures themselves come from the pure modules `core.metrics.judge_eval` and
`core.metrics.passk`; this module only gathers their input rows and reports what it left out.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotation import aggregates as annotation_aggregates
from annotation.models import AnnotationProject
from core.labels import InvalidValue
from core.metrics import judge_eval, judge_intervals, passk
from core.metrics import tallies as tally_figures
from core.taxonomy import COARSE_CLASSES, coarse_label
from grading.models import VerifierConfig
from grading.selectors import cascade_figures, final_label_items
from verifybench.label_rules import CORRECTNESS, CorrectnessRules
from verifybench.models import Dataset

from . import selectors

DEFAULT_KS = (4, 8, 16)
DEFAULT_TAUS = ("0.25", "0.5", "0.75", "1.0")
MISSING_IDS_SHOWN = 50


class EvaluationError(ValueError):
    """The request cannot be evaluated as asked (wrong project kind, unknown verifier, bad source); nothing changes."""


# ---------------------------------------------------------------- meta-evaluation of verifiers


@dataclass
class VerifierReport:
    """One verifier scored against the labeled items of a project."""

    verifier: VerifierConfig
    labeled_items: int
    evaluation: judge_eval.JudgeEvaluation
    missing_item_ids: list[int] = field(default_factory=list)  # the first MISSING_IDS_SHOWN of them
    cascade: dict[str, Any] | None = None
    """A cascade's per-stage figures on the labeled items (decided, coverage, precision, tokens, money)."""
    missing_count: int | None = None  # all of them; len(missing_item_ids) when not given
    intervals: dict[str, Any] | None = None
    """Each figure with its 95% interval, overall and per answer class, answer type, source and author model
    (`judge_intervals.scope_intervals` per scope)."""
    label_noise: dict[str, Any] | None = None
    """The figures expected when each final label is right only with its estimated probability."""

    @property
    def missing_verdicts(self) -> int:
        return len(self.missing_item_ids) if self.missing_count is None else self.missing_count

    @property
    def judged_items(self) -> int:
        return self.labeled_items - self.missing_verdicts

    @property
    def coverage(self) -> float | None:
        return self.judged_items / self.labeled_items if self.labeled_items else None

    @property
    def unclassified_items(self) -> int:
        """Judged items whose question has no coarse answer class: they count overall, not per class."""
        return self.evaluation.overall.n - sum(report.n for report in self.evaluation.by_answer_class.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "verifier": {"id": self.verifier.pk, "name": self.verifier.name, "kind": self.verifier.kind},
            "labeled_items": self.labeled_items,
            "judged_items": self.judged_items,
            "missing_verdicts": self.missing_verdicts,
            "missing_item_ids": self.missing_item_ids[:MISSING_IDS_SHOWN],
            "coverage": self.coverage,
            "unclassified_items": self.unclassified_items,
            **self.evaluation.as_dict(),
            **({"cascade": self.cascade} if self.cascade is not None else {}),
            **({"intervals": self.intervals} if self.intervals is not None else {}),
            **({"label_noise": self.label_noise} if self.label_noise is not None else {}),
        }


@dataclass
class MetaEvaluation:
    project: AnnotationProject
    labeled_items: int
    reports: list[VerifierReport]
    agreement: dict[str, dict[str, dict[str, Any]]] | None
    uncertainty: Uncertainty | None = None
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    """Per pair of verifiers (in the order asked for): the paired differences per scope (`judge_intervals.
    paired_comparison`) and plain sentences."""
    label_noise: dict[str, Any] | None = None
    sample_size: dict[str, Any] | None = None

    @property
    def verifier_names(self) -> list[str]:
        return [report.verifier.name for report in self.reports]

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": {"id": self.project.pk, "name": self.project.name, "dataset": self.project.dataset_id},
            "labeled_items": self.labeled_items,
            "verifiers": [report.as_dict() for report in self.reports],
            "agreement": self.agreement,
            **(
                {
                    "uncertainty": self.uncertainty.as_dict(),
                    "comparisons": self.comparisons,
                    "label_noise": self.label_noise,
                    "sample_size": self.sample_size,
                }
                if self.uncertainty is not None
                else {}
            ),
        }


@dataclass(frozen=True)
class Uncertainty:
    """How the intervals are computed: `resamples` bootstrap resamples of the questions (0: figures only, no
    intervals or comparisons), the seed, the target interval width of the sample-size guidance and the probability
    below which a final label counts as uncertain."""

    resamples: int = judge_intervals.RESAMPLES
    seed: int = 0
    target_width: float = judge_intervals.TARGET_WIDTH
    uncertain_below: float = judge_intervals.UNCERTAIN_BELOW

    def as_dict(self) -> dict[str, Any]:
        return {
            "resamples": self.resamples,
            "seed": self.seed,
            "confidence": judge_intervals.CONFIDENCE,
            "resampled_unit": "question",
            "exact_up_to_questions": judge_intervals.EXACT_QUESTIONS,
            "target_width": self.target_width,
            "uncertain_below": self.uncertain_below,
        }

    @classmethod
    def parse(cls, params: Mapping[str, Any]) -> Uncertainty:
        """From query parameters (`bootstrap`, `seed`, `target_width`, `uncertain_below`); EvaluationError for a
        bad value."""

        def number(name: str, default: float, kind: type, low: float, high: float) -> Any:
            text = params.get(name)
            if text is None or str(text).strip() == "":
                return default
            try:
                value = kind(str(text).strip())
            except ValueError:
                raise EvaluationError(f"{name} must be a number, got {text!r}") from None
            if not low <= value <= high:
                raise EvaluationError(f"{name} must be between {low:g} and {high:g}, got {text!r}")
            return value

        return cls(
            resamples=number("bootstrap", judge_intervals.RESAMPLES, int, 0, 10_000),
            seed=number("seed", 0, int, 0, 2**31 - 1),
            target_width=number("target_width", judge_intervals.TARGET_WIDTH, float, 0.001, 1),
            uncertain_below=number("uncertain_below", judge_intervals.UNCERTAIN_BELOW, float, 0.5, 1),
        )


def _correctness_project(project: AnnotationProject) -> None:
    if project.kind != CORRECTNESS:
        raise EvaluationError(
            f"project {project.pk} ({project.name}) is a {project.get_kind_display().lower()} project; "
            "meta-evaluation needs the final labels of a correctness project"
        )


def _human_label(row: dict[str, Any]) -> bool:
    try:
        return CorrectnessRules().clean(row["final_value"])
    except InvalidValue as error:
        raise EvaluationError(
            f"item {row['item_id']}: final value {row['final_value']!r} is not a correctness label"
        ) from error


def labeled_rows(project: AnnotationProject) -> list[dict[str, Any]]:
    """The project's final human labels with `human_correct` set; raises EvaluationError for a non-correctness project."""
    _correctness_project(project)
    rows = selectors.final_correctness_labels(project)
    for row in rows:
        row["human_correct"] = _human_label(row)
    return rows


def resolve_verifiers(names: Sequence[str]) -> list[VerifierConfig]:
    """VerifierConfigs by name, in the order given (repeats dropped); raises EvaluationError naming unknown ones."""
    wanted = list(dict.fromkeys(name.strip() for name in names if name and name.strip()))
    found = {verifier.name: verifier for verifier in VerifierConfig.objects.filter(name__in=wanted)}
    unknown = [name for name in wanted if name not in found]
    if unknown:
        raise EvaluationError(f"unknown verifier(s): {', '.join(unknown)}")
    return [found[name] for name in wanted]


def meta_evaluate(
    project: AnnotationProject,
    verifier_names: Sequence[str] | None = None,
    uncertainty: Uncertainty | None = None,
) -> MetaEvaluation:
    """Score verifiers against the final human labels of a correctness project.

    Only resolved, non-excluded, non-gold items count. Without names, every verifier with a verdict on one of
    the project's completions is scored. An item without a verdict from a verifier is left out of that
    verifier's figures and listed in its `missing_item_ids`. With several verifiers the pairwise agreement
    matrix (raw agreement and Cohen's kappa over correct / incorrect / inconclusive) covers the labeled items
    each pair judged. Beside macro-F1 (inconclusive counted as a wrong judgment) every report gives the calibrated
    abstention figures: the share of items decided and the precision of the decided verdicts, overall and per coarse
    answer class. A cascade verifier also gets its per-stage figures on the labeled items.

    With `uncertainty`, every figure also gets its 95% interval from a bootstrap that resamples questions, every
    pair of verifiers its paired comparison, and the result says what the humans' own error may do to the figures
    and how many more labeled items each answer type needs for the target interval width (see `Uncertainty`).

    The figures come from the project's tallies (grading.verdict_tallies), kept as labels and verdicts arrive, so
    their cost does not grow with the project; only the ids of items still missing a verdict are looked up.
    """
    _correctness_project(project)
    kept = annotation_aggregates.project_tallies(project, ("v", "l", "a"))
    if kept.get("vb"):
        bad = selectors.first_bad_final_value(project)
        if bad is not None:
            _human_label(bad)
    if verifier_names:
        verifiers = resolve_verifiers(verifier_names)
    else:
        verifiers = selectors.verifiers_with_verdicts_on_project(project)
    labeled = kept.get("vl", 0) - kept.get("vb", 0)
    confusion: dict[int, list[tuple[bool, str, str | None, str | None, str | None, int]]] = {
        v.pk: [] for v in verifiers
    }
    pairs: dict[tuple[int, int], Counter] = {}
    for key, count in kept.items():
        if key.startswith("v|"):
            _, verifier_id, answer_class, answer_type, human, status, model = key.split("|", 6)
            if int(verifier_id) in confusion:
                confusion[int(verifier_id)].append(
                    (human == "1", status, answer_class or None, answer_type or None, json.loads(model), count)
                )
        elif key.startswith("vp|"):
            _, first, second, first_status, second_status = key.split("|")
            pairs.setdefault((int(first), int(second)), Counter())[(first_status, second_status)] += count

    reports = []
    for verifier in verifiers:
        verdict_evaluation = judge_eval.evaluation_from_counts(confusion[verifier.pk])
        missing_count = labeled - verdict_evaluation.overall.n
        missing = selectors.items_missing_verdicts(project, verifier, MISSING_IDS_SHOWN) if missing_count else []
        cascade = None
        if verifier.kind == VerifierConfig.Kind.CASCADE:
            cascade = cascade_figures(verifier.pk, final_label_items(project).values("subject_id"), project=project)
        reports.append(
            VerifierReport(
                verifier=verifier,
                labeled_items=labeled,
                evaluation=verdict_evaluation,
                missing_item_ids=missing,
                missing_count=missing_count,
                cascade=cascade,
            )
        )

    agreement: dict[str, dict[str, dict[str, Any]]] | None = None
    if len(verifiers) > 1:
        agreement = {}
        for index, one in enumerate(verifiers):
            for other in verifiers[index:]:
                low, high = sorted((one.pk, other.pk))
                cell = judge_eval.agreement_cell(pairs.get((low, high), Counter()))
                agreement.setdefault(one.name, {})[other.name] = cell
                agreement.setdefault(other.name, {})[one.name] = dict(cell)
    result = MetaEvaluation(project=project, labeled_items=labeled, reports=reports, agreement=agreement)
    if uncertainty is not None:
        _add_uncertainty(result, kept, uncertainty)
    return result


# ---------------------------------------------------------------- intervals, comparisons, label noise, sample size


@dataclass
class _Series:
    """The per-question vectors of one series (grading.verdict_tallies): what it is about and their moments."""

    name: str
    kind: str  # "v" (a verifier per answer type and source), "m" (a verifier per author model) or "p" (a pair)
    about: tuple
    counts: judge_intervals.QuestionCounts


def _series_from_moments(kept_moments: Mapping[str, int]) -> list[_Series]:
    found = []
    for name, (groups, sums, products) in tally_figures.series_moments(kept_moments).items():
        parts = json.loads(name)
        width = judge_intervals.PAIR_WIDTH if parts[0] == "p" else judge_intervals.WIDTH
        vector = np.zeros(width)
        for index, total in sums.items():
            vector[index] = total
        second = np.zeros((width, width))
        for (i, j), total in products.items():
            second[i, j] = second[j, i] = total
        found.append(
            _Series(
                name, parts[0], tuple(parts[1:]), judge_intervals.QuestionCounts.from_moments(groups, vector, second)
            )
        )
    return found


class _Scopes:
    """Scopes (a name and the series they add up) whose questions are counted exactly when few enough: one grouped
    query reads the distinct vectors of every series of such scopes."""

    def __init__(self, project: AnnotationProject):
        self.project = project
        self.scopes: list[tuple[str, list[_Series], int]] = []

    def add(self, key: str, series: list[_Series], width: int) -> None:
        self.scopes.append((key, series, width))

    def counts(self) -> dict[str, judge_intervals.QuestionCounts]:
        small = {
            one.name
            for _, series, _ in self.scopes
            if sum(one.counts.questions for one in series) <= judge_intervals.EXACT_QUESTIONS
            for one in series
        }
        histograms = annotation_aggregates.vector_histogram(self.project, sorted(small))
        result = {}
        for key, series, width in self.scopes:
            total = judge_intervals.QuestionCounts.empty(width)
            for one in series:
                if one.name in small:
                    pairs = histograms.get(one.name, [])
                    vectors = [_padded(vector, width) for vector, _ in pairs]
                    total = total + judge_intervals.QuestionCounts.from_histogram(
                        vectors, [groups for _, groups in pairs], width
                    )
                else:
                    total = total + one.counts
            result[key] = total
        return result


def _padded(vector: list[int], width: int) -> list[int]:
    return (vector + [0] * width)[:width]


def _scope_label(kind: str, name: str) -> str:
    if kind == "by_answer_class" and name in COARSE_CLASSES:
        return coarse_label(name)
    if kind == "overall":
        return ""
    return name or "(none)"


SCOPE_KINDS = ("overall", "by_answer_class", "by_answer_type", "by_source")


def _question_scopes(series: list[_Series]) -> dict[tuple[str, str], list[_Series]]:
    """Scopes of series about questions (answer class, type and source at positions -3, -2, -1 of `about`)."""
    scopes: dict[tuple[str, str], list[_Series]] = {("overall", "all"): list(series)}
    for one in series:
        answer_class, answer_type, source = one.about[-3:]
        if answer_class:
            scopes.setdefault(("by_answer_class", answer_class), []).append(one)
        if answer_type:
            scopes.setdefault(("by_answer_type", answer_type), []).append(one)
        scopes.setdefault(("by_source", source), []).append(one)
    return scopes


def _swapped(counts: judge_intervals.QuestionCounts) -> judge_intervals.QuestionCounts:
    """A pair's vectors with the two verifiers' halves exchanged."""
    width = judge_intervals.WIDTH
    order = [
        *range(width, 2 * width),
        *range(width),
        judge_intervals.ONLY_SECOND_RIGHT,
        judge_intervals.ONLY_FIRST_RIGHT,
    ]
    return judge_intervals.QuestionCounts(
        counts.questions,
        counts.sums[order],
        counts.second[np.ix_(order, order)],
        counts.vectors[:, order] if counts.vectors is not None else None,
        counts.weights,
    )


def _nest(flat: Mapping[tuple[str, str], Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for (kind, name), value in flat.items():
        if kind == "overall":
            nested["overall"] = value
        else:
            nested.setdefault(kind, {})[name] = value
    for kind in nested:
        if kind != "overall":
            nested[kind] = dict(sorted(nested[kind].items()))
    return nested


def _add_uncertainty(result: MetaEvaluation, kept: Mapping[str, int], uncertainty: Uncertainty) -> None:
    project = result.project
    result.uncertainty = uncertainty
    series = _series_from_moments(annotation_aggregates.series_tallies(project))
    by_id = {report.verifier.pk: report for report in result.reports}
    scopes = _Scopes(project)
    for report in result.reports:
        verifier_id = report.verifier.pk
        own = [one for one in series if one.kind == "v" and one.about[0] == verifier_id]
        for (kind, name), members in _question_scopes(own).items():
            scopes.add(f"{verifier_id}|{kind}|{name}", members, judge_intervals.WIDTH)
        for one in series:
            if one.kind == "m" and one.about[0] == verifier_id:
                scopes.add(f"{verifier_id}|by_model|{one.about[1]}", [one], judge_intervals.WIDTH)
    pair_scopes: dict[tuple[int, int], list[tuple[str, str]]] = {}
    for index, first in enumerate(result.reports):
        for second in result.reports[index + 1 :]:
            low, high = sorted((first.verifier.pk, second.verifier.pk))
            members = [one for one in series if one.kind == "p" and one.about[:2] == (low, high)]
            pair_scopes[(first.verifier.pk, second.verifier.pk)] = []
            for (kind, name), chosen in _question_scopes(members).items():
                scopes.add(f"{low}|{high}|{kind}|{name}", chosen, judge_intervals.PAIR_WIDTH)
                pair_scopes[(first.verifier.pk, second.verifier.pk)].append((kind, name))
    counted = scopes.counts()
    resamples, seed = uncertainty.resamples, uncertainty.seed

    for report in result.reports:
        verifier_id, name = report.verifier.pk, report.verifier.name
        flat = {}
        for key, counts in counted.items():
            owner, _, rest = key.partition("|")
            kind, _, scope = rest.partition("|")
            if owner != str(verifier_id) or kind not in (*SCOPE_KINDS, "by_model"):
                continue
            flat[(kind, scope)] = judge_intervals.scope_intervals(
                counts, scope=f"{name}|{kind}|{scope}", seed=seed, resamples=resamples
            )
        report.intervals = _nest(flat)

    noise = _label_noise(project, kept, uncertainty, result.reports)
    result.label_noise = noise
    for first_id, second_id in pair_scopes:
        first, second = by_id[first_id], by_id[second_id]
        low, high = sorted((first_id, second_id))
        flat = {}
        for kind, scope in pair_scopes[(first_id, second_id)]:
            counts = counted[f"{low}|{high}|{kind}|{scope}"]
            if first_id != low:
                counts = _swapped(counts)
            flat[(kind, scope)] = judge_intervals.paired_comparison(
                counts,
                scope=f"{first.verifier.name}|{second.verifier.name}|{kind}|{scope}",
                seed=seed,
                resamples=resamples,
            )
        sentences = []
        for (kind, scope), comparison in sorted(flat.items(), key=lambda entry: SCOPE_KINDS.index(entry[0][0])):
            if kind in ("overall", "by_answer_class"):
                sentence = judge_intervals.comparison_sentence(
                    first.verifier.name, second.verifier.name, _scope_label(kind, scope), comparison
                )
                if sentence:
                    sentences.append({"scope": kind, "name": scope, "text": sentence})
        overall = flat.get(("overall", "all"))
        limited = None
        if overall is not None and noise is not None:
            swing = abs(overall["only_first_right"] - overall["only_second_right"])
            limited = bool(swing and 2 * noise["uncertain_items"] >= swing)
        result.comparisons.append(
            {
                "first": first.verifier.name,
                "second": second.verifier.name,
                **_nest(flat),
                "sentences": sentences,
                "human_labels_limit": limited,
            }
        )
    result.sample_size = _sample_size(result, uncertainty.target_width) if resamples else None


def _label_noise(
    project: AnnotationProject, kept: Mapping[str, int], uncertainty: Uncertainty, reports: list[VerifierReport]
) -> dict[str, Any] | None:
    """What the humans' own error may do: each final label is right with a probability, the annotator model's
    posterior where the item has one, else the one-coin model's from the project's raw agreement (two agreeing
    labels, or a disagreement settled by someone); the figures expected under those probabilities; and the final
    labels whose probability is below the threshold."""
    basis: Counter = Counter()
    for key, count in kept.items():
        if key.startswith("lb|"):
            _, basis_name, human_text = key.split("|")
            basis[(basis_name, human_text == "1")] += count
    labeled = sum(basis.values())
    if not labeled:
        return None
    agreement = tally_figures.overall_agreement(project.judgement, kept)
    raw = agreement.get("raw_agreement")
    accuracy = judge_intervals.one_coin_accuracy(raw)
    prior = sum(count for (_, human), count in basis.items() if human) / labeled
    probability: dict[tuple[str, bool], float] = {}
    for name in ("agreement", "contested"):
        for human in (True, False):
            probability[(name, human)] = (
                judge_intervals.label_probability(name, human, accuracy, prior) if accuracy is not None else 1.0
            )
    threshold = uncertainty.uncertain_below
    posterior_below = sum(
        count
        for key, count in kept.items()
        if key.startswith("lq|") and int(key[3:]) < math.floor(100 * threshold + 1e-9)
    )
    uncertain = posterior_below + sum(
        count
        for (name, human), count in basis.items()
        if name != "posterior" and probability[(name, human)] < threshold
    )
    posterior_items = sum(count for (name, _), count in basis.items() if name == "posterior")
    expected_wrong = posterior_items - kept.get("lc", 0) / 1_000_000
    for (name, human), count in basis.items():
        if name != "posterior":
            expected_wrong += count * (1 - probability[(name, human)])
    by_verifier: dict[str, Any] = {}
    for report in reports:
        verifier_id = report.verifier.pk
        items: dict[tuple[bool, str], float] = defaultdict(float)
        mass: dict[tuple[bool, str], float] = defaultdict(float)
        for key, count in kept.items():
            if key.startswith(f"vn|{verifier_id}|"):
                _, _, human_text, status, basis_name = key.split("|")
                labeled_correct = human_text == "1"
                items[(labeled_correct, status)] += count
                if basis_name != "posterior":
                    mass[(labeled_correct, status)] += count * probability[(basis_name, labeled_correct)]
            elif key.startswith(f"vc|{verifier_id}|"):
                _, _, human_text, status = key.split("|")
                mass[(human_text == "1", status)] += count / 1_000_000
        cells = judge_intervals.expected_cells(items, mass)
        figures = judge_intervals.noise_figures(cells)
        report.label_noise = figures
        by_verifier[report.verifier.name] = figures
    return {
        "labeled_items": labeled,
        "by_basis": {
            name: sum(count for (other, _), count in basis.items() if other == name)
            for name in ("posterior", "agreement", "contested")
        },
        "contested_share": sum(count for (name, _), count in basis.items() if name == "contested") / labeled,
        "raw_agreement": raw,
        "annotator_accuracy": accuracy,
        "label_probability": {
            f"{name}_{'correct' if human else 'incorrect'}": value for (name, human), value in probability.items()
        },
        "expected_wrong_labels": expected_wrong,
        "uncertain_below": threshold,
        "uncertain_items": uncertain,
        "figures": by_verifier,
    }


def _width(entry: Mapping[str, Any] | None) -> float | None:
    if not entry or entry.get("low") is None or entry.get("high") is None:
        return None
    return entry["high"] - entry["low"]


def _sample_size(result: MetaEvaluation, target: float) -> dict[str, Any]:
    """Per answer class and answer type: the widest accuracy interval among the verifiers, and how many more labeled
    items its verifiers' intervals need to be `target` wide."""
    guidance: dict[str, dict[str, Any]] = {"by_answer_class": {}, "by_answer_type": {}}
    for kind in guidance:
        names = sorted({name for report in result.reports for name in (report.intervals or {}).get(kind, {})})
        for name in names:
            widest, items, more = None, 0, 0
            for report in result.reports:
                entry = (report.intervals or {}).get(kind, {}).get(name)
                if entry is None:
                    continue
                report_scope = getattr(report.evaluation, kind).get(name)
                scope_items = report_scope.n if report_scope is not None else 0
                width = _width(entry["accuracy"])
                needed = judge_intervals.items_needed(scope_items, width, target)
                items = max(items, scope_items)
                if width is not None and (widest is None or width > widest):
                    widest = width
                more = max(more, needed or 0)
            guidance[kind][name] = {"items": items, "widest": widest, "more_items": more}
    return {"figure": "accuracy", "target_width": target, **guidance}


INTERVAL_CSV_FIELDS = tuple(f"{figure}_{end}" for figure in judge_intervals.FIGURES for end in ("low", "high"))
META_EVAL_CSV_FIELDS = (
    "verifier",
    *judge_eval.CSV_FIELDS,
    "labeled_items",
    "missing_verdicts",
    "coverage",
    "agreement",
    "kappa",
    "tokens",
    "cost",
    "questions",
    *INTERVAL_CSV_FIELDS,
    "compared_with",
    "figure",
    "difference",
    "difference_low",
    "difference_high",
    "only_first_right",
    "only_second_right",
    "mcnemar_p",
    "uncertain_labels",
    "widest_interval",
    "more_items",
    "target_width",
)
CSV_SCOPES = {"overall": "overall", "by_answer_class": "answer_class", "by_answer_type": "answer_type"}
CSV_SCOPES |= {"by_model": "model", "by_source": "source"}


def _blank(value: Any) -> Any:
    return "" if value is None else value


def _interval_columns(entry: Mapping[str, Any] | None) -> dict[str, Any]:
    if not entry:
        return {}
    columns: dict[str, Any] = {"questions": entry["questions"]}
    for figure in judge_intervals.FIGURES:
        columns[f"{figure}_low"] = _blank(entry[figure]["low"])
        columns[f"{figure}_high"] = _blank(entry[figure]["high"])
    return columns


def _intervals_of_row(report: VerifierReport, scope: str, name: str) -> Mapping[str, Any] | None:
    intervals = report.intervals or {}
    if scope == "overall":
        return intervals.get("overall")
    kind = {value: key for key, value in CSV_SCOPES.items()}.get(scope)
    return intervals.get(kind, {}).get(name) if kind else None


def meta_evaluation_csv_rows(result: MetaEvaluation) -> list[dict[str, Any]]:
    """Rows with `META_EVAL_CSV_FIELDS` keys, per verifier: the rows of `judge_eval.to_csv_rows` (coverage on the
    overall row) with the 95% interval of each figure (`<figure>_low`, `<figure>_high`) and the questions resampled,
    one `source` row per question source, a `label_noise` row (the figures expected under the humans' own error,
    and the uncertain final labels), for a cascade one `cascade_stage` row per stage (n = items it decided, with
    its coverage, precision, tokens and cost), then with several verifiers one `agreement` row per other verifier
    (n = shared items) and, with intervals, one `comparison` row per other verifier, scope and figure (the
    verifier's figure minus the other's on the items both judged, its paired interval, McNemar's discordant counts
    and exact p-value); last, one `sample_size` row per answer class and type (the labeled items, the widest
    accuracy interval and how many more labeled items reach `target_width`)."""
    rows: list[dict[str, Any]] = []
    blank = {key: "" for key in META_EVAL_CSV_FIELDS}
    for report in result.reports:
        for row in judge_eval.to_csv_rows(report.evaluation):
            full = {**blank, **row, "verifier": report.verifier.name}
            full.update(_interval_columns(_intervals_of_row(report, row["scope"], row["name"])))
            if row["scope"] == "overall":
                full.update(
                    labeled_items=report.labeled_items,
                    missing_verdicts=report.missing_verdicts,
                    coverage="" if report.coverage is None else report.coverage,
                )
            rows.append(full)
        for source, entry in (report.intervals or {}).get("by_source", {}).items():
            values = {figure: _blank(entry[figure]["value"]) for figure in judge_intervals.FIGURES}
            rows.append(
                {**blank, "verifier": report.verifier.name, "scope": "source", "name": source, **values}
                | _interval_columns(entry)
            )
        if report.label_noise is not None and result.label_noise is not None:
            rows.append(
                {
                    **blank,
                    "verifier": report.verifier.name,
                    "scope": "label_noise",
                    "name": "all",
                    **{figure: _blank(value) for figure, value in report.label_noise.items()},
                    "uncertain_labels": result.label_noise["uncertain_items"],
                }
            )
        for stage in (report.cascade or {}).get("stages", []):
            rows.append(
                {
                    **blank,
                    "verifier": report.verifier.name,
                    "scope": "cascade_stage",
                    "name": stage["stage"],
                    "n": stage["decided"],
                    "decided_coverage": "" if stage["coverage"] is None else stage["coverage"],
                    "decided_precision": "" if stage["precision"] is None else stage["precision"],
                    "tokens": stage["tokens"],
                    "cost": stage["cost"],
                }
            )
        if result.agreement:
            for other, cell in result.agreement[report.verifier.name].items():
                if other == report.verifier.name:
                    continue
                rows.append(
                    {
                        **blank,
                        "verifier": report.verifier.name,
                        "scope": "agreement",
                        "name": other,
                        "n": cell["shared_items"],
                        "agreement": "" if cell["agreement"] is None else cell["agreement"],
                        "kappa": "" if cell["kappa"] is None else cell["kappa"],
                    }
                )
    for comparison in result.comparisons:
        for kind, scope, entry in comparison_scopes(comparison):
            for figure in judge_intervals.FIGURES:
                rows.append(
                    {
                        **blank,
                        "verifier": comparison["first"],
                        "scope": f"comparison_{CSV_SCOPES[kind]}" if kind != "overall" else "comparison",
                        "name": scope,
                        "n": entry["items"],
                        "questions": entry["questions"],
                        "compared_with": comparison["second"],
                        "figure": figure,
                        "difference": _blank(entry[figure]["difference"]),
                        "difference_low": _blank(entry[figure]["low"]),
                        "difference_high": _blank(entry[figure]["high"]),
                        "only_first_right": entry["only_first_right"],
                        "only_second_right": entry["only_second_right"],
                        "mcnemar_p": entry["mcnemar_p"],
                    }
                )
    if result.sample_size is not None:
        for kind in ("by_answer_class", "by_answer_type"):
            for name, entry in result.sample_size[kind].items():
                rows.append(
                    {
                        **blank,
                        "scope": f"sample_size_{CSV_SCOPES[kind]}",
                        "name": name,
                        "n": entry["items"],
                        "figure": result.sample_size["figure"],
                        "widest_interval": _blank(entry["widest"]),
                        "more_items": entry["more_items"],
                        "target_width": result.sample_size["target_width"],
                    }
                )
    return rows


def comparison_scopes(comparison: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(scope kind, scope name, paired comparison) of one pair, overall first."""
    found: list[tuple[str, str, Mapping[str, Any]]] = []
    if "overall" in comparison:
        found.append(("overall", "all", comparison["overall"]))
    for kind in SCOPE_KINDS[1:]:
        for name, entry in comparison.get(kind, {}).items():
            found.append((kind, name, entry))
    return found


def meta_evaluation_csv(result: MetaEvaluation) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=META_EVAL_CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(meta_evaluation_csv_rows(result))
    return buffer.getvalue()


# ---------------------------------------------------------------- model evaluation


@dataclass(frozen=True)
class CorrectnessSource:
    """Where the correctness of each sample comes from: a project's final labels or one verifier's verdicts."""

    project: AnnotationProject | None = None
    verifier: VerifierConfig | None = None

    @property
    def spec(self) -> str:
        return f"project:{self.project.pk}" if self.project is not None else f"verifier:{self.verifier.name}"

    def describe(self) -> str:
        if self.project is not None:
            return f"final human labels of project {self.project.pk} ({self.project.name})"
        return f"verdicts of {self.verifier.name} (inconclusive counts as incorrect)"

    def as_dict(self) -> dict[str, Any]:
        if self.project is not None:
            return {"kind": "project", "spec": self.spec, "id": self.project.pk, "name": self.project.name}
        return {"kind": "verifier", "spec": self.spec, "id": self.verifier.pk, "name": self.verifier.name}


def parse_source(spec: str) -> CorrectnessSource:
    """`project:<id>` or `verifier:<name>` to a CorrectnessSource; raises EvaluationError otherwise."""
    kind, separator, value = (spec or "").partition(":")
    kind, value = kind.strip().lower(), value.strip()
    if not separator or not value or kind not in ("project", "verifier"):
        raise EvaluationError(f"source must be project:<id> or verifier:<name>, got {spec!r}")
    if kind == "project":
        if not value.isdigit():
            raise EvaluationError(f"source project id must be a number, got {value!r}")
        project = AnnotationProject.objects.filter(pk=int(value)).first()
        if project is None:
            raise EvaluationError(f"no annotation project {value}")
        return CorrectnessSource(project=project)
    return CorrectnessSource(verifier=resolve_verifiers([value])[0])


def _samples_from_project(dataset: Dataset, project: AnnotationProject) -> tuple[list[dict[str, Any]], list[str]]:
    if project.dataset_id != dataset.pk:
        raise EvaluationError(f"project {project.pk} ({project.name}) belongs to another dataset than {dataset.name}")
    rows = labeled_rows(project)
    # Completion ids tell samples apart; imported sample indices may all be 0.
    samples = [
        {
            "question_id": row["question_id"],
            "model": row["model"],
            "correct": row["human_correct"],
            "greedy": row["is_greedy"],
        }
        for row in rows
    ]
    warnings = []
    unlabeled = len(selectors.dataset_completion_samples(dataset)) - len(samples)
    if unlabeled > 0:
        warnings.append(
            f"{unlabeled} completion(s) of {dataset.name} have no final label in project {project.pk} "
            "(unresolved, excluded, gold or not in the project) and are left out"
        )
    return samples, warnings


def _samples_from_verifier(dataset: Dataset, verifier: VerifierConfig) -> tuple[list[dict[str, Any]], list[str]]:
    statuses = selectors.verdict_statuses([verifier.pk], dataset=dataset)[verifier.pk]
    samples, unjudged = [], 0
    for completion in selectors.dataset_completion_samples(dataset):
        status = statuses.get(completion["completion_id"])
        if status is None:
            unjudged += 1
            continue
        samples.append(
            {
                "question_id": completion["question_id"],
                "model": completion["model"],
                "correct": status == "correct",
                "greedy": completion["is_greedy"],
            }
        )
    warnings = []
    if unjudged:
        warnings.append(
            f"{unjudged} completion(s) of {dataset.name} have no verdict from {verifier.name} and are left out"
        )
    return samples, warnings


def correctness_samples(dataset: Dataset, source: CorrectnessSource) -> tuple[list[dict[str, Any]], list[str]]:
    """The dataset's completions with their correctness from `source`, as rows for `passk.evaluate_models`, and
    warnings saying what was left out (completions without a label or verdict). Raises EvaluationError for a
    project of another dataset or kind."""
    if source.project is not None:
        samples, warnings = _samples_from_project(dataset, source.project)
    else:
        samples, warnings = _samples_from_verifier(dataset, source.verifier)
    if not samples:
        warnings.append(f"no completion of {dataset.name} has a correctness value from the {source.describe()}")
    return samples, warnings


@dataclass(frozen=True)
class KChoice:
    """The values of k that fit a set of samples (`passk.suggested_ks`), and the sample counts they were read from.

    Counts are of sampled (non-greedy) answers per model and question: `samples_per_question` is their median (the
    lower one), which the k values are chosen for; a question with fewer samples than a k is left out of that k's
    figures and named in the warnings.
    """

    ks: list[int]
    samples_per_question: int
    fewest: int
    most: int

    @property
    def single_sample(self) -> bool:
        """One sample per question: Pass@1 (the accuracy) can be measured, G-Pass@k cannot."""
        return self.samples_per_question < 2

    @property
    def recommended(self) -> bool:
        """Every k has at least 3k samples per question, as LiveMathBench recommends."""
        return passk.follows_recommendation(self.samples_per_question, self.ks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ks": self.ks,
            "samples_per_question": self.samples_per_question,
            "fewest": self.fewest,
            "most": self.most,
            "single_sample": self.single_sample,
            "recommended": self.recommended,
        }


def choose_ks(samples: Sequence[dict[str, Any]]) -> KChoice | None:
    """The k values for these samples (rows of `correctness_samples`); None when none is a sampled answer."""
    return choose_ks_from_counts(counts_of_samples(samples).question_counts)


def choose_ks_from_counts(question_counts: Mapping[str, Mapping[tuple[int, int], int]]) -> KChoice | None:
    """The k values for questions counted as {model: {(n, c): questions}}; None when there is none."""
    histogram: Counter = Counter()
    for by_counts in question_counts.values():
        for (n, _), questions in by_counts.items():
            histogram[n] += questions
    total = sum(histogram.values())
    if not total:
        return None
    ordered = sorted(histogram.items())
    position, seen = (total - 1) // 2, 0  # the lower median, as statistics.median_low
    typical = ordered[-1][0]
    for n, questions in ordered:
        seen += questions
        if position < seen:
            typical = n
            break
    return KChoice(
        ks=passk.suggested_ks(typical), samples_per_question=typical, fewest=ordered[0][0], most=ordered[-1][0]
    )


@dataclass
class SampleCounts:
    """What the model evaluation needs of a source's samples: per model, how many questions have n sampled answers
    with a correctness value, c of them correct; the greedy answers and correct ones; what was left out; and a way
    to name the first questions of a model with a given range of n (`passk.Examples`)."""

    question_counts: dict[str, dict[tuple[int, int], int]]
    greedy: dict[str, tuple[int, int]]
    warnings: list[str]
    examples: passk.Examples | None = None

    @property
    def samples(self) -> int:
        sampled = sum(n * questions for by in self.question_counts.values() for (n, _), questions in by.items())
        return sampled + sum(n for n, _ in self.greedy.values())


def counts_of_samples(samples: Sequence[dict[str, Any]], warnings: Sequence[str] = ()) -> SampleCounts:
    """Rows `{question_id, model, correct, greedy}` counted per model and question."""
    per_question: dict[str, dict[Any, list[int]]] = {}
    greedy: dict[str, list[int]] = {}
    for row in samples:
        if row.get("greedy"):
            found = greedy.setdefault(row["model"], [0, 0])
        else:
            found = per_question.setdefault(row["model"], {}).setdefault(row["question_id"], [0, 0])
        found[0] += 1
        found[1] += int(bool(row["correct"]))
    question_counts = {
        model: dict(Counter((n, c) for n, c in questions.values())) for model, questions in per_question.items()
    }

    def examples(model: str, fewest: int, fewer_than: int) -> list:
        found = [q for q, (n, _) in per_question.get(model, {}).items() if fewest <= n < fewer_than]
        return sorted(found, key=lambda q: (type(q).__name__, str(q)))[: passk.QUESTIONS_NAMED]

    return SampleCounts(
        question_counts=question_counts,
        greedy={model: (n, c) for model, (n, c) in greedy.items()},
        warnings=list(warnings),
        examples=examples,
    )


def _counts_from_project(dataset: Dataset, project: AnnotationProject) -> SampleCounts:
    """The project's kept counts (grading.verdict_tallies): a few queries whatever the number of samples."""
    if project.dataset_id != dataset.pk:
        raise EvaluationError(f"project {project.pk} ({project.name}) belongs to another dataset than {dataset.name}")
    _correctness_project(project)
    if annotation_aggregates.project_tallies(project, ("vb",)):
        bad = selectors.first_bad_final_value(project)
        if bad is not None:
            _human_label(bad)
    question_counts = selectors.sample_counts(project)
    shown: dict[tuple[str, int], list[str]] = {}

    def examples(model: str, fewest: int, fewer_than: int) -> list:
        found: list[int | str] = []
        for n in sorted({n for n, _ in question_counts.get(model, {})}):
            if fewest <= n < fewer_than:
                if (model, n) not in shown:
                    shown[(model, n)] = selectors.questions_with_samples(project, model, n, passk.QUESTIONS_NAMED)
                found += [int(q) if q.isdigit() else q for q in shown[(model, n)]]
        return sorted(found, key=lambda q: (type(q).__name__, str(q)))[: passk.QUESTIONS_NAMED]

    counts = SampleCounts(question_counts, selectors.greedy_counts(project), [], examples)
    unlabeled = dataset.completion_count - counts.samples
    if unlabeled > 0:
        counts.warnings.append(
            f"{unlabeled} completion(s) of {dataset.name} have no final label in project {project.pk} "
            "(unresolved, excluded, gold or not in the project) and are left out"
        )
    return counts


def sample_counts(dataset: Dataset, source: CorrectnessSource) -> SampleCounts:
    """The counts of `source`'s samples of the dataset, with warnings saying what was left out. A project's are
    kept as its labels change; a verifier's are counted from its verdicts. Raises EvaluationError for a project of
    another dataset or kind."""
    if source.project is not None:
        counts = _counts_from_project(dataset, source.project)
    else:
        counts = counts_of_samples(*_samples_from_verifier(dataset, source.verifier))
    if not counts.samples:
        counts.warnings.append(f"no completion of {dataset.name} has a correctness value from the {source.describe()}")
    return counts


def evaluate_counts(
    counts: SampleCounts,
    ks: Sequence[int] = DEFAULT_KS,
    taus: Sequence[passk.TauLike] = DEFAULT_TAUS,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """`passk.evaluate_counts` over `counts`, with its warnings first; raises EvaluationError for bad k or tau."""
    try:
        result = passk.evaluate_counts(
            counts.question_counts,
            counts.greedy,
            list(ks),
            list(taus),
            bootstrap=bootstrap,
            seed=seed,
            examples=counts.examples,
        )
    except ValueError as error:
        raise EvaluationError(str(error)) from error
    return {"models": result["models"], "warnings": [*counts.warnings, *result["warnings"]]}


def model_evaluate(
    dataset: Dataset,
    source: CorrectnessSource,
    ks: Sequence[int] = DEFAULT_KS,
    taus: Sequence[passk.TauLike] = DEFAULT_TAUS,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Accuracy, greedy accuracy, Pass@k, G-Pass@k_tau and mG-Pass@k per model of a dataset's completions.

    Returns the shape of `passk.evaluate_models` (`{"models": ..., "warnings": [...]}`); its warnings are
    preceded by what was left out (completions without a label or verdict). Computed from the samples' counts per
    model and question (`sample_counts`). Raises EvaluationError for a project of another dataset or kind, and for
    bad k or tau values.
    """
    return evaluate_counts(sample_counts(dataset, source), ks, taus, bootstrap=bootstrap, seed=seed)


def parse_ks(values: Sequence[Any]) -> list[int]:
    """k values from text (query strings, form fields); raises EvaluationError for anything but positive integers."""
    ks = []
    for value in values:
        text = str(value).strip()
        if not text.isdigit() or int(text) < 1:
            raise EvaluationError(f"k must be a positive integer, got {value!r}")
        ks.append(int(text))
    return list(dict.fromkeys(ks))


def parse_taus(values: Sequence[Any]) -> list[str]:
    """Tau values from text, kept in their spelling; raises EvaluationError for values outside (0, 1]."""
    taus = []
    for value in values:
        text = str(value).strip()
        try:
            passk.tau_fraction(text)
        except ValueError as error:
            raise EvaluationError(str(error)) from error
        taus.append(text)
    return list(dict.fromkeys(taus))
