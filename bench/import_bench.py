"""Benchmark of the JSONL import on PostgreSQL with a synthetic VerifyBench-style file.

    .venv/bin/python bench/import_bench.py [--database-url postgres://...] [--completions 200000 --questions 20000] [--smoke]

The file has one completion per line with the public VerifyBench fields. Question and completion texts are
log-uniformly distributed between 1 KB and 20 KB (median about 4.5 KB, mean about 6.3 KB): prose, LaTeX and a few
non-ASCII symbols cut from a fixed pseudo-random corpus, so they compress like real text. It is generated once and
cached under var/bench/. The import then runs in a fresh child process against an empty benchmark database (its
tables are truncated first), and the script prints the wall and CPU time, rows per second and the peak resident
memory of that process (and of its children).

In the same process it first imports the file with no text search at all (the triggers that record new texts for
the search disabled: the baseline), then with the text search as it is (the import records its texts; their search
documents are computed after it commits, as the task it sends does, and timed apart). `--expression-indexes` also
times the earlier schema, GIN indexes on `to_tsvector('english', text)` maintained inside the import.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from bench_database import ensure_database  # noqa: E402  (bench/ is the script's own folder)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BENCH_DB = "mathlabel_import_bench"
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
DATASET = "import-bench"

MODELS = [
    "Qwen2.5-7B-Instruct",
    "Qwen2.5-72B-Instruct",
    "Llama-3.1-8B-Instruct",
    "Llama-3.3-70B-Instruct",
    "DeepSeek-R1-Distill-Qwen-7B",
    "DeepSeek-V3",
    "gpt-4o-mini",
    "gpt-4o",
    "claude-3.5-sonnet",
    "gemini-1.5-pro",
    "Mistral-Large",
    "Yi-1.5-34B",
    "phi-4",
    "QwQ-32B",
    "Qwen3-32B",
    "internlm3-8b",
    "glm-4-9b",
    "gemma-2-27b",
]
SOURCES = [
    "math_reasoning/MATH",
    "math_reasoning/GSM8K",
    "math_reasoning/OlympiadBench",
    "math_reasoning/AIME",
    "logic_reasoning/ZebraLogic",
    "logic_reasoning/BBH",
    "general_reasoning/MMLU-Pro",
    "general_reasoning/GPQA",
]
ANSWER_TYPES = [
    ("A1 - Integer", "A - Numeric Values"),
    ("A2 - Constant", "A - Numeric Values"),
    ("A3 - Fraction/Float", "A - Numeric Values"),
    ("A4 - Radical", "A - Numeric Values"),
    ("A5 - Complex Number", "A - Numeric Values"),
    ("A6 - Angle", "A - Numeric Values"),
    ("A7 - Non-decimal number", "A - Numeric Values"),
    ("A8 - Multiple Values", "A - Numeric Values"),
    ("B1 - Algebraic formula", "B - Expressions"),
    ("B2 - Equation", "B - Expressions"),
    ("B3 - Interval", "B - Expressions"),
    ("B4 - Set", "B - Expressions"),
    ("B5 - Matrix/Vector", "B - Expressions"),
    ("C1 - Single Choice", "C - Multiple Choice"),
    ("C2 - Multiple Choice", "C - Multiple Choice"),
    ("C4 - Finite state selection", "C - Multiple Choice"),
    ("D1 - Specific", "D - String"),
    ("D2 - Semantic", "D - String"),
]
WORDS = (
    "let we have therefore since the of and is a an so thus hence it follows that consider suppose equation "
    "function integer prime divisor sum product sequence series limit derivative integral triangle circle "
    "angle radius polynomial root real complex matrix vector set interval probability expected value "
    r"$x$ $y$ $n$ $k$ $x^2+y^2=r^2$ $\frac{a}{b}$ $\sqrt{2}$ $\pi$ $e^{i\theta}$ $\sum_{k=1}^{n} k$ "
    r"$\int_0^1 f(x)\,dx$ $\binom{n}{k}$ $a_n$ $\le$ $\ge$ $\cdot$ \boxed{42} ≤ ≥ π √ ∑ → ∞ Step: Answer:"
).split()

MIN_TEXT, MAX_TEXT = 1024, 20 * 1024


def build_corpus(rng: random.Random, size: int = 4 * 1024 * 1024) -> str:
    parts, length = [], 0
    while length < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 24))) + (
            ".\n" if rng.random() < 0.3 else ". "
        )
        parts.append(sentence)
        length += len(sentence)
    return "".join(parts)


def text_of(rng: random.Random, corpus: str, label: str) -> str:
    length = int(math.exp(rng.uniform(math.log(MIN_TEXT), math.log(MAX_TEXT))))
    start = rng.randrange(0, len(corpus) - length)
    return f"[{label}] " + corpus[start : start + length]


def generate(path: Path, questions: int, completions: int, seed: int) -> None:
    rng = random.Random(seed)
    corpus = build_corpus(rng)
    per_question = completions // questions
    extra = completions - per_question * questions
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with open(partial, "w", encoding="utf-8") as out:
        completion_id = 0
        for question_index in range(questions):
            answer_type, answer_subtype = ANSWER_TYPES[question_index % len(ANSWER_TYPES)]
            question = text_of(rng, corpus, f"q{question_index}")
            answer = str(rng.randint(0, 10_000))
            source = SOURCES[question_index % len(SOURCES)]
            for sample in range(per_question + (1 if question_index < extra else 0)):
                completion_id += 1
                line = {
                    "question_id": question_index,
                    "question": question,
                    "answer": answer,
                    "completion_id": completion_id,
                    "completion": text_of(rng, corpus, f"c{completion_id}"),
                    "completion_model": MODELS[(question_index + sample) % len(MODELS)],
                    "gold_correct": rng.random() < 0.5,
                    "answer_type": answer_type,
                    "answer_subtype": answer_subtype,
                    "source": source,
                    "annotator": [f"annotator-{rng.randint(1, 12)}", f"annotator-{rng.randint(13, 24)}"],
                }
                out.write(json.dumps(line) + "\n")
    partial.rename(path)


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("SECRET_KEY", "import-benchmark-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(REPO_ROOT))
    import django

    django.setup()


def reset(dataset_model) -> None:
    """Empty the benchmark database's datasets (and everything that hangs off them) in one statement."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {connection.ops.quote_name(dataset_model._meta.db_table)} RESTART IDENTITY CASCADE")


SEARCHED = (
    ("verifybench_question", "verifybench_questionsearch"),
    ("verifybench_completion", "verifybench_completionsearch"),
)


@contextmanager
def search_documents_off():
    """The baseline's schema: no search work at all (the triggers that record new texts disabled)."""
    from django.db import connection

    def switch(state: str) -> None:
        with connection.cursor() as cursor:
            for table, search in SEARCHED:
                cursor.execute(f"ALTER TABLE {table} {state} TRIGGER {search}_inserted")

    switch("DISABLE")
    try:
        yield
    finally:
        switch("ENABLE")


@contextmanager
def expression_indexes():
    """The earlier schema, for comparison: GIN indexes on to_tsvector('english', text), maintained inside the COPY."""
    from django.db import connection

    with connection.cursor() as cursor:
        for table, _search in SEARCHED:
            cursor.execute(
                f"CREATE INDEX {table}_bench_text_search ON {table} USING gin (to_tsvector('english', text))"
            )
    try:
        with search_documents_off():
            yield
    finally:
        with connection.cursor() as cursor:
            for table, _search in SEARCHED:
                cursor.execute(f"DROP INDEX {table}_bench_text_search")


def timed_import(services, args, title: str) -> dict:
    started, cpu_started = time.perf_counter(), time.process_time()
    report = services.import_jsonl(dataset_name=DATASET, source=args.file, progress=False)
    elapsed = time.perf_counter() - started
    return {
        "run": title,
        "seconds": round(elapsed, 2),
        "cpu_seconds": round(time.process_time() - cpu_started, 2),
        "lines_per_second": round(report.lines / elapsed),
        "questions_created": report.questions_created,
        "completions_created": report.completions_created,
        "completions_unchanged": report.completions_unchanged,
        "prior_labels_created": report.prior_labels_created,
    }


def run_import(args) -> None:
    """The measured part, in its own process so that generating the file does not count towards its memory."""
    setup_django(args.database_url)
    from django.core.management import call_command

    from verifybench import services
    from verifybench.models import Dataset

    call_command("migrate", verbosity=0)
    results = []
    if not args.no_baseline:
        reset(Dataset)
        with search_documents_off():
            results.append(timed_import(services, args, "baseline, no text search"))
    reset(Dataset)
    results.append(timed_import(services, args, "first import, text search kept"))
    started = time.perf_counter()
    documents = services.index_search_documents()
    elapsed = time.perf_counter() - started
    results.append(
        {
            "run": "search documents",
            "seconds": round(elapsed, 2),
            "documents": documents,
            "per_second": round(documents / elapsed),
        }
    )
    if args.reimport:
        results.append(timed_import(services, args, "re-import"))
    if args.expression_indexes:
        reset(Dataset)
        with expression_indexes():
            results.append(timed_import(services, args, "earlier schema, expression GIN indexes"))
    if not args.keep:
        reset(Dataset)
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"runs": results, "peak_rss_kb": self_rss, "children_peak_rss_kb": children_rss}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help=f"PostgreSQL URL (default: creates {DEFAULT_BENCH_DB} locally)")
    parser.add_argument("--questions", type=int, default=20_000)
    parser.add_argument("--completions", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--file", type=Path, help="the JSONL file to import (generated if it does not exist)")
    parser.add_argument("--reimport", action="store_true", help="import the same file a second time and time it")
    parser.add_argument("--keep", action="store_true", help="keep the imported dataset afterwards")
    parser.add_argument("--no-baseline", action="store_true", help="skip the import without text search")
    parser.add_argument(
        "--expression-indexes",
        action="store_true",
        help="also time the import with the earlier GIN indexes on to_tsvector(text) (several times slower)",
    )
    parser.add_argument("--run-import", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="50 completions, imported twice: checks that it runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.questions, args.completions, args.reimport = 10, 50, True
    if args.file is None:
        args.file = REPO_ROOT / "var" / "bench" / f"verifybench-{args.completions}x{args.questions}-{args.seed}.jsonl"

    if args.run_import:
        run_import(args)
        return

    if not args.file.exists():
        print(f"generating {args.file} ...", file=sys.stderr)
        started = time.perf_counter()
        generate(args.file, args.questions, args.completions, args.seed)
        print(f"generated in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    database_url = ensure_database(args.database_url, DEFAULT_BENCH_DB, DEFAULT_SERVER)
    command = [sys.executable, __file__, "--run-import", "--database-url", database_url, "--file", str(args.file)]
    command += ["--reimport"] * args.reimport + ["--keep"] * args.keep + ["--no-baseline"] * args.no_baseline
    command += ["--expression-indexes"] * args.expression_indexes
    child = subprocess.run(command, check=True, capture_output=True, text=True)
    measured = json.loads(child.stdout.strip().splitlines()[-1])
    size_mb = args.file.stat().st_size / 1e6
    print(f"file: {args.file} ({size_mb:.0f} MB, {args.completions} completions over {args.questions} questions)")
    for run in measured["runs"]:
        if "documents" in run:
            print(
                f"{run['run']}: {run['documents']:,} computed after the import committed, in {run['seconds']:.1f} s "
                f"({run['per_second']:,} texts/s; the item browser's search reads their texts until then)"
            )
            continue
        print(
            f"{run['run']}: {run['seconds']:.1f} s wall ({run['cpu_seconds']:.1f} s CPU in the importing process), "
            f"{run['lines_per_second']:,} rows/s, "
            f"{size_mb / run['seconds']:.0f} MB/s "
            f"(questions created {run['questions_created']}, completions created {run['completions_created']}, "
            f"unchanged {run['completions_unchanged']}, prior labels created {run['prior_labels_created']})"
        )
    peak_mb = max(measured["peak_rss_kb"], measured["children_peak_rss_kb"]) / 1024
    print(f"peak RSS of the import process (including its children): {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
