"""What an export will give, said before it starts: each format's row count from the final labels equals the rows
its export writes, and an export that would write no row is refused with the reason (API, page, command and job)."""

from __future__ import annotations

import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Item
from reports import selectors, services
from reports.exports import get_export_format
from reports.models import ExportJob

from .conftest import LabelledData

BALANCED_REFUSAL = (
    "Nothing to export: VerifyBench (balanced) needs both a correct and an incorrect completion of a question; "
    "no question has both."
)


def preview(project, fmt: str, **options):
    export_format = get_export_format(fmt)
    return export_format.preview_of(project, export_format.clean_options(options))


def exported_rows(project, fmt: str, **options) -> int:
    """Run the export and count the lines of its JSONL file; also checks the manifest says the same."""
    job = services.run_export_now(services.create_export(project=project, format=fmt, options=options, enqueue=False))
    assert job.status == ExportJob.Status.SUCCEEDED, job.error
    export_format = get_export_format(fmt)
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        lines = bundle.read(f"{export_format.stem}.jsonl").decode().splitlines()
    assert job.manifest["counts"]["rows"] == len(lines)
    return len(lines)


@pytest.mark.parametrize(
    ("fmt", "options"),
    [
        ("verifybench", {}),
        ("verifybench", {"per_type": 1}),
        ("verifybench", {"per_type": 2, "question_ids": ["a0", "b0", "b1", "u0"]}),
        ("verifybench-hard", {}),
        ("verifybench-hard", {"question_ids": ["a1", "c0"]}),
        ("matharena", {}),
        ("mumath", {}),
        ("mumath", {"models": 1}),
    ],
)
def test_the_preview_counts_the_rows_the_verifybench_project_export_writes(verifybench_data, export_root, fmt, options):
    counted = preview(verifybench_data.project, fmt, **options)
    assert counted.exact and counted.rows > 0 and counted.reason == ""
    assert exported_rows(verifybench_data.project, fmt, **options) == counted.rows


@pytest.mark.parametrize(
    ("fmt", "options"),
    [
        ("mumath", {}),
        ("mumath", {"models": 2}),
        ("mumath", {"models": 5}),
        ("mumath", {"author_models": ["m3", "m5"]}),
        ("mumath", {"problems": 3}),
        ("verifybench-hard", {}),
        ("matharena", {}),
        ("verifybench", {}),
    ],
)
def test_the_preview_counts_the_rows_the_mumath_project_export_writes(mumath_data, export_root, fmt, options):
    counted = preview(mumath_data.project, fmt, **options)
    if counted.rows == 0:  # no mu-MATH problem has both a correct and an incorrect solution
        assert fmt == "verifybench" and "no question has both" in counted.reason
        return
    assert counted.exact
    assert exported_rows(mumath_data.project, fmt, **options) == counted.rows


def test_a_drawn_number_of_mumath_problems_is_previewed_as_an_upper_bound(mumath_data, export_root):
    counted = preview(mumath_data.project, "mumath", problems=1, seed=4)
    assert not counted.exact and counted.rows == 4  # one problem, four author models at most
    assert 0 < exported_rows(mumath_data.project, "mumath", problems=1, seed=4) <= counted.rows


@pytest.fixture
def one_completion_per_question(db, three_annotators):
    """Every question has one completion, finally labelled correct: natural formats give rows, balanced gives none."""
    data = LabelledData("single", three_annotators)
    for index in range(3):
        data.labelled(data.question(f"s{index}", answer_type="A1"), f"s{index}-c", True)
    return data


def test_each_format_says_why_it_gives_nothing(one_completion_per_question, export_root):
    project = one_completion_per_question.project
    assert preview(project, "verifybench").rows == 0
    assert "no question has both" in preview(project, "verifybench").reason
    assert preview(project, "verifybench-hard").rows == 3
    assert "none of them" in preview(project, "mumath", author_models=["nobody"]).reason
    assert "model-a" in preview(project, "mumath", author_models=["nobody"]).reason
    assert "none of the 1 chosen question(s)" in preview(project, "matharena", question_ids=["elsewhere"]).reason
    Item.objects.filter(project=project).update(excluded=True)
    for fmt in ("verifybench", "verifybench-hard", "mumath", "matharena"):
        assert preview(project, fmt).rows == 0
        assert "has none yet" in preview(project, fmt).reason
    previews = selectors.export_previews(project, [get_export_format("verifybench"), get_export_format("mumath")])
    assert {name: counted.rows for name, counted in previews.items()} == {"verifybench": 0, "mumath": 0}


def test_the_api_refuses_an_empty_export_with_the_reason_and_makes_no_job(
    one_completion_per_question, researcher, api_client_for, export_root
):
    client = api_client_for(researcher)
    response = client.post(
        "/api/exports/", {"project": one_completion_per_question.project.pk, "format": "verifybench"}, format="json"
    )
    assert response.status_code == 400 and response.json() == {"detail": BALANCED_REFUSAL}
    assert not ExportJob.objects.exists()
    response = client.post(
        "/api/exports/",
        {"project": one_completion_per_question.project.pk, "format": "verifybench-hard"},
        format="json",
    )
    assert response.status_code == 201


def test_the_command_refuses_an_empty_export_with_the_reason(one_completion_per_question, export_root, tmp_path):
    out = tmp_path / "vb.zip"
    with pytest.raises(CommandError, match="no question has both"):
        call_command(
            "export",
            "--project",
            str(one_completion_per_question.project.pk),
            "--format",
            "verifybench",
            "--out",
            str(out),
        )
    assert not out.exists() and not ExportJob.objects.exists()


def test_a_job_whose_rows_went_away_fails_with_the_reason_and_publishes_nothing(verifybench_data, export_root):
    job = services.create_export(project=verifybench_data.project, format="verifybench", enqueue=False)
    Item.objects.filter(project=verifybench_data.project, final_value__in=[False]).update(final_value=True)
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.FAILED and job.error == BALANCED_REFUSAL
    assert (job.bundle_path, job.manifest, services.export_bundle(job)) == ("", None, None)
    assert not [path for path in export_root.iterdir() if path.name.startswith(("export-", f".export-{job.pk}-"))]


def test_the_page_shows_each_formats_rows_defaults_to_one_that_gives_rows_and_refuses_an_empty_one(
    client, researcher, one_completion_per_question, export_root
):
    project = one_completion_per_question.project
    client.force_login(researcher)
    for url in (reverse("dashboard-project", args=[project.pk]), reverse("jobs-project-export-new", args=[project.pk])):
        html = client.get(url).content.decode()
        form = html.split('data-testid="export-form"')[1].split("</form>")[0]
        assert 'data-format="verifybench" data-gives-rows="false"' in form
        assert "no question has both" in form
        assert 'data-format="verifybench-hard" data-gives-rows="true"' in form
        assert "<span data-rows>3 rows</span>" in form
        assert '<option value="verifybench-hard" selected>' in form
        assert '<option value="verifybench">VerifyBench (balanced) (verifybench): no rows</option>' in form

    response = client.post(
        reverse("jobs-project-export-new", args=[project.pk]),
        {"export-format": "verifybench", "export-file_types": ["jsonl"], "export-seed": 0},
    )
    assert response.status_code == 400 and BALANCED_REFUSAL in response.content.decode()
    assert not ExportJob.objects.exists()


def test_questions_without_an_answer_type_are_named_when_they_are_all_the_balanced_builder_could_draw(
    verifybench_data,
):
    counted = preview(verifybench_data.project, "verifybench", question_ids=["u0", "b1"])
    assert counted.rows == 0 and "the 1 question(s) that have both have no answer type" in counted.reason


def test_a_large_projects_dashboard_leaves_the_counting_to_the_export_page(
    client, researcher, one_completion_per_question, monkeypatch
):
    from frontend import views_exports

    monkeypatch.setattr(views_exports, "DASHBOARD_ROW_COUNT_MAX_RESOLVED", 2)
    project = one_completion_per_question.project
    client.force_login(researcher)
    html = client.get(reverse("dashboard-project", args=[project.pk])).content.decode()
    form = html.split('data-testid="export-form"')[1].split("</form>")[0]
    assert "This project has 3 resolved items" in form and "data-rows" not in form
    assert f'href="{reverse("jobs-project-export-new", args=[project.pk])}"' in form
    page = client.get(reverse("jobs-project-export-new", args=[project.pk])).content.decode()
    assert "<span data-rows>3 rows</span>" in page and '<option value="verifybench-hard" selected>' in page
