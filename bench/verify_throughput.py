"""Throughput of grading.answercheck.verify_batch on synthetic completions with realistic repetition.

    python bench/verify_throughput.py [--rows 100000] [--workers 2] [--math-verify-sample 2000]

Many completions to one question end in the same final answer, so the batch helper decides each
distinct (reference, extracted answer, type) once. math-verify has no such cache; it is timed on a
random sample and extrapolated to the full row count (the output says so).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grading.answercheck import BatchItem, verify_batch  # noqa: E402

# (answer type, reference, plausible final answers: the first is right, the rest are typical mistakes or variants)
QUESTION_TEMPLATES = [
    ("A1", "{n}", ["{n}", "{n1}", "{n} \\text{{ units}}", "{m}"]),
    ("A3", "\\frac{{{n}}}{{{d}}}", ["\\frac{{{n}}}{{{d}}}", "{dec}", "\\frac{{{d}}}{{{n}}}", "{dec_bad}"]),
    ("A2", "{n}\\pi", ["{n}\\pi", "\\pi {n}", "{n1}\\pi", "{pi_dec}"]),
    ("A4", "{n}\\sqrt{{2}}", ["{n}\\sqrt{{2}}", "\\sqrt{{{n2x2}}}", "{n}\\sqrt{{3}}"]),
    ("A5", "{n}+{m}i", ["{n}+{m}i", "{m}i+{n}", "{n}-{m}i"]),
    ("A8", "{n}, -{m}", ["{n}, -{m}", "-{m}, {n}", "x={n} \\text{{ or }} x=-{m}", "{n}"]),
    ("B1", "x^2+{n}x", ["x(x+{n})", "x^2+{n}x", "x^2+{n1}x"]),
    ("B3", "[{n}, {m2})", ["[{n}, {m2})", "({n}, {m2})", "{n} \\le x < {m2}"]),
    ("C1", "{letter}", ["{letter}", "({letter})", "{other}"]),
    ("C3", "Yes", ["Yes", "No", "yes"]),
]
STYLES = [
    "Let me solve this carefully.\n\nAfter simplifying, we obtain the result.\n\nTherefore, the final answer is $\\boxed{{{a}}}$.",
    "We compute step by step and check the edge cases.\n\nFinal answer: ${a}$",
    "Working through the algebra gives the value below.\n\n**Answer:** ${a}$",
]


def synthetic_rows(count: int, seed: int = 11) -> list[BatchItem]:
    generator = random.Random(seed)
    questions = []
    for index in range(count // 50):  # about 50 samples per question, as in Pass@k sampling
        code, reference, finals = QUESTION_TEMPLATES[index % len(QUESTION_TEMPLATES)]
        n, m, d = generator.randint(2, 90), generator.randint(2, 40), generator.choice([3, 7, 9, 11])
        values = {
            "n": n, "n1": n + 1, "m": m, "d": d, "m2": n + m, "n2x2": 2 * n * n,
            "dec": f"{n / d:.3f}", "dec_bad": f"{n / d + 0.01:.3f}", "pi_dec": f"{n * 3.14159265:.2f}",
            "letter": "ABCD"[index % 4], "other": "ABCD"[(index + 1) % 4],
        }
        questions.append((code, reference.format(**values), [final.format(**values) for final in finals]))
    rows = []
    for _ in range(count):
        code, reference, finals = generator.choice(questions)
        final = finals[0] if generator.random() < 0.55 else generator.choice(finals)
        completion = generator.choice(STYLES).format(a=final)
        rows.append(BatchItem(completion=completion, reference=reference, answer_type=code))
    return rows


def time_math_verify(rows: list[BatchItem], sample_size: int) -> tuple[float, int]:
    from math_verify import parse, verify

    sample = random.Random(5).sample(rows, min(sample_size, len(rows)))
    started = time.perf_counter()
    for row in sample:
        try:
            verify(parse(f"${row.reference}$"), parse(row.completion))
        except Exception:
            pass
    return time.perf_counter() - started, len(sample)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--math-verify-sample", type=int, default=2000)
    arguments = parser.parse_args()

    rows = synthetic_rows(arguments.rows)
    distinct = len({(row.reference, row.completion) for row in rows})
    print(f"{len(rows)} synthetic completions, {distinct} distinct (reference, completion) texts")

    started = time.perf_counter()
    verdicts = verify_batch(rows, timeout=arguments.timeout, workers=arguments.workers)
    elapsed = time.perf_counter() - started
    statuses = Counter(verdict.status for verdict in verdicts)
    print(
        f"answercheck.verify_batch, {arguments.workers} worker(s): {elapsed:.1f} s "
        f"({len(rows) / elapsed:,.0f} completions/s); {dict(statuses)}"
    )

    seconds, sampled = time_math_verify(rows, arguments.math_verify_sample)
    if sampled == len(rows):
        print(f"math-verify parse+verify, 1 process: {seconds:.1f} s on the same {sampled} rows (measured)")
    else:
        projected = seconds / sampled * len(rows)
        print(
            f"math-verify parse+verify, 1 process: {seconds:.1f} s on a random sample of {sampled} rows; "
            f"extrapolated to {len(rows)} rows: {projected:.0f} s (extrapolated, not measured)"
        )


if __name__ == "__main__":
    main()
