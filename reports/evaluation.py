"""Evaluation from the database: verifiers and judges against final human labels (meta-evaluation), and
models by Pass@k / G-Pass@k_tau / mG-Pass@k from human labels or verdicts.

The figures themselves come from the pure modules `core.metrics.judge_eval` and
`core.metrics.passk`; this module only gathers their input rows and reports what it left out.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation import aggregates as annotation_aggregates
from annotation.models import AnnotationProject
from core.labels import InvalidValue
from core.metrics import judge_eval, passk
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
        }


@dataclass
class MetaEvaluation:
    project: AnnotationProject
    labeled_items: int
    reports: list[VerifierReport]
    agreement: dict[str, dict[str, dict[str, Any]]] | None

    @property
    def verifier_names(self) -> list[str]:
        return [report.verifier.name for report in self.reports]

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": {"id": self.project.pk, "name": self.project.name, "dataset": self.project.dataset_id},
            "labeled_items": self.labeled_items,
            "verifiers": [report.as_dict() for report in self.reports],
            "agreement": self.agreement,
        }


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


def meta_evaluate(project: AnnotationProject, verifier_names: Sequence[str] | None = None) -> MetaEvaluation:
    """Score verifiers against the final human labels of a correctness project.

    Only resolved, non-excluded, non-gold items count. Without names, every verifier with a verdict on one of
    the project's completions is scored. An item without a verdict from a verifier is left out of that
    verifier's figures and listed in its `missing_item_ids`. With several verifiers the pairwise agreement
    matrix (raw agreement and Cohen's kappa over correct / incorrect / inconclusive) covers the labeled items
    each pair judged. Beside macro-F1 (inconclusive counted as a wrong judgment) every report gives the calibrated
    abstention figures: the share of items decided and the precision of the decided verdicts, overall and per coarse
    answer class. A cascade verifier also gets its per-stage figures on the labeled items.

    The figures come from the project's tallies (grading.verdict_tallies), kept as labels and verdicts arrive, so
    their cost does not grow with the project; only the ids of items still missing a verdict are looked up.
    """
    _correctness_project(project)
    kept = annotation_aggregates.project_tallies(project, ("v",))
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
    return MetaEvaluation(project=project, labeled_items=labeled, reports=reports, agreement=agreement)


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
)


def meta_evaluation_csv_rows(result: MetaEvaluation) -> list[dict[str, Any]]:
    """Rows with `META_EVAL_CSV_FIELDS` keys, per verifier: the rows of `judge_eval.to_csv_rows` (coverage on the
    overall row), for a cascade one `cascade_stage` row per stage (n = items it decided, with its coverage,
    precision, tokens and cost), then with several verifiers one `agreement` row per other verifier (n = shared
    items)."""
    rows: list[dict[str, Any]] = []
    blank = {key: "" for key in META_EVAL_CSV_FIELDS}
    for report in result.reports:
        for row in judge_eval.to_csv_rows(report.evaluation):
            full = {**blank, **row, "verifier": report.verifier.name}
            if row["scope"] == "overall":
                full.update(
                    labeled_items=report.labeled_items,
                    missing_verdicts=report.missing_verdicts,
                    coverage="" if report.coverage is None else report.coverage,
                )
            rows.append(full)
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
    return rows


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
