"""Server render time of the labeling page for a long completion, through Django's test client.

    DEBUG=1 .venv/bin/python bench/labeling_render_bench.py [--chars 20000] [--runs 200] [--smoke] [--in-database]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<name> DEBUG=1 .venv/bin/python bench/labeling_render_bench.py

Creates a throwaway test database (test_<name> on PostgreSQL, in memory on SQLite), one project whose item is a
completion of about --chars characters, an annotator holding its lease, and times GET /projects/<id>/label/ and
the fragment endpoint. Prints p50/p95 wall-clock and CPU milliseconds per request.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402
from render_bench import make_completion, report, timings  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="2,000 characters, 3 runs: checks that it runs")
    parser.add_argument(
        "--in-database",
        action="store_true",
        help="work in DATABASE_URL's database as it is (migrated, and left with the benchmark's rows) instead of a "
        "throwaway test database: the test suite passes its own",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.chars, args.runs = 2000, 3

    setup_test_environment()
    if args.in_database:
        run(args)
        return
    from django.db import connection

    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(args) -> None:
    from django.contrib.auth.models import Group, User

    from annotation import services
    from annotation.models import ProjectMember
    from core import roles
    from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

    text = make_completion(args.chars)
    dataset = Dataset.objects.create(name="labeling-bench")
    question = Question.objects.create(
        dataset=dataset,
        external_id="q1",
        text="Compute $\\sum_{k=1}^{\\infty} \\frac{1}{k(k+1)}$.",
        answer_type="A1",
        answer_class="A",
        content_hash="q1",
    )
    ReferenceAnswer.objects.create(
        question=question, final_answer="$1$", solution="Telescoping gives \\boxed{1}. " * 20
    )
    Completion.objects.create(
        question=question, external_id="c1", model_name="bench-model", text=text, content_hash="c1"
    )
    annotator = User.objects.create_user("bench-annotator", password="bench-pass-123")
    annotator.groups.add(Group.objects.get_or_create(name=roles.ANNOTATOR)[0])
    project = services.create_project(dataset=dataset, kind="correctness", name="bench")
    services.add_member(project, annotator, ProjectMember.Role.ANNOTATOR)

    client = Client()
    client.force_login(annotator)
    page_url = reverse("annotation-label", args=[project.pk])
    first = client.get(page_url)  # the page's shell: it leases nothing, its script claims items with a POST
    assert first.status_code == 200, first.status_code
    task = services.next_task(project, annotator)
    fragment_url = f"{reverse('annotation-label-fragment', args=[project.pk])}?task={task.pk}"
    assert b'id="final-answer"' in client.get(fragment_url).content

    def get(url):
        def request():
            response = client.get(url)
            assert response.status_code == 200

        return request

    print(
        f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}, completion {len(text)} chars, "
        f"page {len(first.content)} bytes"
    )
    report("labeling page (GET)", timings(get(page_url), args.runs))
    report("task fragment (GET)", timings(get(fragment_url), args.runs))


if __name__ == "__main__":
    main()
