"""Meta-evaluation from the database, hand-computed on `meta_fixture`.

Counted items (resolved, not excluded, not gold): tp, tn, fn_inconclusive, fp, missing, tn_unclassified.
rule-check judged five of them (no verdict on `missing`): TP 1, TN 2, FN 1 (inconclusive), FP 1.
judge-x judged all six: TP 3 (tp, fn_inconclusive, missing), FP 1 (tn), TN 2 (fp, tn_unclassified).
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import services
from reports import evaluation

from .conftest import rule_verifier

pytestmark = pytest.mark.django_db


def test_rule_verifier_figures_coverage_and_missing_items(meta_fixture):
    result = evaluation.meta_evaluate(meta_fixture.project, ["rule-check"])
    assert result.labeled_items == 6
    (report,) = result.reports
    assert report.judged_items == 5
    assert report.missing_item_ids == [meta_fixture.items["missing"].pk]
    assert report.coverage == pytest.approx(5 / 6)
    overall = report.evaluation.overall
    assert (overall.tp, overall.tn, overall.fp, overall.fn, overall.inconclusive) == (1, 2, 1, 1, 1)
    assert overall.accuracy == pytest.approx(3 / 5)
    assert overall.inconclusive_rate == pytest.approx(1 / 5)
    assert overall.tpr == pytest.approx(1 / 2)
    assert overall.tnr == pytest.approx(2 / 3)
    assert overall.ppv == pytest.approx(1 / 2)
    assert overall.npv == pytest.approx(2 / 3)
    # F1(correct) = 2/(2+1+1) = 0.5, F1(incorrect) = 4/(4+1+1) = 2/3
    assert overall.macro_f1 == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert result.agreement is None


def test_per_answer_class_and_per_model_rows(meta_fixture):
    (report,) = evaluation.meta_evaluate(meta_fixture.project, ["rule-check"]).reports
    by_class = report.evaluation.by_answer_class
    assert set(by_class) == {"A", "B"}
    assert (by_class["A"].n, by_class["A"].accuracy) == (2, 1.0)
    assert (by_class["B"].n, by_class["B"].accuracy) == (2, 0.0)
    assert report.evaluation.mean_class_accuracy == pytest.approx(0.5)
    assert report.unclassified_items == 1

    m1, m2 = report.evaluation.by_model["m1"], report.evaluation.by_model["m2"]
    assert (m1.tp, m1.fn, m1.n) == (1, 1, 2)
    assert m1.accuracy == pytest.approx(0.5) and m1.tnr is None
    assert (m2.tn, m2.fp, m2.n) == (2, 1, 3)
    assert m2.accuracy == pytest.approx(2 / 3)
    assert m2.ppv == 0.0 and m2.npv == 1.0


def test_all_verifiers_by_default_with_agreement_matrix(meta_fixture):
    result = evaluation.meta_evaluate(meta_fixture.project)
    assert result.verifier_names == ["judge-x", "rule-check"]
    judge = result.reports[0]
    assert judge.coverage == 1.0 and judge.missing_item_ids == []
    assert judge.evaluation.overall.accuracy == pytest.approx(5 / 6)
    cell = result.agreement["rule-check"]["judge-x"]
    # shared labeled items: tp c/c, tn i/c, fn inc/c, fp c/i, tn_unclassified i/i -> 2 of 5 agree;
    # expected agreement (2/5*3/5 + 2/5*2/5 + 1/5*0) = 0.4, so kappa = 0
    assert cell["shared_items"] == 5
    assert cell["agreement"] == pytest.approx(0.4)
    assert cell["kappa"] == pytest.approx(0.0)
    assert result.agreement["judge-x"]["rule-check"] == cell
    assert result.agreement["judge-x"]["judge-x"]["shared_items"] == 6


def test_unknown_verifier_and_wrong_project_kind_are_refused(meta_fixture):
    with pytest.raises(evaluation.EvaluationError, match="unknown verifier"):
        evaluation.meta_evaluate(meta_fixture.project, ["no-such-verifier"])
    answer_types = services.create_project(dataset=meta_fixture.project.dataset, kind="answer_type", seed=1)
    with pytest.raises(evaluation.EvaluationError, match="correctness project"):
        evaluation.meta_evaluate(answer_types)


def test_verifier_without_any_verdict_reports_zero_coverage(meta_fixture):
    rule_verifier("never-ran")
    (report,) = evaluation.meta_evaluate(meta_fixture.project, ["never-ran"]).reports
    assert report.judged_items == 0 and report.coverage == 0.0
    assert len(report.missing_item_ids) == 6
    assert report.evaluation.overall.accuracy is None


def test_csv_columns_and_rows(meta_fixture):
    result = evaluation.meta_evaluate(meta_fixture.project, ["rule-check", "judge-x"])
    rows = list(csv.DictReader(io.StringIO(evaluation.meta_evaluation_csv(result))))
    assert tuple(rows[0]) == evaluation.META_EVAL_CSV_FIELDS
    assert evaluation.META_EVAL_CSV_FIELDS[:3] == ("verifier", "scope", "name")
    rule_rows = [row for row in rows if row["verifier"] == "rule-check"]
    assert [(row["scope"], row["name"]) for row in rule_rows] == [
        ("overall", "all"),
        ("answer_class", "A"),
        ("answer_class", "B"),
        ("answer_class", "mean"),
        ("model", "m1"),
        ("model", "m2"),
        ("agreement", "judge-x"),
    ]
    overall = rule_rows[0]
    assert overall["n"] == "5" and overall["labeled_items"] == "6" and overall["missing_verdicts"] == "1"
    assert float(overall["accuracy"]) == pytest.approx(0.6)
    assert float(overall["coverage"]) == pytest.approx(5 / 6)
    assert float(rule_rows[3]["accuracy"]) == pytest.approx(0.5)
    assert rule_rows[4]["tnr"] == ""
    assert float(rule_rows[-1]["agreement"]) == pytest.approx(0.4) and rule_rows[-1]["n"] == "5"


# ---------------------------------------------------------------- command


def test_command_prints_tables(meta_fixture):
    out = io.StringIO()
    call_command(
        "meta_eval", "--project", str(meta_fixture.project.pk), "--verifier", "rule-check", "judge-x", stdout=out
    )
    text = out.getvalue()
    assert "6 labeled item(s)" in text
    assert "rule-check (Rule-based): verdicts on 5 of 6 labeled item(s), coverage 83.3%" in text
    assert f"items without a verdict: {meta_fixture.items['missing'].pk}" in text
    assert "judge-x (LLM judge): verdicts on 6 of 6" in text
    assert "Agreement between verifiers" in text
    assert "40.0 / 0.000 (5)" in text
    assert "0.583" in text  # rule-check macro-F1


def test_command_json_and_csv(meta_fixture, tmp_path):
    out = io.StringIO()
    path = tmp_path / "meta.csv"
    call_command("meta_eval", "--project", str(meta_fixture.project.pk), "--json", "--csv", str(path), stdout=out)
    data = json.loads(out.getvalue())
    assert [entry["verifier"]["name"] for entry in data["verifiers"]] == ["judge-x", "rule-check"]
    rule = data["verifiers"][1]
    assert rule["missing_verdicts"] == 1 and rule["labeled_items"] == 6
    assert rule["overall"]["accuracy"] == pytest.approx(0.6)
    assert rule["by_answer_class"]["A"]["accuracy"] == 1.0
    assert data["agreement"]["rule-check"]["judge-x"]["shared_items"] == 5
    header = path.read_text().splitlines()[0]
    assert header.split(",") == list(evaluation.META_EVAL_CSV_FIELDS)


def test_command_errors(meta_fixture):
    with pytest.raises(CommandError, match="no annotation project"):
        call_command("meta_eval", "--project", "999999")
    with pytest.raises(CommandError, match="unknown verifier"):
        call_command("meta_eval", "--project", str(meta_fixture.project.pk), "--verifier", "nope")


# ---------------------------------------------------------------- API


def _url(project_id: int) -> str:
    return reverse("project-meta-eval", args=[project_id])


def test_api_for_researchers_and_admins(meta_fixture, researcher, admin_role_user, api_client_for):
    for user in (researcher, admin_role_user):
        response = api_client_for(user).get(_url(meta_fixture.project.pk), {"verifier": ["rule-check", "judge-x"]})
        assert response.status_code == 200
        body = response.json()
        assert [entry["verifier"]["name"] for entry in body["verifiers"]] == ["rule-check", "judge-x"]
        assert body["verifiers"][0]["overall"]["macro_f1"] == pytest.approx((1 / 2 + 2 / 3) / 2)
        assert body["agreement"]["judge-x"]["rule-check"]["agreement"] == pytest.approx(0.4)


def test_api_refuses_others(meta_fixture, annotator, adjudicator, api_client_for):
    for user in (annotator, adjudicator):
        assert api_client_for(user).get(_url(meta_fixture.project.pk)).status_code == 403
    assert api_client_for(None).get(_url(meta_fixture.project.pk)).status_code in (401, 403)


def test_api_not_found_and_bad_input(meta_fixture, researcher, api_client_for):
    client = api_client_for(researcher)
    assert client.get(_url(999999)).status_code == 404
    response = client.get(_url(meta_fixture.project.pk), {"verifier": "nope"})
    assert response.status_code == 400 and "unknown verifier" in response.json()["detail"]


def test_api_csv(meta_fixture, researcher, api_client_for):
    response = api_client_for(researcher).get(
        _url(meta_fixture.project.pk), {"verifier": "rule-check", "format": "csv"}
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert rows[0]["verifier"] == "rule-check" and rows[0]["scope"] == "overall"


# ---------------------------------------------------------------- pages


def test_page_shows_tables_matrix_and_csv_link(meta_fixture, researcher, client):
    client.force_login(researcher)
    response = client.get(reverse("meta-eval-page", args=[meta_fixture.project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('data-testid="verifier-report"') == 2
    assert 'data-testid="agreement-matrix"' in html
    assert "Verdicts on 5 of 6 labeled items" in html
    assert 'data-testid="missing-items"' in html
    assert "0.583" in html and "0.833" in html  # rule-check macro-F1, judge-x accuracy
    assert "format=csv" in html


def test_page_csv_download_and_single_verifier(meta_fixture, researcher, client):
    client.force_login(researcher)
    url = reverse("meta-eval-page", args=[meta_fixture.project.pk])
    single = client.get(url, {"verifier": "rule-check"}).content.decode()
    assert single.count('data-testid="verifier-report"') == 1 and 'data-testid="agreement-matrix"' not in single
    response = client.get(url, {"verifier": "rule-check", "format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    assert response.content.decode().splitlines()[0].startswith("verifier,scope,name,n,accuracy")


def test_page_refuses_annotators_and_reports_bad_verifier(meta_fixture, annotator, researcher, client):
    url = reverse("meta-eval-page", args=[meta_fixture.project.pk])
    client.force_login(annotator)
    assert client.get(url).status_code == 404  # a page of a project they may not see
    client.force_login(researcher)
    response = client.get(url, {"verifier": "nope"})
    assert response.status_code == 400 and "unknown verifier" in response.content.decode()


def test_dashboard_section_links_to_the_page(meta_fixture, researcher, client):
    client.force_login(researcher)
    response = client.get(reverse("dashboard-project", args=[meta_fixture.project.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="section-meta-eval"' in html
    assert reverse("meta-eval-page", args=[meta_fixture.project.pk]) in html
    assert "rule-check" in html and "judge-x" in html


def test_dashboard_section_reports_a_bad_final_value_instead_of_failing(meta_fixture, researcher, client):
    from annotation import aggregates
    from annotation.models import Item

    Item.objects.filter(pk=meta_fixture.items["tp"].pk).update(final_value="maybe")
    aggregates.rebuild(meta_fixture.project)  # written behind the workflow's back: recount as the command would
    client.force_login(researcher)
    response = client.get(reverse("dashboard-project", args=[meta_fixture.project.pk]))
    assert response.status_code == 200
    assert "is not a correctness label" in response.content.decode()
