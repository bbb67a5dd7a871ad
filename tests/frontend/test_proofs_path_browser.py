"""Real chromium and a real worker: a researcher brings MathArena proofs in through the import page (no format
chosen), finds the competition from the job's report, reads its problems and rubrics, makes a grading project with
its graders there, and a grader opens the first proof from their proof-grading page."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from annotation.models import AnnotationProject
from core import roles
from grading.models import Competition

from .helpers import upload_through_import_page

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PROBLEMS = [
    {
        "problem_idx": index,
        "problem": f"Prove that $n^{index + 2} - n$ is even for every integer $n$.",
        "points": 7,
        "grading_scheme": [
            {"title": f"Parity cases {index}", "points": 3, "desc": "Splits $n$ even and odd."},
            {"title": f"Conclusion {index}", "points": 4, "desc": "Concludes in both cases."},
        ],
        "sample_solution": "Both $n^k$ and $n$ have the same parity.",
    }
    for index in (1, 2)
]
PROOFS = [
    {"problem_idx": problem, "model_name": model, "model_config": {}, "idx_answer": 0, "answer": "Same parity."}
    for problem in (1, 2)
    for model in ("model-a", "model-b", "model-c")
]


def test_proofs_go_from_the_import_page_to_a_grading_project_and_a_grader(
    page, browser, live_server, login, app_url, make_user, celery_worker_factory, tmp_path, settings
):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    celery_worker_factory({"IMPORT_UPLOAD_DIR": str(settings.IMPORT_UPLOAD_DIR)})
    researcher = make_user(roles.RESEARCHER, username="rita")
    graders = [make_user(roles.ANNOTATOR, username=f"grader{n}") for n in (1, 2)]
    source = tmp_path / "olympiad-2026.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in [*PROBLEMS, *PROOFS]))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    login(page, researcher)
    upload_through_import_page(page, app_url, source, "Olympiad 2026")
    expect(page.get_by_test_id("import-counts")).to_contain_text(
        "2 problems (2 rubrics) and 6 proofs created", timeout=60_000
    )

    page.get_by_test_id("import-competition-link").click()
    competition = Competition.objects.get(name="Olympiad 2026")
    page.wait_for_url(app_url("proof-competition", competition.pk))
    expect(page.get_by_test_id("competition-problem")).to_have_count(2)
    expect(page.get_by_text("Parity cases 1")).to_be_visible()
    expect(page.get_by_text("model-a, model-b, model-c").first).to_be_visible()

    new_project = page.locator("form.project-form")
    new_project.get_by_label("Name").fill("Olympiad 2026 grading")
    for grader in graders:
        new_project.get_by_label(grader.username).check()
    new_project.get_by_role("button", name="Create grading project").click()
    project = AnnotationProject.objects.get(name="Olympiad 2026 grading")
    page.wait_for_url(app_url("dashboard-project", project.pk))
    assert project.items.count() == 6

    page.goto(app_url("proof-home"))
    page.get_by_role("link", name="leaderboard").click()
    page.wait_for_url(app_url("proof-leaderboard", competition.pk))

    grader_context = browser.new_context()
    grader_page = grader_context.new_page()
    grader_page.on("pageerror", lambda error: errors.append(str(error)))
    login(grader_page, graders[0])
    grader_page.goto(app_url("proof-home"))
    grader_page.get_by_role("button", name="Grade next proof").click()
    grader_page.wait_for_selector("#proof-grading[data-ready='1']")
    expect(grader_page.get_by_text("Parity cases", exact=False).first).to_be_visible()
    expect(grader_page.get_by_text("model-a")).to_have_count(0)  # graders never see the model
    grader_context.close()
    assert errors == []
