"""Server-side rendering speed of a long completion (Markdown + TeX to sanitized HTML).

    DEBUG=1 .venv/bin/python bench/render_bench.py [--chars 20000] [--runs 200] [--smoke]

Prints p50/p95 in milliseconds for render_markdown and render_with_final_answer: wall-clock time, and the
CPU time of this process (less disturbed when other work shares the machine's cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from frontend.rendering import render_markdown, render_with_final_answer  # noqa: E402

STEP = """### Step {n}: bound the sum

Let $a_{n} = \\frac{{1}}{{n(n+1)}}$ for $n \\ge 1$. By partial fractions \\(a_n = \\frac{{1}}{{n}} - \\frac{{1}}{{n+1}}\\), so the
partial sums telescope:
$$
S_N = \\sum_{{k=1}}^{{N}} a_k = 1 - \\frac{{1}}{{N+1}} \\quad\\text{{for every }} N \\ge 1 .
$$
We also check a few **small cases** by hand:

1. $N = 1$: $S_1 = \\tfrac12$, which agrees with $1 - \\tfrac12$.
2. $N = 2$: $S_2 = \\tfrac23$; the *claimed* closed form gives the same value.
3. The limit is \\[ \\lim_{{N\\to\\infty}} S_N = 1 . \\]

```python
from fractions import Fraction
print(sum(Fraction(1, k * (k + 1)) for k in range(1, {n} + 2)))
```

> Note that $\\int_0^1 x^{{{n}}}\\,dx = \\frac{{1}}{{{n}+1}}$ gives a second check, and $|x - 1| < \\varepsilon$ holds.

"""


def make_completion(chars: int) -> str:
    parts, n = [], 1
    while sum(map(len, parts)) < chars - 200:
        parts.append(STEP.format(n=n))
        n += 1
    parts.append("Therefore the sum converges and the answer is $\\boxed{1}$.\n")
    return "".join(parts)


def timings(function, runs: int) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(runs):
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        function()
        cpu.append((time.process_time() - cpu_start) * 1000)
        wall.append((time.perf_counter() - wall_start) * 1000)
    return wall, cpu


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def report(name: str, samples: tuple[list[float], list[float]]) -> None:
    (wall50, wall95), (cpu50, cpu95) = percentiles(samples[0]), percentiles(samples[1])
    print(
        f"{name:<26} wall p50 {wall50:6.2f} ms  p95 {wall95:6.2f} ms | cpu p50 {cpu50:6.2f} ms  p95 {cpu95:6.2f} ms"
        f"  ({len(samples[0])} runs)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="2,000 characters, 3 runs: checks that it runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.chars, args.runs = 2000, 3
    text = make_completion(args.chars)
    answer_start = text.rindex("\\boxed{1}") + len("\\boxed{")
    span = (answer_start, answer_start + 1)
    for _ in range(5):
        render_with_final_answer(text, span)
    print(f"completion: {len(text)} characters, {text.count('$') // 2} dollar-delimited formulas")
    report("render_markdown", timings(lambda: render_markdown(text), args.runs))
    report("render_with_final_answer", timings(lambda: render_with_final_answer(text, span), args.runs))


if __name__ == "__main__":
    main()
