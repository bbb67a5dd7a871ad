"""Per-item seconds of the verifier on inputs built to escape its time limit, against limit + 0.5 s.

    python bench/verify_adversarial.py [--limit 2.0] [--smoke]

Prints one line per input (seconds, verdict, within or OVER the bound) for verify(), for extraction
alone on longer texts, for verify_batch and for verify() off the main thread (a child process does
the work there; its start-up is part of the first call). Exits non-zero when an item is over.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grading.answercheck import BatchItem, verify, verify_batch  # noqa: E402
from grading.answercheck.adversarial import ADVERSARIAL, EXTRACTION_TEXTS  # noqa: E402
from grading.answercheck.extract import extract_final_answer  # noqa: E402

SLACK = 0.5


def line(name: str, seconds: float, bound: float, note: str) -> bool:
    within = seconds <= bound
    print(f"{name:<44} {seconds:7.2f} s  {'ok  ' if within else 'OVER'}  {note}")
    return within


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=float, default=2.0, help="the verifier's time limit in seconds")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="two inputs of each kind at a 0.5 s limit, exit status 0 whatever the times: checks that it runs",
    )
    arguments = parser.parse_args(argv)
    if arguments.smoke:
        arguments.limit = 0.5
    limit, bound = arguments.limit, arguments.limit + SLACK
    adversarial = dict(list(ADVERSARIAL.items())[:2]) if arguments.smoke else ADVERSARIAL
    extraction_texts = dict(list(EXTRACTION_TEXTS.items())[:2]) if arguments.smoke else EXTRACTION_TEXTS
    print(
        f"time limit {limit:.1f} s, bound {bound:.1f} s; load average {Path('/proc/loadavg').read_text().split()[:3] if Path('/proc/loadavg').exists() else '?'}"
    )
    all_within = True
    worst = 0.0
    print("\nverify(), one item at a time")
    for name, (completion, reference) in adversarial.items():
        started = time.perf_counter()
        verdict = verify(completion, reference, timeout=limit)
        seconds = time.perf_counter() - started
        worst = max(worst, seconds)
        all_within &= line(name, seconds, bound, f"{verdict.status}: {verdict.explanation[:60]}")
    print("\nextraction alone")
    for name, text in extraction_texts.items():
        started = time.perf_counter()
        answer = extract_final_answer(text)
        seconds = time.perf_counter() - started
        all_within &= line(name, seconds, bound, f"answer {None if answer is None else answer[:20]!r}")
    print("\nverify_batch, 5 items one after another (bound: 5 x (limit + 0.5 s))")
    names = [
        "7000 unclosed boxes",
        "huge binomial",
        "700 nested braces",
        "5000 boxes",
        "two symbolic 12x12 determinants",
    ][: 2 if arguments.smoke else None]
    started = time.perf_counter()
    verdicts = verify_batch([BatchItem(*ADVERSARIAL[name]) for name in names], timeout=limit)
    seconds = time.perf_counter() - started
    all_within &= line("batch of 5", seconds, len(names) * bound, ", ".join(verdict.status for verdict in verdicts))
    print("\nverify() off the main thread (bound: limit + 0.5 s + 3 s of child start-up)")
    outcome: dict = {}

    def worker() -> None:
        begun = time.perf_counter()
        outcome["verdict"] = verify(*ADVERSARIAL["two symbolic 12x12 determinants"], timeout=limit)
        outcome["seconds"] = time.perf_counter() - begun

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    all_within &= line(
        "two symbolic 12x12 determinants, thread", outcome["seconds"], bound + 3, outcome["verdict"].status
    )
    print(f"\nslowest verify() item: {worst:.2f} s; all within the bound: {all_within}")
    sys.exit(0 if all_within or arguments.smoke else 1)


if __name__ == "__main__":
    main()
