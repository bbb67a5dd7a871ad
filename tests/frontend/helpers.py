"""Helpers for page and browser tests: benchmark rows to show, and screenshots for the docs."""

from __future__ import annotations

import hashlib
import itertools
import re
from pathlib import Path

from verifybench import services
from verifybench.models import Completion, Dataset, ImportJob, Question, ReferenceAnswer

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_DIR = REPO_ROOT / "docs" / "screenshots"
DEFAULT_PASSWORD = "pass-word-123"  # the password tests/conftest.py's make_user gives every user
# The text a reader sees inside `root` once KaTeX has typeset it (a function for Playwright's evaluate).
VISIBLE_TEXT = """root => {
  const copy = root.cloneNode(true);
  for (const hidden of copy.querySelectorAll('.katex-mathml')) hidden.remove();  // MathML for screen readers
  return copy.textContent;
}"""

_serial = itertools.count(1)


def typeset_in_page(page, html: str, *, box_id: str, tag: str = "section", class_name: str = "") -> None:
    """Append rendered HTML to the open page's <main> in a box with id `box_id`, and typeset it as the app does
    (the page must have loaded the app's script: wait for html[data-math-ready='1'] first)."""
    page.evaluate(
        "([html, id, tag, className]) => { const box = document.createElement(tag); box.id = id;"
        " box.className = className; box.innerHTML = html;"
        " document.querySelector('main').append(box); window.mathlabel.typeset(box); }",
        [html, box_id, tag, class_name],
    )


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_completion(
    completion_text: str,
    *,
    question_text: str = "Compute $\\sum_{k=1}^{\\infty} \\frac{1}{k(k+1)}$.",
    final_answer: str = "$1$",
    solution: str = "Telescoping: $\\frac{1}{k(k+1)} = \\frac{1}{k} - \\frac{1}{k+1}$, so the sum is \\boxed{1}.",
    dataset_name: str | None = None,
    model_name: str = "model-a",
) -> Completion:
    serial = next(_serial)
    dataset, _ = Dataset.objects.get_or_create(name=dataset_name or f"dataset-{serial}")
    question = Question.objects.create(
        dataset=dataset,
        external_id=f"q{serial}",
        text=question_text,
        domain="math_reasoning",
        source="math_reasoning/MATH",
        answer_type="A1",
        answer_class="A",
        content_hash=_hash(question_text),
    )
    ReferenceAnswer.objects.create(question=question, final_answer=final_answer, solution=solution)
    completion = Completion.objects.create(
        question=question,
        external_id=f"c{serial}",
        model_name=model_name,
        text=completion_text,
        content_hash=_hash(completion_text),
        sampling={"temperature": 0.7},
    )
    services.recount(dataset)  # as an import does
    return completion


def save_screenshot(page, name: str, *, full_page: bool = True, clip: dict | None = None) -> Path:
    """Save what the page shows (or its `clip` rectangle) as docs/screenshots/<name>.png and return the path."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page, clip=clip)
    return path


def skip_screenshot(page, name: str, *, full_page: bool = True, clip: dict | None = None) -> None:
    """What `screenshot` does without --update-screenshots: the tracked images stay as they are."""


def upload_through_import_page(page, app_url, path, dataset_name: str) -> ImportJob:
    """Upload a file on the import page as a researcher does, and wait for its job's page; returns the import job."""
    page.goto(app_url("dataset-import"))
    form = page.get_by_test_id("import-form")
    form.locator("input[type=file]").set_input_files(str(path))
    form.get_by_label("Dataset").fill(dataset_name)
    form.get_by_role("button", name="Upload and import").click()
    page.wait_for_url(JOB_PAGE)
    return ImportJob.objects.get(pk=int(JOB_PAGE.match(page.url).group(1)))


JOB_PAGE = re.compile(r".*/jobs/import/(\d+)/$")
