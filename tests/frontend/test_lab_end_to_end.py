"""A lab's own unlabeled file, end to end in a real browser with a real Celery worker: upload -> verifier run with
live progress -> selection -> project with members invited and guidelines -> two annotators, a tie-break and an
adjudication -> an export whose rows keep the input file's schema -> meta-evaluation and G-Pass@k.

Everything a person does goes through the pages; the test only reads the database to check, and to know which
item the page is showing (to give some items a disagreement on purpose).
"""

from __future__ import annotations

import json
import re
import zipfile

import pytest
from playwright.sync_api import expect

from annotation import workflow
from annotation.models import AnnotationProject, Item, Task
from core import roles
from grading.models import VerificationRun, VerifierConfig
from reports.models import ExportJob
from verifybench.models import Completion, Dataset

from .helpers import upload_through_import_page
from .test_labeling_browser import open_label_page

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-passphrase-1"
# The public VerifyBench columns without the label ones, in the public order; ids are integers, as in the files.
INPUT_FIELDS = [
    "question_id",
    "question",
    "answer",
    "completion_id",
    "completion",
    "completion_model",
    "answer_type",
    "answer_subtype",
    "source",
    "sample_index",
]
PUBLIC_COLUMNS = [
    "question_id",
    "question",
    "answer",
    "completion_id",
    "completion",
    "completion_model",
    "gold_correct",
    "answer_type",
    "answer_subtype",
    "source",
    "annotator",
    "answer_type_code",
]


def lab_rows() -> list[dict]:
    """Three questions; per question two models with two samples each, one right and one wrong."""
    rows = []
    for question in range(3):
        answer = question * 7 + 5
        for model_index, model in enumerate(("lab-model-a", "lab-model-b")):
            for sample in range(2):
                right = sample == 0
                shown = answer if right else answer + 1
                rows.append(
                    {
                        "question_id": 100 + question,
                        "question": f"Compute ${question * 7} + 5$.",
                        "answer": str(answer),
                        "completion_id": 1000 + question * 10 + model_index * 2 + sample,
                        "completion": f"Adding gives $${question * 7} + 5 = {shown}$$, so the answer is $\\boxed{{{shown}}}$.",
                        "completion_model": model,
                        "answer_type": "A1 - Integer",
                        "answer_subtype": "A - Numeric Values",
                        "source": "lab/run-7",
                        "sample_index": sample,
                    }
                )
    assert all(list(row) == INPUT_FIELDS for row in rows)
    return rows


def new_browser_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors


def status_of(page, kind: str, job_id: int):
    return page.locator(f"#job-{kind}-{job_id} [data-job-field=status]")


def shown_task_id(page) -> str | None:
    """Wait until the labeling page shows an item or says all is done; the item's task id, or None when done."""
    page.wait_for_selector("[data-labeling]:is([data-state='task'], [data-state='done'])")
    root = page.locator("[data-labeling]")
    return root.get_attribute("data-task-id") if root.get_attribute("data-state") == "task" else None


def wait_until_moved_on(page, task_id: str) -> None:
    page.wait_for_function(
        "previous => { const root = document.querySelector('[data-labeling]');"
        " return root.dataset.state === 'done' || (root.dataset.state === 'task' && root.dataset.taskId !== previous); }",
        arg=task_id,
    )


def wait_until_saved(page) -> None:
    """Labels are saved in the background; wait until the page says every one reached the server."""
    page.wait_for_function(
        "() => { const status = document.querySelector('[data-save-status]');"
        " return !status || !/Saving/.test(status.textContent); }"
    )


def label_everything(page, app_url, project, choose) -> int:
    """Label every item the page offers, pressing the key `choose(item)` gives; return how many were labeled."""
    open_label_page(page, app_url, project)
    labeled = 0
    while (task_id := shown_task_id(page)) is not None:
        page.keyboard.press(choose(Task.objects.select_related("item").get(pk=task_id).item))
        labeled += 1
        wait_until_moved_on(page, task_id)
    wait_until_saved(page)
    return labeled


def test_a_labs_unlabeled_file_goes_from_upload_to_export_and_evaluation(
    browser, page, live_server, login, app_url, make_user, celery_worker_factory, tmp_path, settings, screenshot
):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    settings.EXPORT_ROOT = tmp_path / "exports"
    celery_worker_factory(
        {"IMPORT_UPLOAD_DIR": str(settings.IMPORT_UPLOAD_DIR), "EXPORT_ROOT": str(settings.EXPORT_ROOT)}
    )
    researcher = make_user(roles.RESEARCHER, username="rita")
    cleo = make_user(roles.ANNOTATOR, username="cleo")
    judy = make_user(roles.ADJUDICATOR, username="judy")
    VerifierConfig.objects.create(name="rules", kind=VerifierConfig.Kind.RULE)
    rows = lab_rows()
    source = tmp_path / "lab-run-7.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    # 1. Upload: a worker imports the file; the job page shows the report.
    login(page, researcher)
    upload_through_import_page(page, app_url, source, "lab run 7")
    expect(page.get_by_test_id("import-counts")).to_contain_text("12 completions created", timeout=60_000)
    expect(page.get_by_test_id("import-counts")).to_contain_text("12 to annotate")
    screenshot(page, "import")
    dataset = Dataset.objects.get(name="lab run 7")
    assert Completion.objects.filter(question__dataset=dataset).count() == 12

    # 2. A rule-based run from the dataset's page, watched to the end.
    page.goto(app_url("jobs-dataset", dataset.pk))
    run_form = page.get_by_test_id("run-form")
    run_form.get_by_label("Verifier").select_option(label="rules (rule-based)")
    run_form.get_by_label("Chunk size").fill("2")
    run_form.get_by_role("button", name="Start run").click()
    page.wait_for_url(re.compile(r"#verification-runs$"))
    run = VerificationRun.objects.get()
    expect(status_of(page, "run", run.pk)).to_have_text("Succeeded", timeout=60_000)
    expect(page.locator(f"#job-run-{run.pk} [data-job-field=done]")).to_have_text("12")

    # 3. Selection: per question two completions judged correct and two judged incorrect.
    selection = page.get_by_test_id("selection-form")
    selection.get_by_label(re.compile(r"VerifyBench: per question")).check()
    selection.get_by_label("rules (rule-based)").check()
    selection.get_by_label("Project name").fill("Lab run 7: correctness")
    selection.get_by_role("button", name="Select and create the project").click()
    expect(page.get_by_test_id("picked-count")).to_have_text("12")
    project = AnnotationProject.objects.get(name="Lab run 7: correctness")
    assert project.items.count() == 12 and not project.members.exists()

    # 4. Guidelines, then members: two annotators invited by link, one added, an adjudicator added.
    page.goto(app_url("project-settings", project.pk))
    page.get_by_label("Guidelines:", exact=True).fill("Compare the boxed answer with the reference: $7 + 5 = 12$.")
    page.get_by_role("button", name="Save settings").click()
    page.get_by_text("Settings saved.").wait_for()
    page.goto(app_url("project-members", project.pk))
    links = []
    for _ in range(2):
        invite = page.get_by_test_id("invite-form")
        invite.get_by_label("Role").select_option("annotator")
        invite.get_by_role("button", name="Create invitation link").click()
        links.append(page.get_by_test_id("new-link-url").input_value())
    page.locator("#add-annotator-heading").locator("..").get_by_label("Person").select_option(label="cleo")
    page.get_by_role("button", name="Add as annotator").click()
    page.locator("#add-adjudicator-heading").locator("..").get_by_label("Person").select_option(label="judy")
    page.get_by_role("button", name="Add as adjudicator").click()
    expect(page.get_by_test_id("member-table").locator("tr[data-member]")).to_have_count(2)

    # 5. The invited annotators sign up and label as the truth says; on two items the second one is wrong on purpose.
    def truth(item) -> bool:
        return Completion.objects.get(pk=item.subject_id).sample_index == 0

    def key_for(value: bool) -> str:
        return "1" if value else "0"

    items = list(project.items.order_by("pk"))
    tie_item = next(item.pk for item in items if not truth(item))
    adjudicated_item = next(item.pk for item in items if truth(item))
    disputed = {tie_item, adjudicated_item}
    for name, link, choose in (
        ("ana", links[0], lambda item: key_for(truth(item))),
        ("ben", links[1], lambda item: key_for(truth(item) != (item.pk in disputed))),
    ):
        context, annotator_page, annotator_errors = new_browser_page(browser)
        try:
            annotator_page.goto(link)
            annotator_page.get_by_label("Username").fill(name)
            annotator_page.get_by_label("Password:", exact=True).fill(PASSWORD)
            annotator_page.get_by_label("Password confirmation").fill(PASSWORD)
            annotator_page.get_by_role("button", name="Create my account and join").click()
            annotator_page.wait_for_url(app_url("annotation-label", project.pk))
            panel = annotator_page.locator("#guidelines-panel")
            expect(panel.get_by_test_id("guidelines-text")).to_be_visible()
            assert panel.get_by_test_id("guidelines-text").locator(".katex").count() >= 1
            assert label_everything(annotator_page, app_url, project, choose) == 12
            assert annotator_errors == []
        finally:
            context.close()
    assert set(Item.objects.filter(project=project, state=workflow.NEEDS_TIEBREAK).values_list("pk", flat=True)) == set(
        disputed
    )

    # The third annotator breaks one tie and finds the other item unsuitable, which sends it to adjudication.
    context, cleo_page, cleo_errors = new_browser_page(browser)
    try:
        login(cleo_page, cleo)
        open_label_page(cleo_page, app_url, project)
        for _ in range(2):
            task_id = shown_task_id(cleo_page)
            item = Task.objects.get(pk=task_id).item
            if item.pk == tie_item:
                cleo_page.keyboard.press(key_for(truth(item)))
            else:
                cleo_page.keyboard.press("u")
                cleo_page.keyboard.type("The question is ambiguous about the notation.")
                cleo_page.keyboard.press("Enter")
            wait_until_moved_on(cleo_page, task_id)
        wait_until_saved(cleo_page)
        cleo_page.get_by_test_id("all-done").wait_for()
        assert cleo_errors == []
    finally:
        context.close()
    assert Item.objects.get(pk=tie_item).resolution == workflow.BY_MAJORITY
    assert Item.objects.get(pk=tie_item).final_value is False
    assert Item.objects.get(pk=adjudicated_item).state == workflow.NEEDS_ADJUDICATION

    # 6. The adjudicator decides with a written rationale.
    context, judy_page, judy_errors = new_browser_page(browser)
    try:
        login(judy_page, judy)
        judy_page.goto(app_url("annotation-conflicts", project.pk))
        judy_page.get_by_test_id("start-adjudicating").click()
        judy_page.wait_for_selector("form[data-adjudication-form][data-ready='1']")
        judy_page.keyboard.press("1")
        judy_page.keyboard.press("r")
        judy_page.keyboard.type("The boxed value equals the reference; the notation is standard.")
        judy_page.keyboard.press("Control+Enter")
        judy_page.wait_for_url(app_url("annotation-conflicts", project.pk))
        expect(judy_page.get_by_test_id("no-conflicts")).to_be_visible()
        assert judy_errors == []
    finally:
        context.close()
    assert not Item.objects.filter(project=project).exclude(state=workflow.RESOLVED).exists()
    assert Item.objects.get(pk=adjudicated_item).resolution == workflow.BY_ADJUDICATION
    assert Item.objects.get(pk=adjudicated_item).final_value is True

    # 7. Export from the dashboard; the rows keep the input file's schema: names, order, types and values.
    page.goto(app_url("dashboard-project", project.pk))
    export_form = page.get_by_test_id("section-exports").get_by_test_id("export-form")
    export_form.get_by_label("Format").select_option("verifybench-hard")
    export_form.get_by_role("button", name="Start export").click()
    export = ExportJob.objects.get()
    expect(status_of(page, "export", export.pk)).to_have_text("Succeeded", timeout=60_000)
    with page.expect_download() as download_info:
        page.locator(f"#job-export-{export.pk}").get_by_role("link", name="Download").click()
    with zipfile.ZipFile(download_info.value.path()) as bundle:
        exported = [json.loads(line) for line in bundle.read("verifybench_hard.jsonl").decode().splitlines()]
    by_completion = {row["completion_id"]: row for row in rows}
    assert len(exported) == 12
    for row in exported:
        assert list(row) == PUBLIC_COLUMNS
        original = by_completion[row["completion_id"]]
        for name in INPUT_FIELDS:
            if name in PUBLIC_COLUMNS:
                assert row[name] == original[name] and type(row[name]) is type(original[name]), name
        assert row["gold_correct"] is (original["sample_index"] == 0), row  # the final labels are the truth
        assert row["answer_type_code"] == "A1" and len(row["annotator"]) >= 2

    # 8. Meta-evaluation of the verifier against the human labels, and G-Pass@k of the two models.
    page.goto(app_url("meta-eval-page", project.pk))
    report = page.get_by_test_id("verifier-report")
    expect(report.first).to_contain_text("rules")
    assert "12" in page.get_by_test_id("coverage").first.inner_text()
    page.goto(app_url("model-eval-page", dataset.pk) + f"?source=project:{project.pk}")
    models = page.get_by_test_id("model-report")
    expect(models).to_have_count(2)
    assert "G-Pass@" in page.get_by_test_id("metric-table").first.inner_text()
    assert errors == []


def shape_files(folder) -> dict[str, tuple[str, int]]:
    """One file of each shape a lab has on disk, none with labels: name -> (path, completions in it)."""
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    native = [
        {
            "question_id": f"n{index}",
            "question": f"What is {index} squared?",
            "reference_answer": index * index,
            "completion": f"It is $\\boxed{{{index * index}}}$.",
            "model": "lab-model-a",
            "sample_index": 0,
        }
        for index in range(1, 4)
    ]
    chat = [
        {
            "question_id": "c1",
            "messages": [
                {"role": "system", "content": "Answer with a number."},
                {"role": "user", "content": "How many primes are below 10?"},
            ],
            "reference_answer": "4",
            "completion": "2, 3, 5 and 7: **4**.",
            "model": "lab-model-b",
        }
    ]
    mumath = [
        {
            "uuid": "u-1",
            "problem_statement": "Find $\\lim_{x\\to 0} \\frac{\\sin x}{x}$.",
            "golden_answer": "1",
            "model": "lab-model-a",
            "model_output": "The limit is 1.",
        }
    ]
    matharena = [
        {
            "problem_idx": 1,
            "problem": "Compute $2^{10}$.",
            "model_name": "lab-model-a",
            "model_config": {"temperature": 0.6},
            "idx_answer": sample,
            "answer": "\\boxed{1024}",
            "gold_answer": "1024",
        }
        for sample in range(2)
    ]
    files = {}

    def jsonl(name, rows):
        path = folder / name
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        files[name] = (str(path), len(rows))

    jsonl("verifybench.jsonl", lab_rows())
    jsonl("native.jsonl", native)
    jsonl("chat.jsonl", chat)
    jsonl("mumath.jsonl", mumath)
    jsonl("matharena.jsonl", matharena)
    with open(folder / "native.csv", "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(native[0]))
        writer.writeheader()
        writer.writerows(native)
    files["native.csv"] = (str(folder / "native.csv"), len(native))
    pq.write_table(pa.Table.from_pylist(lab_rows()), folder / "verifybench.parquet")
    files["verifybench.parquet"] = (str(folder / "verifybench.parquet"), 12)
    return files


def test_every_shape_a_lab_has_uploads_through_the_page(
    page, live_server, login, app_url, make_user, celery_worker_factory, tmp_path, settings
):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    celery_worker_factory({"IMPORT_UPLOAD_DIR": str(settings.IMPORT_UPLOAD_DIR)})
    login(page, make_user(roles.RESEARCHER, username="rita"))
    for name, (path, completions) in shape_files(tmp_path).items():
        upload_through_import_page(page, app_url, path, f"shape {name}")
        counts = page.get_by_test_id("import-counts")
        expect(counts).to_contain_text(f"{completions} completion", timeout=60_000)
        expect(counts).to_contain_text(f"{completions} to annotate")
        dataset = Dataset.objects.get(name=f"shape {name}")
        assert Completion.objects.filter(question__dataset=dataset).count() == completions, name
