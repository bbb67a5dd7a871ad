"""Meta-evaluation of verifier and judge verdicts against final human labels.

Positive class = "the completion is correct". A verdict is "correct", "incorrect" or "inconclusive", and
an inconclusive verdict counts as a wrong judgment (as in U-MATH). In the confusion matrix it therefore
lands on the wrong side of the human label:

- human correct,   verdict correct      -> TP
- human correct,   verdict incorrect    -> FN
- human correct,   verdict inconclusive -> FN   (a correct completion the judge failed to accept)
- human incorrect, verdict incorrect    -> TN
- human incorrect, verdict correct      -> FP
- human incorrect, verdict inconclusive -> FP   (an incorrect completion the judge failed to reject)

so accuracy = (TP + TN) / n both with and without inconclusive verdicts in the data, and the
inconclusive rate is reported beside the matrix.

Calibrated abstention is reported beside it: **decided coverage** = decided verdicts (correct or incorrect) / n,
and **decided precision** = decided verdicts that match the human label / decided verdicts, i.e.
(TP + TN) / (n - inconclusive), since an inconclusive verdict is never a TP or a TN. A verifier that abstains
where it is unsure has a high decided precision even when its macro-F1 (abstentions counted as wrong) is low.

Reported figures: accuracy per coarse answer class A-D and their unweighted mean (the VerifyBench table);
TP/FP/TN/FN, TPR, TNR, PPV, NPV and macro-F1 overall and per author model (the mu-MATH table). A ratio
whose denominator is zero is None.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.metrics.agreement import cohens_kappa, kappa_from_pair_counts, raw_agreement

VERDICTS = ("correct", "incorrect", "inconclusive")
COARSE_CLASSES = ("A", "B", "C", "D")


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def normalize_verdict(value: Any) -> str:
    """Lower-case and check a verdict; raises ValueError for anything but correct / incorrect / inconclusive."""
    verdict = str(value).strip().lower() if value is not None else ""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {value!r}")
    return verdict


@dataclass
class BinaryReport:
    """Confusion counts of one scope (all rows, or one author model) and the ratios derived from them."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    inconclusive: int = 0

    def add(self, human_correct: bool, verdict: str, times: int = 1) -> None:
        """Count `times` items with this human label and this verdict."""
        if verdict == "inconclusive":
            self.inconclusive += times
        if human_correct:
            if verdict == "correct":
                self.tp += times
            else:
                self.fn += times
        elif verdict == "incorrect":
            self.tn += times
        else:
            self.fp += times

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float | None:
        return _ratio(self.tp + self.tn, self.n)

    @property
    def inconclusive_rate(self) -> float | None:
        return _ratio(self.inconclusive, self.n)

    @property
    def decided(self) -> int:
        """Verdicts that are correct or incorrect."""
        return self.n - self.inconclusive

    @property
    def decided_coverage(self) -> float | None:
        """Share of the items the verifier decided."""
        return _ratio(self.decided, self.n)

    @property
    def decided_precision(self) -> float | None:
        """Share of the decided verdicts that match the human label."""
        return _ratio(self.tp + self.tn, self.decided)

    @property
    def tpr(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def tnr(self) -> float | None:
        return _ratio(self.tn, self.tn + self.fp)

    @property
    def ppv(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def npv(self) -> float | None:
        return _ratio(self.tn, self.tn + self.fn)

    @property
    def f1_correct(self) -> float | None:
        """F1 of the positive class, 2TP / (2TP + FP + FN)."""
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def f1_incorrect(self) -> float | None:
        """F1 of the negative class, 2TN / (2TN + FN + FP)."""
        return _ratio(2 * self.tn, 2 * self.tn + self.fn + self.fp)

    @property
    def macro_f1(self) -> float | None:
        """Mean of the two F1 scores; None when either is undefined."""
        if self.f1_correct is None or self.f1_incorrect is None:
            return None
        return (self.f1_correct + self.f1_incorrect) / 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "tp": self.tp,
            "fp": self.fp,
            "tn": self.tn,
            "fn": self.fn,
            "inconclusive": self.inconclusive,
            "inconclusive_rate": self.inconclusive_rate,
            "decided": self.decided,
            "decided_coverage": self.decided_coverage,
            "decided_precision": self.decided_precision,
            "accuracy": self.accuracy,
            "tpr": self.tpr,
            "tnr": self.tnr,
            "ppv": self.ppv,
            "npv": self.npv,
            "f1_correct": self.f1_correct,
            "f1_incorrect": self.f1_incorrect,
            "macro_f1": self.macro_f1,
        }


@dataclass
class JudgeEvaluation:
    """Everything `evaluate_verdicts` computes; `as_dict()` gives a JSON-ready form."""

    overall: BinaryReport = field(default_factory=BinaryReport)
    by_model: dict[str, BinaryReport] = field(default_factory=dict)
    by_answer_class: dict[str, BinaryReport] = field(default_factory=dict)
    by_answer_type: dict[str, BinaryReport] = field(default_factory=dict)

    @property
    def mean_class_accuracy(self) -> float | None:
        """Unweighted mean of the accuracy of each coarse answer class present (VerifyBench's "Avg")."""
        accuracies = [report.accuracy for report in self.by_answer_class.values() if report.accuracy is not None]
        return sum(accuracies) / len(accuracies) if accuracies else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.as_dict(),
            "by_answer_class": {
                letter: {
                    "n": report.n,
                    "accuracy": report.accuracy,
                    "inconclusive_rate": report.inconclusive_rate,
                    "decided": report.decided,
                    "decided_coverage": report.decided_coverage,
                    "decided_precision": report.decided_precision,
                    "macro_f1": report.macro_f1,
                }
                for letter, report in sorted(self.by_answer_class.items())
            },
            "mean_class_accuracy": self.mean_class_accuracy,
            "by_answer_type": {
                code: {
                    "n": report.n,
                    "decided": report.decided,
                    "decided_coverage": report.decided_coverage,
                    "decided_precision": report.decided_precision,
                    "macro_f1": report.macro_f1,
                }
                for code, report in sorted(self.by_answer_type.items())
            },
            "by_model": {model: report.as_dict() for model, report in sorted(self.by_model.items())},
        }


def evaluate_verdicts(rows: Iterable[Mapping[str, Any]]) -> JudgeEvaluation:
    """Score verdicts against final human labels.

    Each row is `{item_id, human_correct: bool, verdict: "correct"|"incorrect"|"inconclusive",
    answer_class: "A".."D" | None, model: str | None}`, optionally with `answer_type` (a fine code such as
    "A1"). `answer_class` feeds the per-class accuracy, `answer_type` the per-type table and `model` (the
    author model of the completion) the per-model table; rows without them count only overall. Raises ValueError naming the row for a bad verdict, label or class, or a repeated item_id.
    """
    evaluation = JudgeEvaluation()
    seen: set[Hashable] = set()
    for position, row in enumerate(rows, start=1):
        item_id = row.get("item_id")
        where = f"row {position} (item {item_id!r})"
        if item_id is None:
            raise ValueError(f"row {position}: item_id is required")
        if item_id in seen:
            raise ValueError(f"{where}: item_id appears twice")
        seen.add(item_id)
        human_correct = row.get("human_correct")
        if not isinstance(human_correct, bool):
            raise ValueError(f"{where}: human_correct must be true or false, got {human_correct!r}")
        try:
            verdict = normalize_verdict(row.get("verdict"))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from error
        answer_class = row.get("answer_class")
        if answer_class is not None and answer_class not in COARSE_CLASSES:
            raise ValueError(f"{where}: answer_class must be one of A, B, C, D, got {answer_class!r}")
        model = row.get("model")

        evaluation.overall.add(human_correct, verdict)
        if answer_class is not None:
            evaluation.by_answer_class.setdefault(answer_class, BinaryReport()).add(human_correct, verdict)
        if model:
            evaluation.by_model.setdefault(str(model), BinaryReport()).add(human_correct, verdict)
        answer_type = row.get("answer_type")
        if answer_type:
            evaluation.by_answer_type.setdefault(str(answer_type), BinaryReport()).add(human_correct, verdict)
    return evaluation


CSV_FIELDS = (
    "scope",
    "name",
    "n",
    "accuracy",
    "inconclusive_rate",
    "decided_coverage",
    "decided_precision",
    "tp",
    "fp",
    "tn",
    "fn",
    "tpr",
    "tnr",
    "ppv",
    "npv",
    "f1_correct",
    "f1_incorrect",
    "macro_f1",
)


def to_csv_rows(evaluation: JudgeEvaluation) -> list[dict[str, Any]]:
    """Flat rows (keys `CSV_FIELDS`) for `csv.DictWriter`: overall, one per answer class, the class mean, one per
    fine answer type, one per model.

    Undefined ratios are empty strings.
    """

    def row(scope: str, name: str, report: BinaryReport) -> dict[str, Any]:
        values = report.as_dict()
        return {"scope": scope, "name": name, **{key: values[key] for key in CSV_FIELDS[2:]}}

    rows = [row("overall", "all", evaluation.overall)]
    for letter, report in sorted(evaluation.by_answer_class.items()):
        rows.append(row("answer_class", letter, report))
    if evaluation.by_answer_class:
        mean_row: dict[str, Any] = {key: None for key in CSV_FIELDS}
        mean_row.update(
            scope="answer_class",
            name="mean",
            n=sum(report.n for report in evaluation.by_answer_class.values()),
            accuracy=evaluation.mean_class_accuracy,
        )
        rows.append(mean_row)
    for code, report in sorted(evaluation.by_answer_type.items()):
        rows.append(row("answer_type", code, report))
    for model, report in sorted(evaluation.by_model.items()):
        rows.append(row("model", model, report))
    return [{key: ("" if value is None else value) for key, value in item.items()} for item in rows]


def evaluation_from_counts(
    counts: Iterable[tuple[bool, str, str | None, str | None, str | None, int]],
) -> JudgeEvaluation:
    """The same evaluation as `evaluate_verdicts` from counted rows `(human_correct, verdict, answer_class,
    answer_type, model, how many items)`, so a project of any size is scored from its confusion counts. Classes
    other than A-D count only overall."""
    evaluation = JudgeEvaluation()
    for human_correct, verdict, answer_class, answer_type, model, times in counts:
        verdict = normalize_verdict(verdict)
        evaluation.overall.add(human_correct, verdict, times)
        if answer_class in COARSE_CLASSES:
            evaluation.by_answer_class.setdefault(answer_class, BinaryReport()).add(human_correct, verdict, times)
        if model:
            evaluation.by_model.setdefault(str(model), BinaryReport()).add(human_correct, verdict, times)
        if answer_type:
            evaluation.by_answer_type.setdefault(str(answer_type), BinaryReport()).add(human_correct, verdict, times)
    return evaluation


def agreement_cell(pair_counts: Mapping[tuple[Hashable, Hashable], int]) -> dict[str, Any]:
    """One cell of `agreement_matrix` from the contingency counts `{(verdict a, verdict b): items}`."""
    shared = sum(pair_counts.values())
    agreeing = sum(count for (first, second), count in pair_counts.items() if first == second)
    return {
        "shared_items": shared,
        "agreement": agreeing / shared if shared else None,
        "kappa": kappa_from_pair_counts(pair_counts),
    }


def agreement_matrix(verdicts_by_judge: Mapping[str, Mapping[Hashable, str]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Pairwise agreement between judges over the items both judged.

    Input: `{judge: {item_id: verdict}}`. Output: `{judge_a: {judge_b: {"shared_items": int,
    "agreement": float | None, "kappa": float | None}}}` for every ordered pair including a judge with
    itself (symmetric). Kappa is Cohen's kappa over the three verdict categories; None when undefined.
    """
    normalized: dict[str, dict[Hashable, str]] = {}
    for judge, verdicts in verdicts_by_judge.items():
        try:
            normalized[judge] = {item: normalize_verdict(verdict) for item, verdict in verdicts.items()}
        except ValueError as error:
            raise ValueError(f"judge {judge!r}: {error}") from error
    judges = list(normalized)
    matrix: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for index, first in enumerate(judges):
        for second in judges[index:]:
            shared = [item for item in normalized[first] if item in normalized[second]]
            labels_a = [normalized[first][item] for item in shared]
            labels_b = [normalized[second][item] for item in shared]
            cell = {
                "shared_items": len(shared),
                "agreement": raw_agreement(labels_a, labels_b),
                "kappa": cohens_kappa(labels_a, labels_b),
            }
            matrix[first][second] = cell
            matrix[second][first] = dict(cell)
    return dict(matrix)
