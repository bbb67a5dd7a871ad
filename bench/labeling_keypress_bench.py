"""Key press to next item painted on the labeling page, in Debian's chromium through Playwright, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<name> .venv/bin/python bench/labeling_keypress_bench.py [--labels 100]
        [--smoke] [--in-database]

Creates a throwaway test database (test_<name>), a correctness project of --labels + 3 items (one label each,
completions of about --chars characters with math), one annotator, and serves the app on a live server thread.
The browser labels --labels items with the `1` key. For each key it measures, in the page, from the keydown
event's timestamp to the first moment after the next item was painted (requestAnimationFrame, then a task), and it
counts the requests the page sends to the server while labeling. Between keys it waits until the label's save has
been answered, as an annotator who reads each item does (the queue is then topped up), and then --read-ms more
(default 0: the next key the instant the save is answered; real annotators read for 20-90 s). Prints p50/p95/max
of key to paint and the requests per label.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # ORM calls beside Playwright's event loop

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.test.testcases import LiveServerThread, _StaticFilesHandler  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.urls import reverse  # noqa: E402
from render_bench import make_completion  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = "bench-pass-123"
# Records, for each key press, the time from the keydown to just after the next item was painted.
MEASURE = """
window.__keyToPaint = [];
window.__pendingKey = null;
document.addEventListener("keydown", (event) => { window.__pendingKey = event.timeStamp; }, true);
document.addEventListener("DOMContentLoaded", () => {
  const root = document.querySelector("[data-labeling]");
  if (!root) return;
  new MutationObserver(() => {
    const pressed = window.__pendingKey;
    if (pressed === null || !root.dataset.taskId) return;
    window.__pendingKey = null;
    requestAnimationFrame(() => setTimeout(() => window.__keyToPaint.push(performance.now() - pressed), 0));
  }).observe(root, { attributes: true, attributeFilter: ["data-task-id"] });
});
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--chars", type=int, default=4000)
    parser.add_argument(
        "--read-ms",
        type=int,
        default=0,
        help="after each save is answered, wait this long before the next key (an annotator reading the item); "
        "0 presses the next key the instant the save is answered",
    )
    parser.add_argument("--smoke", action="store_true", help="3 labels of 500 characters: checks that it runs")
    parser.add_argument(
        "--in-database",
        action="store_true",
        help="work in DATABASE_URL's database as it is (migrated, and left with the benchmark's rows) instead of a "
        "throwaway test database: the test suite passes its own",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.labels, args.chars = 3, 500
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        sys.exit("run on PostgreSQL: set DATABASE_URL=postgres://...")

    setup_test_environment()
    from django.db import connection

    old_name = None if args.in_database else connection.creation.create_test_db(0, autoclobber=True, keepdb=False)
    server = LiveServerThread("localhost", _StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    try:
        run(args, f"http://localhost:{server.port}")
    finally:
        server.terminate()
        connection.close()
        if old_name is not None:
            connection.creation.destroy_test_db(old_name, verbosity=0)


def make_project(labels: int, chars: int):
    from django.contrib.auth.models import Group, User

    from annotation import services
    from annotation.models import ProjectMember
    from core import roles
    from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

    dataset = Dataset.objects.create(name="keypress-bench")
    text = make_completion(chars)
    for index in range(labels + 3):
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{index}",
            text=f"Compute $\\sum_{{k=1}}^{{{index + 2}}} \\frac{{1}}{{k(k+1)}}$.",
            answer_type="A1",
            answer_class="A",
            content_hash=f"q{index}",
        )
        ReferenceAnswer.objects.create(question=question, final_answer="\\frac{1}{2}", solution="Telescoping.")
        Completion.objects.create(
            question=question, external_id=f"c{index}", model_name="bench-model", text=text, content_hash=f"c{index}"
        )
    annotator = User.objects.create_user("bench-annotator", password=PASSWORD)
    annotator.groups.add(Group.objects.get_or_create(name=roles.ANNOTATOR)[0])
    project = services.create_project(dataset=dataset, kind="correctness", name="keypress bench", labels_per_item=1)
    services.add_member(project, annotator, ProjectMember.Role.ANNOTATOR)
    return project, annotator


def run(args, base_url: str) -> None:
    from playwright.sync_api import sync_playwright

    from annotation.models import Label

    project, annotator = make_project(args.labels, args.chars)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.add_init_script(MEASURE)
        page.goto(base_url + reverse("login"))
        page.get_by_label("Username").fill(annotator.username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(base_url + reverse("home"))
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url) if request.method == "POST" else None)
        page.goto(base_url + reverse("annotation-label", args=[project.pk]))
        page.wait_for_selector("[data-labeling][data-state='task'][data-unsaved='0']")
        page.wait_for_selector("html[data-math-ready='1']")
        opening_requests = len(requests)
        requests.clear()
        for done in range(1, args.labels + 1):
            page.keyboard.press("1")
            page.wait_for_function("n => window.__keyToPaint.length >= n", arg=done)
            page.wait_for_selector("[data-labeling][data-unsaved='0']")
            if args.read_ms:
                page.wait_for_timeout(args.read_ms)
        samples = page.evaluate("window.__keyToPaint")
        browser.close()
    stored = Label.objects.filter(annotator=annotator).count()
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    print(
        f"database: postgresql, {args.labels} labels, completions of {args.chars} chars, "
        f"next key {args.read_ms} ms after each save is answered, "
        f"load average {open('/proc/loadavg').read().split()[0]}"
    )
    print(
        f"key to next item painted: p50 {statistics.median(ordered):.1f} ms  p95 {p95:.1f} ms  "
        f"max {ordered[-1]:.1f} ms  ({len(samples)} labels)"
    )
    print(
        f"requests per label: {len(requests) / args.labels:.2f} ({len(requests)} POSTs for {args.labels} labels; "
        f"{opening_requests} to open the page's queue); labels stored: {stored}"
    )


if __name__ == "__main__":
    main()
