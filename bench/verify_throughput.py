"""Throughput of grading.answercheck.verify_batch on synthetic completions with realistic repetition.

    python bench/verify_throughput.py [--rows 100000] [--workers 2] [--math-verify-sample 2000] [--smoke]
    python bench/verify_throughput.py --distinct 2000 [--workers 1 2]

Many completions to one question end in the same final answer, so the batch helper decides each
distinct (reference, extracted answer, type) once. math-verify has no such cache; it is timed on a
random sample and extrapolated to the full row count (the output says so).

With --distinct N every row is different: N realistic completions of 1-8 KB of reasoning (prose,
inline and display math, intermediate results, self-checks) ending in varied answer forms, each
against its own reference, so no comparison can be reused. math-verify is timed on the same rows.
"""

from __future__ import annotations

import argparse
import importlib.util
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
            "n": n,
            "n1": n + 1,
            "m": m,
            "d": d,
            "m2": n + m,
            "n2x2": 2 * n * n,
            "dec": f"{n / d:.3f}",
            "dec_bad": f"{n / d + 0.01:.3f}",
            "pi_dec": f"{n * 3.14159265:.2f}",
            "letter": "ABCD"[index % 4],
            "other": "ABCD"[(index + 1) % 4],
        }
        questions.append((code, reference.format(**values), [final.format(**values) for final in finals]))
    rows = []
    for _ in range(count):
        code, reference, finals = generator.choice(questions)
        final = finals[0] if generator.random() < 0.55 else generator.choice(finals)
        completion = generator.choice(STYLES).format(a=final)
        rows.append(BatchItem(completion=completion, reference=reference, answer_type=code))
    return rows


REASONING_SENTENCES = [
    "Let $a = {x}$ and $b = {y}$, so that $a + b = {s}$ and $ab = {p}$.",
    "Substituting into the equation gives $\\frac{{{x}}}{{{y}}} + {z} = \\frac{{{x} + {z}\\cdot {y}}}{{{y}}}$.",
    "We check the case $n = {z}$ separately: the sum is ${s}$, which is consistent with the constraint.",
    "By the Pythagorean theorem, $c^2 = {x}^2 + {y}^2 = {q}$, hence $c = \\sqrt{{{q}}}$.",
    "Wait, let me double-check that step. Expanding $({x} + t)^2 = t^2 + {d}t + {xx}$ confirms it.",
    "The discriminant is $\\Delta = {y}^2 - 4\\cdot {x} \\cdot {z} = {disc}$, so there are two real roots.",
    "\\[\n\\sum_{{k=1}}^{{{z}}} k = \\frac{{{z}({z}+1)}}{{2}} = {tri}\n\\]",
    "Now consider the remaining {x} objects; each of them can be placed in {y} ways, giving {p} arrangements in total.",
    "So far we have {s} and {p}; combining these with the earlier bound $x \\le {q}$ narrows things down.",
    "Hmm, that does not look right, since ${x} \\times {y} = {p}$, not {s}. Let me redo the computation more carefully.",
]
DISTINCT_ENDINGS = [
    ("A1", "{n}", "Therefore, the final answer is $\\boxed{{{a}}}$.", ["{n}", "{n1}"]),
    (
        "A3",
        "\\frac{{{n}}}{{{d}}}",
        "**Final Answer**\n\\[\n\\boxed{{{a}}}\n\\]",
        ["\\frac{{{n}}}{{{d}}}", "{dec}", "\\frac{{{d}}}{{{n}}}"],
    ),
    ("A2", "{n}\\pi", "Thus the area is $\\boxed{{{a}}}$ square units.", ["{n}\\pi", "{n1}\\pi"]),
    ("A4", "{n}\\sqrt{{2}}", "Final answer: ${a}$", ["{n}\\sqrt{{2}}", "\\sqrt{{{n2x2}}}", "{n}\\sqrt{{3}}"]),
    (
        "A8",
        "{n}, -{m}",
        "The solutions are $x = {n}$ and $x = -{m}$, so the answer is $\\boxed{{{a}}}$.",
        ["{n}, -{m}", "-{m}, {n}", "{n}"],
    ),
    ("B1", "x^2+{n}x", "Hence $f(x) = \\boxed{{{a}}}$.", ["x(x+{n})", "x^2+{n1}x"]),
    ("B3", "[{n}, {m2})", "So the solution set is $\\boxed{{{a}}}$.", ["[{n}, {m2})", "({n}, {m2})"]),
    ("C1", "{letter}", "The answer is ({a}).", ["{letter}", "{other}"]),
    ("A1", "{n}", "So there are ${a}$ ways in total.", ["{n}", "{n1}"]),
]


def distinct_rows(count: int, seed: int = 23) -> list[BatchItem]:
    """`count` different rows, each with 1-8 KB of reasoning and its own reference."""
    generator = random.Random(seed)
    rows = []
    for index in range(count):
        code, reference, ending, finals = DISTINCT_ENDINGS[index % len(DISTINCT_ENDINGS)]
        n, m, d = 100 + index, generator.randint(2, 400), generator.choice([3, 7, 9, 11, 13])
        values = {
            "n": n,
            "n1": n + 1,
            "m": m,
            "d": d,
            "m2": n + m,
            "n2x2": 2 * n * n,
            "dec": f"{n / d:.4f}",
            "letter": "ABCD"[index % 4],
            "other": "ABCD"[(index + 1) % 4],
        }
        target = generator.uniform(1000, 8000)
        parts = []
        while sum(len(part) + 2 for part in parts) < target:
            x, y, z = generator.randint(2, 99), generator.randint(2, 99), generator.randint(2, 40)
            parts.append(
                generator.choice(REASONING_SENTENCES).format(
                    x=x,
                    y=y,
                    z=z,
                    s=x + y,
                    p=x * y,
                    q=x * x + y * y,
                    d=2 * x,
                    xx=x * x,
                    disc=y * y - 4 * x * z,
                    tri=z * (z + 1) // 2,
                )
            )
        final = generator.choice(finals).format(**values)
        completion = "\n\n".join(parts) + "\n\n" + ending.format(a=final, **values)
        rows.append(BatchItem(completion=completion, reference=reference.format(**values), answer_type=code))
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


def run_distinct(count: int, workers_list: list[int], timeout: float) -> None:
    rows = distinct_rows(count)
    sizes = sorted(len(row.completion) for row in rows)
    print(
        f"{len(rows)} distinct rows, completions {sizes[0]:,}-{sizes[-1]:,} characters (median {sizes[len(sizes) // 2]:,}); "
        f"{len({(row.reference, row.completion) for row in rows})} distinct (reference, completion) texts"
    )
    timings = {}
    for workers in workers_list:
        started = time.perf_counter()
        verdicts = verify_batch(rows, timeout=timeout, workers=workers)
        timings[workers] = time.perf_counter() - started
        statuses = Counter(verdict.status for verdict in verdicts)
        print(
            f"answercheck.verify_batch, {workers} worker(s): {timings[workers]:.2f} s ({len(rows) / timings[workers]:,.0f} rows/s); {dict(statuses)}"
        )
    seconds, sampled = time_math_verify(rows, len(rows))
    print(f"math-verify parse+verify, 1 process: {seconds:.2f} s on the same {sampled} rows (measured)")
    for workers, elapsed in timings.items():
        print(f"  speed-up over math-verify with {workers} worker(s): {seconds / elapsed:.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--math-verify-sample", type=int, default=2000)
    parser.add_argument(
        "--distinct", type=int, metavar="N", help="N distinct realistic rows (1-8 KB each) instead of repeated ones"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="200 rows on one worker, math-verify on 20 of them (left out when it is not installed): checks that it runs",
    )
    arguments = parser.parse_args(argv)
    if arguments.smoke:
        arguments.rows, arguments.workers, arguments.math_verify_sample = 200, [1], 20

    if arguments.distinct:
        run_distinct(arguments.distinct, arguments.workers, arguments.timeout)
        return

    rows = synthetic_rows(arguments.rows)
    distinct = len({(row.reference, row.completion) for row in rows})
    print(f"{len(rows)} synthetic completions, {distinct} distinct (reference, completion) texts")

    for workers in arguments.workers:
        started = time.perf_counter()
        verdicts = verify_batch(rows, timeout=arguments.timeout, workers=workers)
        elapsed = time.perf_counter() - started
        statuses = Counter(verdict.status for verdict in verdicts)
        print(
            f"answercheck.verify_batch, {workers} worker(s): {elapsed:.1f} s "
            f"({len(rows) / elapsed:,.0f} completions/s); {dict(statuses)}"
        )

    if arguments.smoke and importlib.util.find_spec("math_verify") is None:
        print("math-verify is not installed (make bench-install): its figures are left out")
        return
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
