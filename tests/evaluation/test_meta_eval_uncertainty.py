"""Intervals, paired comparisons, label noise and sample-size guidance of the meta-evaluation, from the database:
the figures read from the kept per-question tallies equal those computed from the items' rows, the API, the page,
the CSV and the dataset card carry them, and bad parameters are refused."""

from __future__ import annotations

import csv
import io
import zipfile

import numpy as np
import pytest

from annotation import aggregates
from annotation.models import Item
from core.metrics import judge_intervals as ji
from grading.models import Verdict
from reports import evaluation
from reports import services as export_services

from .projects import two_verifier_project

pytestmark = pytest.mark.django_db


def row_histogram(project, verifier) -> ji.QuestionCounts:
    """The verifier's per-question vectors counted from the items and verdicts themselves."""
    vectors: dict[int, list[int]] = {}
    for item in Item.objects.filter(project=project, state="resolved", excluded=False, is_gold=False):
        verdict = Verdict.objects.filter(completion_id=item.subject_id, verifier=verifier).first()
        if verdict is None:
            continue
        question = verdict.completion.question_id
        vectors.setdefault(question, [0] * ji.WIDTH)[ji.cell_of(item.final_value is True, verdict.status)] += 1
    distinct, counts = np.unique(np.array(list(vectors.values())), axis=0, return_counts=True)
    return ji.QuestionCounts.from_histogram(distinct.tolist(), counts.tolist(), ji.WIDTH)


def test_intervals_from_the_tallies_equal_the_bootstrap_of_the_rows(meta_fixture):
    result = evaluation.meta_evaluate(meta_fixture.project, ["rule-check"], evaluation.Uncertainty(seed=3))
    (report,) = result.reports
    expected = ji.scope_intervals(
        row_histogram(meta_fixture.project, meta_fixture.rule), scope="rule-check|overall|all", seed=3
    )
    assert report.intervals["overall"] == expected
    assert report.intervals["overall"]["accuracy"]["value"] == pytest.approx(report.evaluation.overall.accuracy)
    assert set(report.intervals["by_answer_class"]) == {"A", "B"}
    assert set(report.intervals["by_model"]) == {"m1", "m2"}
    assert set(report.intervals["by_source"]) == {""}
    assert report.intervals["by_model"]["m2"]["accuracy"]["value"] == pytest.approx(2 / 3)
    # one question: no interval
    assert report.intervals["by_answer_class"]["A"]["accuracy"]["low"] is None


def test_paired_comparison_sentences_and_mcnemar_from_the_tallies():
    project, first, second = two_verifier_project()
    result = evaluation.meta_evaluate(project, ["rule-a", "rule-b"], evaluation.Uncertainty())
    (comparison,) = result.comparisons
    overall = comparison["overall"]
    one, other = result.reports
    assert overall["accuracy"]["first"] == pytest.approx(one.evaluation.overall.accuracy)
    assert overall["accuracy"]["second"] == pytest.approx(other.evaluation.overall.accuracy)
    wrong_a = {i for i in range(80) if i < 4}
    wrong_b = {i for i in range(80) if i % 5 == 1 or i < 6}
    assert overall["only_first_right"] == len(wrong_b - wrong_a)
    assert overall["only_second_right"] == len(wrong_a - wrong_b)
    assert overall["mcnemar_p"] == pytest.approx(ji.mcnemar_exact(len(wrong_b - wrong_a), len(wrong_a - wrong_b)))
    assert overall["questions"] == 40 and overall["items"] == 80
    sentence = comparison["sentences"][0]["text"]
    assert sentence.startswith("rule-a is more accurate than rule-b: +")
    assert {entry["name"] for entry in comparison["sentences"]} == {"all", "A", "B"}
    assert set(comparison["by_answer_class"]) == {"A", "B"}
    # asked the other way round, the same comparison with the sign turned
    flipped = evaluation.meta_evaluate(project, ["rule-b", "rule-a"], evaluation.Uncertainty()).comparisons[0]
    assert flipped["overall"]["accuracy"]["difference"] == pytest.approx(-overall["accuracy"]["difference"])
    assert flipped["overall"]["only_first_right"] == overall["only_second_right"]
    # sample-size guidance: every class has an interval wider than 0.01 needs more items
    guidance = result.sample_size
    assert guidance["target_width"] == 0.1
    narrow = evaluation.meta_evaluate(project, ["rule-a"], evaluation.Uncertainty(target_width=0.01)).sample_size
    assert all(entry["more_items"] > 0 for entry in narrow["by_answer_class"].values())


def test_api_carries_intervals_and_comparisons_reproducibly(researcher, api_client_for):
    project, _, _ = two_verifier_project()
    client = api_client_for(researcher)
    url = f"/api/projects/{project.pk}/meta-eval/"
    first = client.get(url).json()
    assert first == client.get(url).json()
    assert first["uncertainty"]["resamples"] == 1000 and first["uncertainty"]["resampled_unit"] == "question"
    overall = first["verifiers"][0]["intervals"]["overall"]["accuracy"]
    assert overall["low"] <= overall["value"] <= overall["high"]
    assert first["comparisons"][0]["sentences"]
    other_seed = client.get(url, {"seed": 7}).json()
    assert other_seed["verifiers"][0]["intervals"] != first["verifiers"][0]["intervals"]
    none = client.get(url, {"bootstrap": 0}).json()
    assert none["verifiers"][0]["intervals"]["overall"]["accuracy"]["low"] is None
    assert none["comparisons"][0]["overall"]["mcnemar_p"] == first["comparisons"][0]["overall"]["mcnemar_p"]
    for bad in (
        {"bootstrap": "-1"},
        {"bootstrap": "many"},
        {"seed": "x"},
        {"target_width": "0"},
        {"uncertain_below": "2"},
    ):
        response = client.get(url, bad)
        assert response.status_code == 400, bad
        assert "detail" in response.json()


def test_csv_has_interval_columns_comparison_and_sample_size_rows(researcher, api_client_for):
    project, _, _ = two_verifier_project()
    response = api_client_for(researcher).get(f"/api/projects/{project.pk}/meta-eval/", {"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    overall = next(row for row in rows if row["verifier"] == "rule-a" and row["scope"] == "overall")
    assert float(overall["accuracy_low"]) <= float(overall["accuracy"]) <= float(overall["accuracy_high"])
    assert overall["questions"] == "40"
    comparison = [row for row in rows if row["scope"] == "comparison"]
    assert {row["figure"] for row in comparison} == set(ji.FIGURES)
    assert all(row["compared_with"] == "rule-b" and row["mcnemar_p"] for row in comparison)
    assert {row["scope"] for row in rows} >= {
        "source",
        "label_noise",
        "comparison_answer_class",
        "sample_size_answer_class",
    }


def test_label_noise_counts_uncertain_posteriors():
    project, _, _ = two_verifier_project()
    items = list(Item.objects.filter(project=project).order_by("pk")[:5])
    tracker = aggregates.track(project, items)
    for item, confidence in zip(items, (0.6, 0.7, 0.95, 0.99, 0.85)):
        item.confidence = confidence
        item.save(update_fields=["confidence"])
    tracker.done()
    result = evaluation.meta_evaluate(project, ["rule-a"], evaluation.Uncertainty())
    noise = result.label_noise
    assert noise["by_basis"] == {"posterior": 5, "agreement": 0, "contested": 75}
    assert noise["uncertain_items"] == 3  # 0.6, 0.7 and 0.85 are below 0.9; no agreement to doubt the others by
    assert noise["expected_wrong_labels"] == pytest.approx(0.4 + 0.3 + 0.05 + 0.01 + 0.15)
    # rule-a is wrong on the first four items and right on the fifth: a label that may be wrong moves both ways
    assert result.reports[0].evaluation.overall.accuracy == pytest.approx(76 / 80)
    expected_right = 76 - (1 - 0.85) + (1 - 0.6) + (1 - 0.7) + (1 - 0.95) + (1 - 0.99)
    assert result.reports[0].label_noise["accuracy"] == pytest.approx(expected_right / 80)
    stricter = evaluation.meta_evaluate(project, ["rule-a"], evaluation.Uncertainty(uncertain_below=0.99))
    assert stricter.label_noise["uncertain_items"] == 4


def test_page_shows_intervals_sentences_and_matrix(researcher, client):
    project, _, _ = two_verifier_project()
    client.force_login(researcher)
    page = client.get(f"/projects/{project.pk}/meta-eval/").content.decode()
    assert 'data-field="interval"' in page
    assert 'data-testid="comparison-matrix"' in page
    assert "rule-a is more accurate than rule-b" in page
    assert 'data-testid="label-noise"' in page
    bad = client.get(f"/projects/{project.pk}/meta-eval/", {"bootstrap": "lots"})
    assert bad.status_code == 400 and "bootstrap must be a number" in bad.content.decode()


def test_dataset_card_states_the_verifiers_figures_with_intervals(settings, tmp_path, researcher):
    settings.EXPORT_ROOT = str(tmp_path)
    project, _, _ = two_verifier_project()
    job = export_services.create_export(project=project, format="mumath", created_by=researcher)
    from reports.exports import runner

    runner.run_job(job.pk)
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    with zipfile.ZipFile(export_services.export_bundle(job)) as bundle:
        card = bundle.read("README.md").decode()
    assert "## Verifiers against these labels" in card
    line = next(line for line in card.splitlines() if line.startswith("| rule-a (rule) |"))
    assert "[" in line and "]" in line
    assert "rule-a is more accurate than rule-b" in card
    assert job.manifest["verifiers"]["verifiers"][0]["figures"]["accuracy"]["low"] is not None
