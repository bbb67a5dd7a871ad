"""Choosing completions for human annotation from automatic verdicts. Pure Python, no Django imports.

Two recipes, each returning the picks with the reason for each and a report of what was available:

- `verifybench_selection`: per question, `per_side` completions judged correct and `per_side` judged incorrect by
  one verifier, chosen at random (seeded). A question short of either side keeps what it has and is reported; the
  missing side is never filled from the other.
- `verifybench_hard_selection`: completions on which N verifiers disagree (the minority side has at least
  `min_minority` votes, e.g. 2 of 5 for a 2 vs 3 split), sampled by strata (domain, source, answer type) with
  proportional allocation up to a target count.

- `cascade_selection`: only the completions a cascade verifier left to humans: those its judge could not decide
  ("undecided") and those where the sampled check of the judge disagreed with the rules ("disputed"), optionally
  only one of the two, and at most `target` of them (chosen at random, seeded) when a target is given.

`SelectionFilters` (answer type, domain, model) narrows the candidates of either recipe first. A missing or
inconclusive verdict is not a vote for "correct": in the VerifyBench-Hard recipe an inconclusive verdict counts as
an "incorrect" vote (a judge that cannot confirm the answer rejects it), and a completion lacking a verdict from
any of the N verifiers is left out and counted in the report.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CORRECT = "correct"
INCORRECT = "incorrect"
INCONCLUSIVE = "inconclusive"

VERIFYBENCH = "verifybench"
VERIFYBENCH_HARD = "verifybench-hard"
CASCADE = "cascade"
STRATEGIES = (VERIFYBENCH, VERIFYBENCH_HARD, CASCADE)
UNDECIDED = "undecided"
DISPUTED = "disputed"
CASCADE_ROUTES = (UNDECIDED, DISPUTED)
STRATUM_FIELDS = ("domain", "source", "answer_type")


class SelectionError(ValueError):
    """Parameters that cannot make a selection; the message says which and why."""


@dataclass(frozen=True)
class Candidate:
    completion_id: int
    question_id: int
    domain: str = ""
    source: str = ""
    answer_type: str = ""
    model: str = ""
    votes: Mapping[str, str] = field(default_factory=dict)
    """Verifier name -> verdict status (correct / incorrect / inconclusive)."""
    routes: Mapping[str, str] = field(default_factory=dict)
    """Cascade verifier name -> why it left the completion to humans (undecided / disputed); absent when decided."""


@dataclass(frozen=True)
class Pick:
    completion_id: int
    question_id: int
    reason: str

    def as_dict(self) -> dict:
        return {"completion_id": self.completion_id, "question_id": self.question_id, "reason": self.reason}


@dataclass
class SelectionResult:
    picks: list[Pick]
    report: dict

    @property
    def completion_ids(self) -> list[int]:
        return [pick.completion_id for pick in self.picks]

    def as_dict(self) -> dict:
        return {**self.report, "picks": [pick.as_dict() for pick in self.picks]}


@dataclass(frozen=True)
class SelectionFilters:
    """Keep candidates whose answer type (fine code like A1, or coarse class like A), domain and model are listed.
    An empty list admits everything."""

    answer_types: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    models: tuple[str, ...] = ()

    @classmethod
    def of(cls, answer_types: Iterable[str] = (), domains: Iterable[str] = (), models: Iterable[str] = ()):
        return cls(tuple(answer_types or ()), tuple(domains or ()), tuple(models or ()))

    def admits(self, candidate: Candidate) -> bool:
        if self.answer_types and not any(
            candidate.answer_type == wanted or (len(wanted) == 1 and candidate.answer_type[:1] == wanted)
            for wanted in self.answer_types
        ):
            return False
        if self.domains and candidate.domain not in self.domains:
            return False
        return not (self.models and candidate.model not in self.models)

    def apply(self, candidates: Iterable[Candidate]) -> tuple[list[Candidate], int]:
        """The admitted candidates and how many were filtered out."""
        kept, dropped = [], 0
        for candidate in candidates:
            if self.admits(candidate):
                kept.append(candidate)
            else:
                dropped += 1
        return kept, dropped

    def as_dict(self) -> dict:
        return {"answer_types": list(self.answer_types), "domains": list(self.domains), "models": list(self.models)}


def verifybench_selection(
    candidates: Iterable[Candidate],
    *,
    verifier: str,
    per_side: int = 2,
    seed: int | None = None,
    filters: SelectionFilters = SelectionFilters(),
) -> SelectionResult:
    """Per question, `per_side` completions `verifier` judged correct and `per_side` it judged incorrect."""
    if per_side < 1:
        raise SelectionError("per_side must be at least 1")
    kept, filtered_out = filters.apply(candidates)
    by_question: dict[int, list[Candidate]] = defaultdict(list)
    for candidate in kept:
        by_question[candidate.question_id].append(candidate)
    rng = random.Random(seed)
    picks: list[Pick] = []
    shortfalls = []
    unjudged = 0
    picked_sides: Counter[str] = Counter()
    for question_id in sorted(by_question):
        group = sorted(by_question[question_id], key=lambda c: c.completion_id)
        sides = {
            CORRECT: [c for c in group if c.votes.get(verifier) == CORRECT],
            INCORRECT: [c for c in group if c.votes.get(verifier) == INCORRECT],
        }
        unjudged += sum(1 for c in group if c.votes.get(verifier) not in (CORRECT, INCORRECT))
        for side, pool in sides.items():
            chosen = rng.sample(pool, per_side) if len(pool) > per_side else pool
            picked_sides[side] += len(chosen)
            for candidate in sorted(chosen, key=lambda c: c.completion_id):
                picks.append(
                    Pick(
                        candidate.completion_id,
                        question_id,
                        f"judged {side} by {verifier}; {len(chosen)} of {len(pool)} such completion(s) of question "
                        f"{question_id} picked at random",
                    )
                )
        if any(len(pool) < per_side for pool in sides.values()):
            shortfalls.append(
                {
                    "question_id": question_id,
                    "correct_available": len(sides[CORRECT]),
                    "incorrect_available": len(sides[INCORRECT]),
                    "missing_correct": max(0, per_side - len(sides[CORRECT])),
                    "missing_incorrect": max(0, per_side - len(sides[INCORRECT])),
                }
            )
    report = {
        "strategy": VERIFYBENCH,
        "parameters": {"verifier": verifier, "per_side": per_side, "seed": seed, "filters": filters.as_dict()},
        "candidates": len(kept) + filtered_out,
        "filtered_out": filtered_out,
        "questions": len(by_question),
        "questions_complete": len(by_question) - len(shortfalls),
        "questions_short": len(shortfalls),
        "without_decided_verdict": unjudged,
        "picked": len(picks),
        "picked_correct": picked_sides[CORRECT],
        "picked_incorrect": picked_sides[INCORRECT],
        "shortfalls": shortfalls,
    }
    return SelectionResult(picks, report)


def vote_split(candidate: Candidate, verifiers: Sequence[str]) -> tuple[int, int] | None:
    """(correct votes, incorrect votes) of the verifiers, or None when any of them has no verdict.
    An inconclusive verdict is an incorrect vote."""
    correct = incorrect = 0
    for name in verifiers:
        status = candidate.votes.get(name)
        if status is None:
            return None
        if status == CORRECT:
            correct += 1
        else:
            incorrect += 1
    return correct, incorrect


def is_contested(split: tuple[int, int], min_minority: int) -> bool:
    return min(split) >= min_minority


def proportional_allocation(sizes: Mapping[Any, int], target: int) -> dict[Any, int]:
    """Share `target` among strata in proportion to their sizes (largest remainder), never above a stratum's size.

    The shares add up to min(target, total size). Ties in the remainders go to the larger stratum, then to the
    stratum that sorts first, so the allocation is deterministic.
    """
    if target < 0:
        raise SelectionError("target must not be negative")
    total = sum(sizes.values())
    if target >= total:
        return dict(sizes)
    if total == 0:
        return {key: 0 for key in sizes}
    allocation, remainders = {}, []
    for key, size in sizes.items():
        quota = size * target
        allocation[key] = quota // total
        remainders.append((-(quota % total), -size, _sort_key(key), key))
    left = target - sum(allocation.values())
    for *_, key in sorted(remainders)[:left]:
        allocation[key] += 1
    return allocation


def _sort_key(key) -> tuple:
    return tuple(str(part) for part in key) if isinstance(key, tuple) else (str(key),)


def verifybench_hard_selection(
    candidates: Iterable[Candidate],
    *,
    verifiers: Sequence[str],
    target: int,
    min_minority: int = 2,
    seed: int | None = None,
    strata: Sequence[str] = STRATUM_FIELDS,
    filters: SelectionFilters = SelectionFilters(),
) -> SelectionResult:
    """Completions the verifiers disagree on, sampled by strata in proportion to their sizes, up to `target`."""
    verifiers = list(dict.fromkeys(verifiers))
    if len(verifiers) < 2:
        raise SelectionError("the VerifyBench-Hard recipe needs at least two verifiers")
    if not 1 <= min_minority <= len(verifiers) // 2:
        raise SelectionError(f"min_minority must be between 1 and {len(verifiers) // 2} for {len(verifiers)} verifiers")
    if target < 1:
        raise SelectionError("target must be at least 1")
    unknown = [name for name in strata if name not in STRATUM_FIELDS]
    if unknown:
        raise SelectionError(f"unknown strata {', '.join(unknown)}; choose from {', '.join(STRATUM_FIELDS)}")
    kept, filtered_out = filters.apply(candidates)
    incomplete = 0
    splits: Counter[str] = Counter()
    contested: dict[tuple, list[tuple[Candidate, tuple[int, int]]]] = defaultdict(list)
    for candidate in kept:
        split = vote_split(candidate, verifiers)
        if split is None:
            incomplete += 1
            continue
        splits[f"{split[0]} correct / {split[1]} incorrect"] += 1
        if is_contested(split, min_minority):
            contested[tuple(getattr(candidate, name) for name in strata)].append((candidate, split))
    sizes = {key: len(members) for key, members in contested.items()}
    allocation = proportional_allocation(sizes, target)
    rng = random.Random(seed)
    picks: list[Pick] = []
    for key in sorted(contested, key=_sort_key):
        members = sorted(contested[key], key=lambda member: member[0].completion_id)
        share = allocation[key]
        chosen = rng.sample(members, share) if share < len(members) else members
        label = ", ".join(f"{name}={value or '-'}" for name, value in zip(strata, key))
        for candidate, (correct, incorrect) in sorted(chosen, key=lambda member: member[0].completion_id):
            picks.append(
                Pick(
                    candidate.completion_id,
                    candidate.question_id,
                    f"verifiers split {correct} correct vs {incorrect} incorrect; stratum {label}: "
                    f"{share} of {len(members)} picked",
                )
            )
    contested_total = sum(sizes.values())
    report = {
        "strategy": VERIFYBENCH_HARD,
        "parameters": {
            "verifiers": verifiers,
            "target": target,
            "min_minority": min_minority,
            "seed": seed,
            "strata": list(strata),
            "filters": filters.as_dict(),
        },
        "candidates": len(kept) + filtered_out,
        "filtered_out": filtered_out,
        "missing_votes": incomplete,
        "vote_splits": dict(sorted(splits.items())),
        "contested": contested_total,
        "picked": len(picks),
        "shortfall": max(0, target - contested_total),
        "strata": [
            {**dict(zip(strata, key)), "available": sizes[key], "allocated": allocation[key]}
            for key in sorted(contested, key=_sort_key)
        ],
    }
    return SelectionResult(picks, report)


def cascade_selection(
    candidates: Iterable[Candidate],
    *,
    verifier: str,
    routes: Sequence[str] = CASCADE_ROUTES,
    target: int | None = None,
    seed: int | None = None,
    filters: SelectionFilters = SelectionFilters(),
) -> SelectionResult:
    """The completions the cascade `verifier` left to humans (for the given routes), at most `target` at random."""
    routes = list(dict.fromkeys(routes))
    if not routes or any(route not in CASCADE_ROUTES for route in routes):
        raise SelectionError(f"routes must be some of {', '.join(CASCADE_ROUTES)}")
    if target is not None and target < 1:
        raise SelectionError("target must be at least 1")
    kept, filtered_out = filters.apply(candidates)
    without_verdict = 0
    decided = 0
    routed: dict[str, list[Candidate]] = {route: [] for route in CASCADE_ROUTES}
    for candidate in kept:
        if verifier not in candidate.votes:
            without_verdict += 1
        elif verifier in candidate.routes:
            routed[candidate.routes[verifier]].append(candidate)
        else:
            decided += 1
    pool = sorted((c for route in routes for c in routed[route]), key=lambda c: c.completion_id)
    chosen = pool if target is None or target >= len(pool) else random.Random(seed).sample(pool, target)
    picks = [
        Pick(
            candidate.completion_id,
            candidate.question_id,
            "the rules and the judge disagreed"
            if candidate.routes[verifier] == DISPUTED
            else "neither the rules nor the judge could decide",
        )
        for candidate in sorted(chosen, key=lambda c: c.completion_id)
    ]
    by_route = Counter(candidate.routes[verifier] for candidate in chosen)
    report = {
        "strategy": CASCADE,
        "parameters": {
            "verifier": verifier,
            "routes": routes,
            "target": target,
            "seed": seed,
            "filters": filters.as_dict(),
        },
        "candidates": len(kept) + filtered_out,
        "filtered_out": filtered_out,
        "without_cascade_verdict": without_verdict,
        "decided_by_cascade": decided,
        "undecided": len(routed[UNDECIDED]),
        "disputed": len(routed[DISPUTED]),
        "picked": len(picks),
        "picked_undecided": by_route[UNDECIDED],
        "picked_disputed": by_route[DISPUTED],
    }
    return SelectionResult(picks, report)
