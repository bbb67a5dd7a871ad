"""MathArena-style proof scoring: rubrics with parallel chains of checkpoints, deductions and zero-credit items.

Pure logic, no Django imports.

- A rubric has one or more **chains** (alternative approaches). Within a chain checkpoints add up; across
  chains the best chain counts, never a sum. Every chain's checkpoints total exactly `max_points` (7).
- A **deduction** is a flat `penalty` (subtract `amount`) or a `cap` (the score may not exceed `amount`).
  Penalties are subtracted first; then the smallest cap applies; the result is clamped to [0, max_points].
- **Zero-credit items** describe arguments that earn nothing; they document the rubric and take no part in
  the arithmetic.
- Justifications are keyed by checkpoint key, by deduction key, and by `OVERALL_JUSTIFICATION` for the
  written reason of a zero total.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NamedTuple

DEFAULT_MAX_POINTS = 7
OVERALL_JUSTIFICATION = "overall"
DEDUCTION_KINDS = ("penalty", "cap")


class GradingError(ValueError):
    """A grade that cannot be scored against its rubric; `errors` lists every problem found."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__("; ".join(self.errors))


@dataclass(frozen=True)
class Checkpoint:
    key: str
    title: str
    points: int
    description: str = ""
    allow_partial: bool = False


@dataclass(frozen=True)
class Chain:
    key: str
    title: str
    checkpoints: tuple[Checkpoint, ...]

    @property
    def total_points(self) -> int:
        return sum(checkpoint.points for checkpoint in self.checkpoints)


@dataclass(frozen=True)
class Deduction:
    key: str
    title: str
    kind: Literal["penalty", "cap"]
    amount: int


@dataclass(frozen=True)
class ZeroCreditItem:
    title: str
    description: str = ""


@dataclass(frozen=True)
class RubricSpec:
    max_points: int = DEFAULT_MAX_POINTS
    chains: tuple[Chain, ...] = ()
    deductions: tuple[Deduction, ...] = ()
    zero_credit: tuple[ZeroCreditItem, ...] = ()

    def chain(self, key: str) -> Chain | None:
        return next((chain for chain in self.chains if chain.key == key), None)

    def deduction(self, key: str) -> Deduction | None:
        return next((deduction for deduction in self.deductions if deduction.key == key), None)


@dataclass(frozen=True)
class GradeChoices:
    """One grader's decisions: the chain followed, points per checkpoint of that chain, deductions applied."""

    chain_key: str
    awarded: Mapping[str, int] = field(default_factory=dict)
    deductions: Sequence[str] = ()
    justifications: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BreakdownLine:
    key: str
    title: str
    awarded: int
    points: int


@dataclass(frozen=True)
class ScoreResult:
    total: int
    chain_total: int
    applied_deductions: tuple[Deduction, ...]
    breakdown: tuple[BreakdownLine, ...]

    def as_dict(self) -> dict:
        return asdict(self)


def rubric_to_dict(spec: RubricSpec) -> dict[str, Any]:
    """A JSON-ready form of a rubric, read back by `rubric_from_dict`."""
    return asdict(spec)


def rubric_from_dict(data: Mapping[str, Any]) -> RubricSpec:
    """Build a rubric from the form `rubric_to_dict` writes. Raises ValueError for a missing or mistyped field;
    run `validate_rubric` on the result for the scoring rules."""
    try:
        return RubricSpec(
            max_points=data.get("max_points", DEFAULT_MAX_POINTS),
            chains=tuple(
                Chain(
                    key=chain["key"],
                    title=chain.get("title", ""),
                    checkpoints=tuple(
                        Checkpoint(
                            key=checkpoint["key"],
                            title=checkpoint.get("title", ""),
                            points=checkpoint["points"],
                            description=checkpoint.get("description", ""),
                            allow_partial=bool(checkpoint.get("allow_partial", False)),
                        )
                        for checkpoint in chain["checkpoints"]
                    ),
                )
                for chain in data.get("chains", ())
            ),
            deductions=tuple(
                Deduction(key=d["key"], title=d.get("title", ""), kind=d["kind"], amount=d["amount"])
                for d in data.get("deductions", ())
            ),
            zero_credit=tuple(
                ZeroCreditItem(title=item["title"], description=item.get("description", ""))
                for item in data.get("zero_credit", ())
            ),
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"malformed rubric: {error!r}") from error


def rubric_from_grading_scheme(
    grading_scheme: Sequence[Mapping[str, Any]], max_points: int = DEFAULT_MAX_POINTS
) -> RubricSpec:
    """A one-chain rubric from a MathArena `grading_scheme` (a list of `{title, points, desc}`).

    Checkpoints get the keys "c1", "c2", ... in order and allow partial credit, as MathArena graders may
    award part of a checkpoint's points.
    """
    checkpoints = tuple(
        Checkpoint(
            key=f"c{position}",
            title=str(entry.get("title", "")),
            points=entry.get("points"),  # type: ignore[arg-type]  # validate_rubric reports a missing or bad value
            description=str(entry.get("desc", "")),
            allow_partial=True,
        )
        for position, entry in enumerate(grading_scheme, start=1)
    )
    return RubricSpec(max_points=max_points, chains=(Chain("main", "Main solution", checkpoints),))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_rubric(spec: RubricSpec) -> list[str]:
    """Every problem with a rubric, as readable sentences; an empty list means the rubric is usable."""
    errors: list[str] = []
    if not _is_int(spec.max_points) or spec.max_points <= 0:
        errors.append(f"max_points must be a positive integer, got {spec.max_points!r}")
        return errors
    if not spec.chains:
        errors.append("the rubric needs at least one chain of checkpoints")

    chain_keys: set[str] = set()
    item_keys: set[str] = set()  # checkpoints and deductions share the justification namespace

    def claim(key: str, what: str) -> None:
        if not key or not str(key).strip():
            errors.append(f"{what} has an empty key")
        elif key == OVERALL_JUSTIFICATION:
            errors.append(f"{what} may not use the reserved key {OVERALL_JUSTIFICATION!r}")
        elif key in item_keys:
            errors.append(f"key {key!r} is used more than once (checkpoint and deduction keys must be unique)")
        else:
            item_keys.add(key)

    for chain in spec.chains:
        if not chain.key or not str(chain.key).strip():
            errors.append(f"chain {chain.title!r} has an empty key")
        elif chain.key in chain_keys:
            errors.append(f"chain key {chain.key!r} is used more than once")
        chain_keys.add(chain.key)
        if not chain.checkpoints:
            errors.append(f"chain {chain.key!r} has no checkpoints")
        points_ok = True
        for checkpoint in chain.checkpoints:
            claim(checkpoint.key, f"checkpoint {checkpoint.title!r} of chain {chain.key!r}")
            if not _is_int(checkpoint.points) or checkpoint.points < 0:
                errors.append(
                    f"checkpoint {checkpoint.key!r} of chain {chain.key!r}: points must be a non-negative integer, "
                    f"got {checkpoint.points!r}"
                )
                points_ok = False
        if points_ok and chain.checkpoints:
            total = chain.total_points
            if total > spec.max_points:
                errors.append(
                    f"chain {chain.key!r} is worth {total} points, more than the maximum of {spec.max_points}"
                )
            elif total != spec.max_points:
                errors.append(
                    f"chain {chain.key!r} is worth {total} points; every chain must reach exactly {spec.max_points}"
                )

    for deduction in spec.deductions:
        claim(deduction.key, f"deduction {deduction.title!r}")
        if deduction.kind not in DEDUCTION_KINDS:
            errors.append(f"deduction {deduction.key!r}: kind must be 'penalty' or 'cap', got {deduction.kind!r}")
        elif not _is_int(deduction.amount):
            errors.append(f"deduction {deduction.key!r}: amount must be an integer, got {deduction.amount!r}")
        elif deduction.kind == "penalty" and deduction.amount <= 0:
            errors.append(
                f"penalty {deduction.key!r} must subtract a positive number of points, got {deduction.amount}"
            )
        elif deduction.kind == "cap" and not 0 <= deduction.amount <= spec.max_points:
            errors.append(f"cap {deduction.key!r} must lie within [0, {spec.max_points}], got {deduction.amount}")
    return errors


def _score_problems(spec: RubricSpec, choices: GradeChoices) -> tuple[list[str], Chain | None, list[Deduction]]:
    errors: list[str] = []
    chain = spec.chain(choices.chain_key)
    if chain is None:
        errors.append(f"unknown chain {choices.chain_key!r}")
    else:
        by_key = {checkpoint.key: checkpoint for checkpoint in chain.checkpoints}
        for key, points in choices.awarded.items():
            checkpoint = by_key.get(key)
            if checkpoint is None:
                errors.append(f"checkpoint {key!r} is not part of chain {chain.key!r}")
            elif not _is_int(points) or not 0 <= points <= checkpoint.points:
                errors.append(
                    f"checkpoint {key!r}: awarded points must be an integer from 0 to {checkpoint.points}, got {points!r}"
                )
            elif 0 < points < checkpoint.points and not checkpoint.allow_partial:
                errors.append(
                    f"checkpoint {key!r} does not allow partial credit: award 0 or {checkpoint.points}, not {points}"
                )
    deductions: list[Deduction] = []
    for key in choices.deductions:
        deduction = spec.deduction(key)
        if deduction is None:
            errors.append(f"unknown deduction {key!r}")
        elif deduction in deductions:
            errors.append(f"deduction {key!r} is applied twice")
        else:
            deductions.append(deduction)
    return errors, chain, deductions


def score(spec: RubricSpec, choices: GradeChoices) -> ScoreResult:
    """The score of one grade. Raises GradingError listing every invalid choice.

    Checkpoints of the chosen chain add up (missing ones count 0); penalties are subtracted; the smallest
    cap limits the result; the total is clamped to [0, max_points].
    """
    errors, chain, deductions = _score_problems(spec, choices)
    if errors:
        raise GradingError(errors)
    assert chain is not None
    breakdown = tuple(
        BreakdownLine(checkpoint.key, checkpoint.title, choices.awarded.get(checkpoint.key, 0), checkpoint.points)
        for checkpoint in chain.checkpoints
    )
    chain_total = sum(line.awarded for line in breakdown)
    total = chain_total - sum(d.amount for d in deductions if d.kind == "penalty")
    caps = [d.amount for d in deductions if d.kind == "cap"]
    if caps:
        total = min(total, min(caps))
    total = max(0, min(spec.max_points, total))
    return ScoreResult(total=total, chain_total=chain_total, applied_deductions=tuple(deductions), breakdown=breakdown)


def validate_grade(spec: RubricSpec, choices: GradeChoices) -> list[str]:
    """Every problem with a grade, including missing written justifications; empty when it can be saved.

    A justification (non-blank) is required for every partially awarded checkpoint, for every deduction
    applied, and under `OVERALL_JUSTIFICATION` when the total is zero.
    """
    errors, chain, deductions = _score_problems(spec, choices)
    if errors:
        return errors

    def justified(key: str) -> bool:
        text = choices.justifications.get(key)
        return isinstance(text, str) and bool(text.strip())

    assert chain is not None
    for checkpoint in chain.checkpoints:
        points = choices.awarded.get(checkpoint.key, 0)
        if 0 < points < checkpoint.points and not justified(checkpoint.key):
            errors.append(
                f"checkpoint {checkpoint.key!r}: explain why only {points} of {checkpoint.points} points are awarded"
            )
    for deduction in deductions:
        if not justified(deduction.key):
            errors.append(f"deduction {deduction.key!r}: explain why it applies")
    if score(spec, choices).total == 0 and not justified(OVERALL_JUSTIFICATION):
        errors.append("a score of zero needs a written justification")
    return errors


def best_chain_score(spec: RubricSpec, awarded_by_chain: Mapping[str, Mapping[str, int]]) -> tuple[str, int]:
    """The best chain and its checkpoint total, given points per checkpoint for several chains.

    The maximum over chains, never a sum across them. Deductions are not involved. Raises GradingError for
    an empty input or invalid awards; on a tie the chain listed first in the rubric wins.
    """
    if not awarded_by_chain:
        raise GradingError(["no chain was graded"])
    results: list[tuple[int, int, str]] = []
    errors: list[str] = []
    order = {chain.key: position for position, chain in enumerate(spec.chains)}
    for chain_key, awarded in awarded_by_chain.items():
        try:
            result = score(spec, GradeChoices(chain_key=chain_key, awarded=awarded))
        except GradingError as error:
            errors.extend(error.errors)
            continue
        results.append((result.chain_total, -order[chain_key], chain_key))
    if errors:
        raise GradingError(errors)
    points, _, chain_key = max(results)
    return chain_key, points


class ProofScoreAggregate(NamedTuple):
    """(final, method): the final score of a proof from its graders' scores; `final` is None while another
    grader is needed."""

    final: float | None
    method: Literal["mean_of_two", "median", "needs_more"]

    @property
    def needs_more(self) -> bool:
        return self.final is None


def aggregate_proof_scores(scores: Sequence[float], threshold: float = 1.0) -> ProofScoreAggregate:
    """Combine graders' scores under the 2+1 protocol.

    - fewer than two scores: another grader is needed;
    - two scores within `threshold` of each other: their mean;
    - two scores further apart: a third grader is needed;
    - three or more scores: their median.
    """
    if not _is_finite_number(threshold) or threshold < 0:
        raise ValueError(f"threshold must be a non-negative number, got {threshold!r}")
    for value in scores:
        if not _is_finite_number(value) or value < 0:
            raise ValueError(f"scores must be non-negative numbers, got {value!r}")
    if len(scores) < 2:
        return ProofScoreAggregate(None, "needs_more")
    if len(scores) == 2:
        first, second = scores
        if abs(first - second) <= threshold:
            return ProofScoreAggregate((first + second) / 2, "mean_of_two")
        return ProofScoreAggregate(None, "needs_more")
    return ProofScoreAggregate(float(statistics.median(scores)), "median")


def _is_finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
