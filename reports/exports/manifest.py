"""The bundle's manifest.json and dataset card README.md. Pure module, no Django imports."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from .registry import RowFacts

RESOLUTIONS = ("agreement", "majority", "adjudication", "override")


class ManifestCounts:
    """Counts of the exported rows by answer type, coarse type, domain, source, label, author model and resolution."""

    def __init__(self):
        self.rows = 0
        self.answer_type: Counter = Counter()
        self.answer_subtype: Counter = Counter()
        self.domain: Counter = Counter()
        self.source: Counter = Counter()
        self.label: Counter = Counter()
        self.model: Counter = Counter()
        self.resolution: Counter = Counter()
        self.score: Counter = Counter()
        self.points = 0.0
        self.max_points = 0.0

    def add(self, facts: RowFacts) -> None:
        self.rows += 1
        self.answer_type[facts.answer_type or "(none)"] += 1
        self.answer_subtype[facts.answer_subtype or "(none)"] += 1
        self.domain[facts.domain or "(none)"] += 1
        self.source[facts.source or "(none)"] += 1
        if facts.score is not None:  # a graded proof: a score out of its points, not correct or incorrect
            self.score[f"{facts.score:g}"] += 1
            self.points += facts.score
            self.max_points += facts.max_points or 0.0
        else:
            self.label["correct" if facts.label else "incorrect"] += 1
        self.model[facts.model or "(none)"] += 1
        if facts.resolution:
            self.resolution[facts.resolution] += 1

    def as_dict(self) -> dict[str, Any]:
        def ordered(counter: Counter) -> dict[str, int]:
            return dict(sorted(counter.items()))

        return {
            "rows": self.rows,
            "by_answer_type": ordered(self.answer_type),
            "by_answer_subtype": ordered(self.answer_subtype),
            "by_domain": ordered(self.domain),
            "by_source": ordered(self.source),
            "by_label": {"correct": self.label.get("correct", 0), "incorrect": self.label.get("incorrect", 0)},
            "by_model": ordered(self.model),
            # "model" (the annotator model's most probable value) appears only in bundles that have such labels
            "final_label_by": {name: self.resolution.get(name, 0) for name in RESOLUTIONS}
            | ({"model": self.resolution["model"]} if self.resolution.get("model") else {}),
        } | (
            {
                "by_score": dict(sorted(self.score.items(), key=lambda item: float(item[0]))),
                "points": round(self.points, 4),
                "max_points": round(self.max_points, 4),
            }
            if self.score
            else {}
        )


def manifest_json(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def _figure(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


CARD_FIGURES = (
    ("accuracy", "accuracy"),
    ("macro_f1", "macro-F1"),
    ("tpr", "TPR"),
    ("tnr", "TNR"),
    ("ppv", "PPV"),
    ("npv", "NPV"),
    ("decided_coverage", "coverage (decided)"),
    ("decided_precision", "precision (decided)"),
)


def _with_interval(entry: dict[str, Any] | None) -> str:
    if not entry or entry.get("value") is None:
        return "n/a"
    if entry.get("low") is None or entry.get("high") is None:
        return f"{entry['value']:.3f}"
    return f"{entry['value']:.3f} [{entry['low']:.3f}, {entry['high']:.3f}]"


def _verifier_lines(verifiers: dict[str, Any] | None) -> list[str]:
    """The card's section on the verifiers scored against the project's final labels, figures with intervals."""
    if verifiers is None:
        return []
    lines = ["## Verifiers against these labels", ""]
    if verifiers.get("error"):
        return [*lines, f"Not computed: {verifiers['error']}", ""]
    if not verifiers["verifiers"]:
        return [*lines, "No verifier has a verdict on the project's labeled completions.", ""]
    lines += [
        f"Every verifier with verdicts, scored against the final labels of the project's "
        f"{verifiers['labeled_items']} labeled items (which may be more than this bundle holds). An inconclusive "
        "verdict counts as a wrong judgment; coverage is the share of items decided and precision the share of "
        "decided verdicts that match the label. In brackets: 95% percentile intervals from "
        f"{verifiers['resamples']} bootstrap resamples of the questions (a question's completions are resampled "
        f"together), seed {verifiers['seed']}.",
        "",
        "| verifier | items judged | " + " | ".join(name for _, name in CARD_FIGURES) + " |",
        "| --- | --- | " + " | ".join("---" for _ in CARD_FIGURES) + " |",
    ]
    for row in verifiers["verifiers"]:
        cells = " | ".join(_with_interval(row["figures"].get(figure)) for figure, _ in CARD_FIGURES)
        lines.append(f"| {row['name']} ({row['kind']}) | {row['judged_items']} | {cells} |")
    lines.append("")
    for sentence in verifiers.get("comparisons") or []:
        lines.append(f"- {sentence}")
    if verifiers.get("comparisons"):
        lines.append("")
    return lines


def rows_summary(counts: dict[str, Any]) -> str:
    """What the bundle's rows are, in a sentence: labels counted, or a proof bundle's points."""
    if "by_score" in counts:
        share = counts["points"] / counts["max_points"] if counts["max_points"] else None
        scores = ", ".join(f"{score} points: {count}" for score, count in counts["by_score"].items())
        mean = f"{share:.1%} of the points" if share is not None else "n/a"
        proofs = "graded proof" if counts["rows"] == 1 else "graded proofs"
        return f"{counts['rows']} {proofs}, {counts['points']:g} of {counts['max_points']:g} points ({mean}); {scores}."
    return (
        f"{counts['rows']} rows: {counts['by_label']['correct']} correct, {counts['by_label']['incorrect']} incorrect."
    )


def render_card(manifest: dict[str, Any], builder_description: str) -> str:
    """The dataset card: what the bundle holds and the protocol that produced its labels."""
    counts = manifest["counts"]
    agreement = manifest.get("agreement") or {}
    policy = manifest["project"].get("policy", {})
    first_round = policy.get("labels_per_item", 2)
    tiebreak = policy.get("tiebreak_annotators", 1)
    lines = [
        f"# {manifest['title']}",
        "",
        f'Exported from annotation project "{manifest["project"]["name"]}" (dataset '
        f'"{manifest["project"]["dataset"]}") by mathlabel {manifest["app_version"]} '
        f"on {manifest['created_at']}.",
        "",
        "## Files",
        "",
    ]
    for name, info in manifest["files"].items():
        lines.append(f"- `{name}`: {info['rows']} rows, {info['bytes']} bytes, sha256 `{info['sha256']}`")
    graded = "by_score" in counts
    protocol = (
        f"Every proof was graded against its problem's rubric by {first_round} graders working independently and "
        "blind: they saw the problem, its rubric and the proof, never each other's grades or the model's name. When "
        "their scores were within the project's agreement threshold the final score is their mean; otherwise a third "
        "grader graded it and, when some pair then agreed, the median of the three is final; otherwise an "
        "adjudicator decided and wrote a rationale. An administrator may override a final score, also with a "
        "rationale. Unresolved proofs are left out."
        if graded
        else f"Every completion was labelled correct or incorrect by {first_round} annotators working independently "
        "and blind: they saw the question, the reference answer and the completion, never each other's labels, the "
        "automatic verdicts or (unless the project showed them) the model names. When the "
        f"{first_round} labels agreed the label was final. Otherwise {tiebreak} more annotator(s) labelled it and a "
        "strict majority decided; when there was still no majority an adjudicator decided and wrote a rationale. "
        "An administrator may override a final label, also with a rationale. Items an annotator or adjudicator "
        "resolved as unsuitable are left out, as are unresolved items and the gold items used to check annotators."
    )
    lines += [
        "",
        "Columns: " + ", ".join(f"`{name}`" for name in manifest["columns"]) + ".",
        "CSV files spell booleans `true`/`false` and write lists as JSON text.",
        "",
        "## How the labels were produced",
        "",
        protocol,
        "",
        "Final labels in this bundle were decided by: "
        + ", ".join(f"{name} {count}" for name, count in counts["final_label_by"].items())
        + ".",
        "",
        f"Agreement on the project's first-round label pairs ({agreement.get('items_compared', 0)} items): "
        f"raw agreement {_figure(agreement.get('raw_agreement'))}, Cohen's kappa "
        f"{_figure(agreement.get('cohens_kappa'))}; Krippendorff's alpha over all labels "
        f"{_figure(agreement.get('krippendorff_alpha'))}.",
        "",
        "## How the rows were chosen",
        "",
        builder_description,
        "",
        "Parameters: " + ", ".join(f"`{k}` = {json.dumps(v)}" for k, v in manifest["parameters"].items()) + ".",
        "",
        rows_summary(counts),
        "",
    ]
    if manifest.get("annotator_pseudonyms"):
        lines += [
            "## Annotators",
            "",
            "The `annotator` column lists who labelled each row, first labeller first, as pseudonyms: "
            f"{manifest['annotator_pseudonyms']}. The same person has the same pseudonym in every export of this "
            "installation, so rows of several exports can be joined by annotator; no database id or username is "
            "written, and without the key a pseudonym cannot be traced back to an account.",
            "",
        ]
    lines += _verifier_lines(manifest.get("verifiers"))
    shortfalls = manifest.get("shortfalls") or {}
    lines += ["## Shortfalls", ""]
    if shortfalls:
        for group, info in shortfalls.items():
            lines.append(
                f"- {group}: {info['requested']} requested, {info['available']} available, "
                f"{info['selected']} selected. Nothing was padded."
            )
    else:
        lines.append("None: every group got the number of rows requested.")
    for note in manifest.get("notes") or []:
        lines += ["", note]
    lines.append("")
    return "\n".join(lines)
