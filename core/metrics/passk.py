"""Model stability metrics of LiveMathBench: Pass@k, G-Pass@k_tau and mG-Pass@k.

For a question answered n times, c of them correctly:

- Pass@k        = 1 - C(n-c, k) / C(n, k)
- G-Pass@k_tau  = sum_{j=ceil(tau*k)}^{c} C(c, j) C(n-c, k-j) / C(n, k),  tau in (0, 1]
- mG-Pass@k     = (2/k) sum_{i=ceil(k/2)+1}^{k} G-Pass@k_{i/k}

All three are computed with exact integer combinatorics (`math.comb` and `fractions.Fraction`) and turned
into floats only at the end, so n in the thousands neither overflows nor loses precision. Tau is read
through its decimal spelling (0.7 means 7/10 exactly), so ceil(0.7 * 10) is 7, not 8.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

from core.metrics.bootstrap import bootstrap_grouped_mean_ci, bootstrap_mean_ci

TauLike = float | int | str | Fraction | Decimal

QUESTIONS_NAMED = 5  # a warning about some questions names this many of them

# LiveMathBench recommends at least 3k samples per question for a stable estimate.
RECOMMENDED_SAMPLES_PER_K = 3


def _check_counts(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if n < 1:
        raise ValueError(f"n (samples) must be >= 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c (correct samples) must be within [0, n={n}], got {c}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k > n:
        raise ValueError(f"k={k} exceeds the number of samples n={n}")


def tau_fraction(tau: TauLike) -> Fraction:
    """The exact value of a threshold tau in (0, 1]; floats are read through their shortest decimal spelling."""
    if isinstance(tau, bool):
        raise ValueError(f"tau must be a number in (0, 1], got {tau!r}")
    try:
        if isinstance(tau, float):
            value = Fraction(repr(tau))
        elif isinstance(tau, str):
            value = Fraction(tau.strip())
        else:
            value = Fraction(tau)
    except (ValueError, TypeError, ZeroDivisionError) as error:
        raise ValueError(f"tau must be a number in (0, 1], got {tau!r}") from error
    if not 0 < value <= 1:
        raise ValueError(f"tau must be in (0, 1], got {tau!r}")
    return value


def tau_label(tau: TauLike) -> str:
    """The spelling of tau used in metric names: a string is kept as given, anything else goes through str()."""
    return tau.strip() if isinstance(tau, str) else str(tau)


def _subsets_with_at_least(n: int, c: int, k: int) -> list[int]:
    """`counts[t]` = number of k-subsets of the n samples holding at least t correct ones, for t = 0 .. k+1.

    One pass over the hypergeometric terms serves every threshold, so all G-Pass@k_tau and mG-Pass@k of a
    question cost O(k) big-integer products. math.comb gives 0 when k-j exceeds the n-c incorrect samples.
    """
    counts = [0] * (k + 2)
    for j in range(min(c, k), -1, -1):
        counts[j] = counts[j + 1] + math.comb(c, j) * math.comb(n - c, k - j)
    return counts


def _mg_start(k: int) -> int:
    return math.ceil(Fraction(k, 2)) + 1


def _g_pass_from_threshold(n: int, c: int, k: int, least_correct: int) -> Fraction:
    """Probability that a k-subset drawn without replacement holds at least `least_correct` correct samples."""
    counts = _subsets_with_at_least(n, c, k)
    return Fraction(counts[min(max(least_correct, 0), k + 1)], math.comb(n, k))


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Pass@k as an exact fraction: the chance that at least one of k samples drawn from n is correct."""
    _check_counts(n, c, k)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def g_pass_at_k_exact(n: int, c: int, k: int, tau: TauLike) -> Fraction:
    """G-Pass@k_tau as an exact fraction: the chance that at least ceil(tau*k) of k drawn samples are correct."""
    _check_counts(n, c, k)
    threshold = math.ceil(tau_fraction(tau) * k)
    return _g_pass_from_threshold(n, c, k, threshold)


def mg_pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """mG-Pass@k as an exact fraction: (2/k) times the sum of G-Pass@k_{i/k} for i = ceil(k/2)+1 .. k.

    For k = 1 the sum is empty and the value is 0, as the definition gives.
    """
    _check_counts(n, c, k)
    counts = _subsets_with_at_least(n, c, k)
    # ceil((i/k) * k) == i, so G-Pass@k_{i/k} needs at least i correct samples.
    return Fraction(2 * sum(counts[_mg_start(k) : k + 1]), k * math.comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Pass@k = 1 - C(n-c, k) / C(n, k). Raises ValueError for k > n or counts out of range."""
    return float(pass_at_k_exact(n, c, k))


def g_pass_at_k(n: int, c: int, k: int, tau: TauLike) -> float:
    """G-Pass@k_tau = sum_{j=ceil(tau*k)}^{c} C(c,j) C(n-c,k-j) / C(n,k), tau in (0, 1]."""
    return float(g_pass_at_k_exact(n, c, k, tau))


def mg_pass_at_k(n: int, c: int, k: int) -> float:
    """mG-Pass@k = (2/k) sum_{i=ceil(k/2)+1}^{k} G-Pass@k_{i/k}."""
    return float(mg_pass_at_k_exact(n, c, k))


def suggested_ks(samples_per_question: int, count: int = 3) -> list[int]:
    """Values of k that suit questions answered n times each, ascending.

    The `count` largest powers of two k >= 2 with n >= 3k, as LiveMathBench recommends (its 48 samples give 4, 8,
    16); when n < 6 leaves none, the largest with n >= k (n = 4 gives 2, 4), whose estimates are noisier. One sample
    gives [1]: Pass@1 is then all there is to measure, since G-Pass@k asks how many of k samples of a question are
    correct.
    """
    n = samples_per_question
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"samples per question must be a positive integer, got {n!r}")
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if n == 1:
        return [1]
    powers = [2**exponent for exponent in range(1, n.bit_length())]  # 2, 4, ... up to n
    recommended = [k for k in powers if RECOMMENDED_SAMPLES_PER_K * k <= n]
    return (recommended or powers)[-count:]


def follows_recommendation(samples_per_question: int, ks: Iterable[int]) -> bool:
    """Whether every k has at least 3k samples per question (LiveMathBench's recommendation)."""
    return all(RECOMMENDED_SAMPLES_PER_K * k <= samples_per_question for k in ks)


def pass_key(k: int) -> str:
    return f"pass@{k}"


def g_pass_key(k: int, tau: TauLike) -> str:
    return f"g-pass@{k}_{tau_label(tau)}"


def mg_pass_key(k: int) -> str:
    return f"mg-pass@{k}"


def normalize_sample_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Check one sample row `{question_id, model, correct, sample_index?, greedy?}` and return it cleaned.

    `correct` and `greedy` must be booleans (0 and 1 are accepted too). Raises ValueError naming the field.
    """
    if not isinstance(row, Mapping):
        raise ValueError(f"a row must be an object, got {type(row).__name__}")
    missing = [field for field in ("question_id", "model", "correct") if field not in row]
    if missing:
        raise ValueError(f"missing field(s): {', '.join(missing)}")
    question_id = row["question_id"]
    if question_id is None or isinstance(question_id, (bool, list, dict)) or str(question_id).strip() == "":
        raise ValueError(f"question_id must be a non-empty string or integer, got {question_id!r}")
    model = row["model"]
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    sample_index = row.get("sample_index")
    if sample_index is not None and (isinstance(sample_index, bool) or not isinstance(sample_index, int)):
        raise ValueError(f"sample_index must be an integer, got {sample_index!r}")
    return {
        "question_id": question_id,
        "model": model.strip(),
        "correct": _as_bool("correct", row["correct"]),
        "sample_index": sample_index,
        "greedy": _as_bool("greedy", row.get("greedy", False) or False),
    }


def _as_bool(field: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{field} must be true or false, got {value!r}")


def _describe_questions(question_ids: list[Hashable], limit: int = QUESTIONS_NAMED) -> str:
    shown = ", ".join(str(q) for q in question_ids[:limit])
    more = len(question_ids) - limit
    return f"{shown} and {more} more" if more > 0 else shown


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _checked_parameters(
    ks: Sequence[int], taus: Sequence[TauLike], bootstrap: int
) -> tuple[list[int], list[tuple[str, Fraction]]]:
    ks = list(dict.fromkeys(ks))
    if not ks:
        raise ValueError("at least one k is required")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
    tau_items: list[tuple[str, Fraction]] = []
    seen_labels: set[str] = set()
    for tau in taus:
        label = tau_label(tau)
        if label not in seen_labels:
            seen_labels.add(label)
            tau_items.append((label, tau_fraction(tau)))
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    return ks, tau_items


def _question_figures(n: int, c: int, k: int, tau_items: Sequence[tuple[str, Fraction]]) -> dict[str, float]:
    """Pass@k, every G-Pass@k_tau and mG-Pass@k of one question answered n times, c of them correctly."""
    counts = _subsets_with_at_least(n, c, k)
    subsets = math.comb(n, k)
    figures = {pass_key(k): float(Fraction(counts[1], subsets))}
    for label, tau in tau_items:
        figures[g_pass_key(k, label)] = float(Fraction(counts[math.ceil(tau * k)], subsets))
    figures[mg_pass_key(k)] = float(Fraction(2 * sum(counts[_mg_start(k) : k + 1]), k * subsets))
    return figures


def evaluate_models(
    rows: Iterable[Mapping[str, Any]],
    ks: Sequence[int],
    taus: Sequence[TauLike],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Pass@k, G-Pass@k_tau and mG-Pass@k per model, averaged over questions, with bootstrap intervals.

    `rows` are samples `{question_id, model, correct, sample_index?, greedy?}`. Samples flagged `greedy`
    give the greedy accuracy only; every other sample counts towards n and c of its question.

    Returns::

        {"models": {model: {
             "n_questions": int,                       # questions with at least one sampled answer
             "samples_per_question": {"min": int, "max": int},
             "accuracy": float,                        # mean correctness over all sampled answers
             "greedy_accuracy": float | None,          # over greedy answers, None when there are none
             "pass@4": float | None, "g-pass@4_0.5": float | None, "mg-pass@4": float | None, ...,
             "questions": {"pass@4": int, ...},        # questions each figure averages over
             "ci": {"pass@4": [low, high] | None, ...},  # 95% percentile bootstrap over questions
         }},
         "warnings": [str, ...]}

    A k larger than a question's n is skipped for that question (and said in `warnings`); a figure
    with no question left is None. A question with fewer than 3k samples is flagged in `warnings` (for k >= 2).
    Tau keys use the caller's spelling (`"0.25"` stays "0.25", `1.0` becomes "1.0").
    Raises ValueError for bad k or tau values, malformed rows or a repeated sample index.
    """
    ks, tau_items = _checked_parameters(ks, taus, bootstrap)

    sampled: dict[str, dict[Hashable, list[bool]]] = defaultdict(lambda: defaultdict(list))
    greedy: dict[str, list[bool]] = defaultdict(list)
    seen_indices: set[tuple[str, Hashable, bool, int]] = set()
    for position, raw in enumerate(rows, start=1):
        try:
            row = normalize_sample_row(raw)
        except ValueError as error:
            raise ValueError(f"row {position}: {error}") from error
        if row["sample_index"] is not None:
            identity = (row["model"], row["question_id"], row["greedy"], row["sample_index"])
            if identity in seen_indices:
                raise ValueError(
                    f"row {position}: sample_index {row['sample_index']} repeats for model "
                    f"{row['model']!r} and question {row['question_id']!r}"
                )
            seen_indices.add(identity)
        if row["greedy"]:
            greedy[row["model"]].append(row["correct"])
            sampled[row["model"]]  # a model with only greedy answers still gets an entry
        else:
            sampled[row["model"]][row["question_id"]].append(row["correct"])

    warnings: list[str] = []
    models: dict[str, Any] = {}
    for model in sorted(sampled):
        # A fixed question order makes the bootstrap independent of the order of the input rows.
        questions = dict(sorted(sampled[model].items(), key=lambda item: (type(item[0]).__name__, str(item[0]))))
        per_question: dict[str, list[float]] = {}
        for k in ks:
            per_question[pass_key(k)] = []
            for label, _ in tau_items:
                per_question[g_pass_key(k, label)] = []
            per_question[mg_pass_key(k)] = []

        for k in ks:
            too_few: list[Hashable] = []
            skipped: list[Hashable] = []
            for question_id, outcomes in questions.items():
                n, c = len(outcomes), sum(outcomes)
                if k > n:
                    skipped.append(question_id)
                    continue
                # With k = 1 every figure is the question's accuracy: there is no stability to estimate.
                if k > 1 and n < RECOMMENDED_SAMPLES_PER_K * k:
                    too_few.append(question_id)
                for key, value in _question_figures(n, c, k, tau_items).items():
                    per_question[key].append(value)
            if skipped:
                warnings.append(
                    f"{model}: k={k} exceeds the number of samples of {len(skipped)} question(s) "
                    f"({_describe_questions(skipped)}); k={k} is skipped for them"
                )
            if too_few:
                warnings.append(
                    f"{model}: {len(too_few)} question(s) have fewer than {RECOMMENDED_SAMPLES_PER_K}k = "
                    f"{RECOMMENDED_SAMPLES_PER_K * k} samples for k={k} ({_describe_questions(too_few)})"
                )
        if not questions:
            warnings.append(f"{model}: no sampled (non-greedy) answers; only greedy accuracy is reported")

        counts = [len(outcomes) for outcomes in questions.values()]
        all_outcomes = [outcome for outcomes in questions.values() for outcome in outcomes]
        entry: dict[str, Any] = {
            "n_questions": len(questions),
            "samples_per_question": {"min": min(counts), "max": max(counts)} if counts else None,
            "accuracy": _mean(all_outcomes),
            "greedy_accuracy": _mean(greedy[model]) if greedy.get(model) else None,
        }
        for key, values in per_question.items():
            entry[key] = _mean(values)
        entry["questions"] = {key: len(values) for key, values in per_question.items()}
        entry["ci"] = {}
        for key, values in per_question.items():
            interval = bootstrap_mean_ci(values, resamples=bootstrap, seed=seed)
            entry["ci"][key] = list(interval) if interval is not None else None
        models[model] = entry
    return {"models": models, "warnings": warnings}


Examples = Callable[[str, int, int], list[Hashable]]
"""examples(model, fewest, fewer_than): the first few question ids (in the order `evaluate_models` names them) of
the model's questions with fewest <= n < fewer_than sampled answers."""


def evaluate_counts(
    question_counts: Mapping[str, Mapping[tuple[int, int], int]],
    greedy: Mapping[str, tuple[int, int]],
    ks: Sequence[int],
    taus: Sequence[TauLike],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    examples: Examples | None = None,
) -> dict[str, Any]:
    """`evaluate_models` from counts instead of samples: per model, `question_counts[model][(n, c)]` questions with
    n sampled answers of which c are correct, and `greedy[model]` = (greedy answers, correct ones).

    The figures of a question depend only on its n and c, so each is computed once per (n, c) and averaged with
    the number of questions as weight: the same means, warnings and shape as `evaluate_models` over the samples
    these counts come from, in time that grows with the number of distinct (n, c), not of questions. The bootstrap
    intervals resample questions as `evaluate_models` does (`bootstrap_grouped_mean_ci`), with other draws.
    Warnings name questions through `examples` (the first five, as `evaluate_models` does), or only count them.
    """
    ks, tau_items = _checked_parameters(ks, taus, bootstrap)
    for model, by_counts in question_counts.items():
        for (n, c), questions in by_counts.items():
            if questions < 0 or (questions and not 0 <= c <= n) or (questions and n < 1):
                raise ValueError(f"{model}: {questions} question(s) with c={c} of n={n} samples")

    def describe(model: str, fewest: int, fewer_than: int, total: int) -> str:
        shown = examples(model, fewest, fewer_than) if examples is not None else []
        return _describe_count(shown, total)

    warnings: list[str] = []
    models: dict[str, Any] = {}
    for model in sorted(set(question_counts) | set(greedy)):
        groups = sorted((nc, questions) for nc, questions in question_counts.get(model, {}).items() if questions > 0)
        entry_figures: dict[str, tuple[list[float], list[int]]] = {}
        for k in ks:
            keys = [pass_key(k), *(g_pass_key(k, label) for label, _ in tau_items), mg_pass_key(k)]
            for key in keys:
                entry_figures[key] = ([], [])
            skipped = sum(questions for (n, _), questions in groups if n < k)
            too_few = 0 if k == 1 else sum(questions for (n, _), questions in groups if k <= n < 3 * k)
            for (n, c), questions in groups:
                if n < k:
                    continue
                for key, value in _question_figures(n, c, k, tau_items).items():
                    entry_figures[key][0].append(value)
                    entry_figures[key][1].append(questions)
            if skipped:
                warnings.append(
                    f"{model}: k={k} exceeds the number of samples of {skipped} question(s)"
                    f"{describe(model, 1, k, skipped)}; k={k} is skipped for them"
                )
            if too_few:
                warnings.append(
                    f"{model}: {too_few} question(s) have fewer than {RECOMMENDED_SAMPLES_PER_K}k = "
                    f"{RECOMMENDED_SAMPLES_PER_K * k} samples for k={k}"
                    f"{describe(model, k, RECOMMENDED_SAMPLES_PER_K * k, too_few)}"
                )
        if not groups:
            warnings.append(f"{model}: no sampled (non-greedy) answers; only greedy accuracy is reported")
        samples = sum(n * questions for (n, _), questions in groups)
        correct = sum(c * questions for (_, c), questions in groups)
        greedy_n, greedy_c = greedy.get(model, (0, 0))
        entry: dict[str, Any] = {
            "n_questions": sum(questions for _, questions in groups),
            "samples_per_question": {"min": groups[0][0][0], "max": max(n for (n, _), _ in groups)} if groups else None,
            "accuracy": correct / samples if samples else None,
            "greedy_accuracy": greedy_c / greedy_n if greedy_n else None,
        }
        for key, (values, weights) in entry_figures.items():
            entry[key] = sum(v * w for v, w in zip(values, weights, strict=True)) / sum(weights) if weights else None
        entry["questions"] = {key: sum(weights) for key, (_, weights) in entry_figures.items()}
        entry["ci"] = {}
        for key, (values, weights) in entry_figures.items():
            interval = bootstrap_grouped_mean_ci(values, weights, resamples=bootstrap, seed=seed)
            entry["ci"][key] = list(interval) if interval is not None else None
        models[model] = entry
    return {"models": models, "warnings": warnings}


def _describe_count(shown: Sequence[Hashable], total: int) -> str:
    """ " (a, b, c and 4 more)" after the number of questions, or nothing when none is named."""
    if not shown:
        return ""
    more = total - len(shown)
    text = ", ".join(str(q) for q in shown)
    return f" ({text} and {more} more)" if more > 0 else f" ({text})"
