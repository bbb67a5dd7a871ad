"""Benchmark of the export job on PostgreSQL: 200,000 resolved completions to JSONL and Parquet.

    .venv/bin/python bench/export_bench.py [--database-url postgres://...] [--completions 200000 --questions 20000]
                                           [--file-types jsonl parquet] [--format verifybench-hard] [--previews-only]
                                           [--smoke]

Setup (not measured) fills an empty benchmark database with COPY: questions with references, completions, a
correctness project whose items are all resolved (final label, resolution), and two submitted labels per item from
24 annotators, as the workflow leaves them. Question and completion texts are log-uniform between --min-text and
--max-text bytes (default 512 B to 4 KB) of prose with LaTeX. The export then runs in a fresh child process (the
whole job: selection, rows in chunks, every data file, manifest with agreement figures, zip, atomic publish), and
the script prints its wall time, rows per second, bundle size and the peak resident memory of that process. Before
it, the same process times what the export form computes on every dashboard load: each format's row count from the
final labels (beside counting the project's items); `--previews-only` measures only those.
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
import tempfile
import time
from pathlib import Path

from bench_database import copy_rows, ensure_database, reset_sequences  # (bench/ is the script's own folder)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BENCH_DB = "mathlabel_export_bench"
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432"
ANNOTATORS = 24
MODELS = [
    "Qwen2.5-7B-Instruct",
    "Qwen2.5-72B-Instruct",
    "Llama-3.1-8B-Instruct",
    "Llama-3.3-70B-Instruct",
    "DeepSeek-V3",
    "gpt-4o-mini",
    "gpt-4o",
    "claude-3.5-sonnet",
    "gemini-1.5-pro",
    "Mistral-Large",
    "QwQ-32B",
    "Qwen3-32B",
]
SOURCES = [
    "math_reasoning/MATH",
    "math_reasoning/GSM8K",
    "math_reasoning/OlympiadBench",
    "logic_reasoning/BBH",
    "logic_reasoning/ZebraLogic",
    "general_reasoning/MMLU-Pro",
]
CODES = ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "B1", "B2", "B3", "B4", "B5", "C1", "C2", "C3", "D1", "D2"]
RESOLUTIONS = ["agreement"] * 8 + ["majority", "adjudication"]
WORDS = (
    "let we have therefore since the of and is a so thus hence it follows that consider equation function integer "
    "prime sum product sequence limit derivative integral triangle circle polynomial root matrix interval "
    r"$x$ $n$ $x^2+y^2=r^2$ $\frac{a}{b}$ $\sqrt{2}$ $\pi$ $\sum_{k=1}^{n} k$ \boxed{42} ≤ ≥ π √ Step: Answer:"
).split()


def setup_django(database_url: str, export_root: Path) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["EXPORT_ROOT"] = str(export_root)
    os.environ.setdefault("SECRET_KEY", "export-benchmark-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(REPO_ROOT))
    import django

    django.setup()


class Texts:
    def __init__(self, rng: random.Random, low: int, high: int, corpus_bytes: int = 2 * 1024 * 1024):
        self.rng, self.low, self.high = rng, math.log(low), math.log(high)
        parts, length = [], 0
        while length < corpus_bytes:
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))) + ". "
            parts.append(sentence)
            length += len(sentence)
        self.corpus = "".join(parts)

    def __call__(self, label: str) -> str:
        length = int(math.exp(self.rng.uniform(self.low, self.high)))
        start = self.rng.randrange(0, len(self.corpus) - length)
        return f"[{label}] {self.corpus[start : start + length]}"


def populate(args) -> int:
    """Fill the database with COPY; returns the project id."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.utils import timezone

    from annotation.models import AnnotationProject, Item, Label, Task
    from reports.models import ExportJob
    from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

    rng = random.Random(args.seed)
    texts = Texts(rng, args.min_text, args.max_text, **({"corpus_bytes": 64 * 1024} if args.smoke else {}))
    now = timezone.now()
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for model in (ExportJob, Label, Task, Item, AnnotationProject, Completion, ReferenceAnswer, Question, Dataset):
            cursor.execute(f"TRUNCATE {quote(model._meta.db_table)} RESTART IDENTITY CASCADE")
    User.objects.filter(username__startswith="bench-annotator-").delete()
    annotators = User.objects.bulk_create(
        [User(username=f"bench-annotator-{n}", password="!") for n in range(ANNOTATORS)]
    )
    annotator_ids = [user.pk for user in annotators]
    dataset = Dataset.objects.create(name="export-bench")
    project = AnnotationProject.objects.create(name="export-bench correctness", dataset=dataset, kind="correctness")

    per_question = args.completions // args.questions
    copy_rows(
        Question,
        [
            "id",
            "dataset",
            "external_id",
            "text",
            "domain",
            "source",
            "subject",
            "answer_type",
            "answer_class",
            "image",
            "metadata",
            "origin",
            "content_hash",
            "created_at",
        ],
        (
            (
                q + 1,
                dataset.pk,
                f"q{q}",
                texts(f"q{q}"),
                SOURCES[q % len(SOURCES)].split("/")[0],
                SOURCES[q % len(SOURCES)],
                "",
                CODES[q % len(CODES)],
                CODES[q % len(CODES)][0],
                "",
                "{}",
                "{}",
                "x",
                now,
            )
            for q in range(args.questions)
        ),
    )
    copy_rows(
        ReferenceAnswer,
        ["question", "final_answer", "solution", "is_primary", "created_at"],
        ((q + 1, str(rng.randint(0, 10_000)), "", True, now) for q in range(args.questions)),
    )

    def completions():
        for c in range(args.completions):
            q = min(c // per_question, args.questions - 1)
            model = MODELS[c % len(MODELS)]
            yield (c + 1, q + 1, f"c{c}", model, "{}", 0, False, texts(f"c{c}"), "x", "{}", "{}", now)

    copy_rows(
        Completion,
        [
            "id",
            "question",
            "external_id",
            "model_name",
            "sampling",
            "sample_index",
            "is_greedy",
            "text",
            "content_hash",
            "metadata",
            "origin",
            "created_at",
        ],
        completions(),
    )
    finals = [rng.random() < 0.45 for _ in range(args.completions)]
    copy_rows(
        Item,
        [
            "id",
            "project",
            "subject_id",
            "answer_type",
            "state",
            "resolution",
            "required_labels",
            "label_count",
            "started",
            "final_value",
            "excluded",
            "priority",
            "random_key",
            "is_gold",
            "resolved_at",
            "created_at",
        ],
        (
            (
                c + 1,
                project.pk,
                c + 1,
                CODES[min(c // per_question, args.questions - 1) % len(CODES)],
                "resolved",
                rng.choice(RESOLUTIONS),
                2,
                2,
                True,
                "true" if finals[c] else "false",
                False,
                0,
                rng.random(),
                False,
                now,
                now,
            )
            for c in range(args.completions)
        ),
    )
    pairs = [(c + 1, slot, rng.choice(annotator_ids[slot::2])) for c in range(args.completions) for slot in (0, 1)]
    copy_rows(
        Task,
        ["id", "item", "annotator", "status", "is_tiebreak", "leased_at", "expires_at", "finished_at"],
        ((n + 1, item, annotator, "submitted", False, now, now, now) for n, (item, _, annotator) in enumerate(pairs)),
    )
    copy_rows(
        Label,
        [
            "item",
            "task",
            "annotator",
            "value",
            "details",
            "unsuitable",
            "unsuitable_reason",
            "note",
            "is_tiebreak",
            "created_at",
            "updated_at",
        ],
        (
            (
                item,
                n + 1,
                annotator,
                "true" if (finals[item - 1] if rng.random() < 0.9 else not finals[item - 1]) else "false",
                "{}",
                False,
                "",
                "",
                False,
                now,
                now,
            )
            for n, (item, _, annotator) in enumerate(pairs)
        ),
    )
    reset_sequences(Question, Completion, Item, Task)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return project.pk


def measure_previews(project) -> dict:
    """What the export form computes on each dashboard load: every format's row count (default options), timed,
    beside the baseline of counting the project's items."""
    from annotation.models import Item
    from reports import selectors
    from reports.exports import export_format_names, get_export_format

    started = time.perf_counter()
    items = Item.objects.filter(project=project).count()
    measured = {"baseline": {"rows": items, "seconds": time.perf_counter() - started}}
    for name in export_format_names():
        export_format = get_export_format(name)
        if export_format.project_kind != project.kind:
            continue
        started = time.perf_counter()
        preview = selectors.export_previews(project, [export_format])[name]
        measured[name] = {"rows": preview.rows, "seconds": time.perf_counter() - started}
    return measured


def run_export(args) -> None:
    """The measured part, alone in its own process."""
    setup_django(args.database_url, args.export_root)
    from annotation.models import AnnotationProject
    from reports import services

    project = AnnotationProject.objects.get(pk=args.project)
    previews = measure_previews(project)
    if args.previews_only:
        print(json.dumps({"previews": previews}))
        return
    options = {"per_type": args.per_type} if args.format == "verifybench" else {}
    started, cpu_started = time.perf_counter(), time.process_time()
    job = services.create_export(
        project=project, format=args.format, file_types=args.file_types, options=options, enqueue=False
    )
    job = services.run_export_now(job)
    elapsed = time.perf_counter() - started
    print(
        json.dumps(
            {
                "status": job.status,
                "error": job.error,
                "rows": job.progress_done,
                "seconds": round(elapsed, 2),
                "cpu_seconds": round(time.process_time() - cpu_started, 2),
                "bundle_bytes": job.bundle_size,
                "files": (job.manifest or {}).get("files"),
                "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "previews": previews,
            }
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help=f"PostgreSQL URL (default: creates {DEFAULT_BENCH_DB} locally)")
    parser.add_argument("--questions", type=int, default=20_000)
    parser.add_argument("--completions", type=int, default=200_000)
    parser.add_argument("--min-text", type=int, default=512)
    parser.add_argument("--max-text", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=20250101)
    parser.add_argument("--format", default="verifybench-hard")
    parser.add_argument("--per-type", type=int, default=250)
    parser.add_argument("--file-types", nargs="+", default=["jsonl", "parquet"])
    parser.add_argument("--reuse", action="store_true", help="export the data a previous run left in the database")
    parser.add_argument("--run-export", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--project", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--export-root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--previews-only", action="store_true", help="measure the export form's row counts only")
    parser.add_argument("--smoke", action="store_true", help="200 short completions: checks that the benchmark runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.questions, args.completions, args.min_text, args.max_text = 20, 200, 64, 512

    if args.run_export:
        run_export(args)
        return

    args.database_url = ensure_database(args.database_url, DEFAULT_BENCH_DB, DEFAULT_SERVER)
    with tempfile.TemporaryDirectory(prefix="export-bench-") as root:
        setup_django(args.database_url, Path(root))
        from django.core.management import call_command

        from annotation.models import AnnotationProject

        call_command("migrate", verbosity=0)
        existing = AnnotationProject.objects.filter(name="export-bench correctness").first() if args.reuse else None
        if existing is None:
            started = time.perf_counter()
            print(f"populating {args.completions} resolved completions ...", file=sys.stderr)
            project_id = populate(args)
            print(f"populated in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        else:
            project_id = existing.pk
        command = [
            sys.executable,
            __file__,
            "--run-export",
            "--database-url",
            args.database_url,
            "--project",
            str(project_id),
            "--export-root",
            root,
            "--format",
            args.format,
            "--per-type",
            str(args.per_type),
            "--file-types",
            *args.file_types,
            *(["--previews-only"] if args.previews_only else []),
        ]
        child = subprocess.run(command, check=True, capture_output=True, text=True)
    measured = json.loads(child.stdout.strip().splitlines()[-1])
    baseline = measured["previews"].pop("baseline")
    print(
        f"export form's row counts, as each dashboard load computes them (baseline: counting the project's "
        f"{baseline['rows']:,} items, {baseline['seconds'] * 1000:.0f} ms):"
    )
    for name, counted in measured["previews"].items():
        print(f"  {name}: {counted['rows']:,} rows in {counted['seconds'] * 1000:.0f} ms")
    if args.previews_only:
        return
    if measured["status"] != "succeeded":
        sys.exit(f"export {measured['status']}: {measured['error']}")
    print(
        f"{args.format} export of {measured['rows']:,} rows to {', '.join(args.file_types)}: "
        f"{measured['seconds']:.1f} s wall ({measured['cpu_seconds']:.1f} s CPU), "
        f"{measured['rows'] / measured['seconds']:,.0f} rows/s, bundle {measured['bundle_bytes'] / 1e6:.0f} MB"
    )
    for name, info in measured["files"].items():
        print(f"  {name}: {info['bytes'] / 1e6:.0f} MB")
    print(f"peak RSS of the export process: {measured['peak_rss_kb'] / 1024:.0f} MB")


if __name__ == "__main__":
    main()
