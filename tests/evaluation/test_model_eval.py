"""Model stability from the database, hand-checked on `sample_fixture` (one question).

Human labels: alpha n=4, c=2 -> Pass@2 = 1 - C(2,2)/C(4,2) = 5/6, G-Pass@2_1.0 = C(2,2)/C(4,2) = 1/6,
G-Pass@2_0.5 = Pass@2 = 5/6, mG-Pass@2 = (2/2) * G-Pass@2_1.0 = 1/6; greedy accuracy 1. beta n=4, c=0 -> all 0.
Verdicts: alpha n=4, c=3 (inconclusive counts as incorrect) -> Pass@2 = 1, G-Pass@2_1.0 = C(3,2)/6 = 1/2;
beta n=3 (one completion without a verdict), c=0.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from reports import evaluation

pytestmark = pytest.mark.django_db


def test_from_human_labels(sample_fixture):
    source = evaluation.CorrectnessSource(project=sample_fixture.project)
    result = evaluation.model_evaluate(sample_fixture.dataset, source, [2], ["0.5", "1.0"], bootstrap=200)
    alpha = result["models"]["alpha"]
    assert alpha["n_questions"] == 1
    assert alpha["samples_per_question"] == {"min": 4, "max": 4}
    assert alpha["accuracy"] == pytest.approx(0.5)
    assert alpha["greedy_accuracy"] == 1.0
    assert alpha["pass@2"] == pytest.approx(5 / 6)
    assert alpha["g-pass@2_0.5"] == pytest.approx(5 / 6)
    assert alpha["g-pass@2_1.0"] == pytest.approx(1 / 6)
    assert alpha["mg-pass@2"] == pytest.approx(1 / 6)
    assert alpha["ci"]["pass@2"] == pytest.approx([5 / 6, 5 / 6])  # one question: the interval is the point
    beta = result["models"]["beta"]
    assert beta["pass@2"] == 0.0 and beta["greedy_accuracy"] is None


def test_from_verdicts_counts_inconclusive_as_incorrect_and_reports_unjudged(sample_fixture):
    source = evaluation.CorrectnessSource(verifier=sample_fixture.verifier)
    result = evaluation.model_evaluate(sample_fixture.dataset, source, [2], ["1.0"], bootstrap=0)
    alpha, beta = result["models"]["alpha"], result["models"]["beta"]
    assert alpha["accuracy"] == pytest.approx(3 / 4)
    assert alpha["pass@2"] == 1.0
    assert alpha["g-pass@2_1.0"] == pytest.approx(1 / 2)
    assert alpha["mg-pass@2"] == pytest.approx(1 / 2)
    assert alpha["ci"]["pass@2"] is None
    assert beta["samples_per_question"] == {"min": 3, "max": 3} and beta["pass@2"] == 0.0
    assert any("1 completion(s) of samples-fixture have no verdict from sample-rule" in w for w in result["warnings"])


def test_warns_when_fewer_than_3k_samples(sample_fixture):
    source = evaluation.CorrectnessSource(project=sample_fixture.project)
    few = evaluation.model_evaluate(sample_fixture.dataset, source, [2], ["1.0"], bootstrap=0)["warnings"]
    assert any("alpha: 1 question(s) have fewer than 3k = 6 samples for k=2" in w for w in few)
    enough = evaluation.model_evaluate(sample_fixture.dataset, source, [1], ["1.0"], bootstrap=0)["warnings"]
    assert not any("fewer than 3k" in w for w in enough)


def test_unlabeled_completions_are_reported(sample_fixture):
    from annotation import aggregates
    from annotation.models import Item
    from verifybench.models import Completion

    b3 = Completion.objects.filter(question__dataset=sample_fixture.dataset, external_id="b3").values("pk")
    Item.objects.filter(project=sample_fixture.project, subject_id__in=b3).update(state="in_progress")
    aggregates.rebuild(sample_fixture.project)  # a raw update moves no tally
    source = evaluation.CorrectnessSource(project=sample_fixture.project)
    result = evaluation.model_evaluate(sample_fixture.dataset, source, [1], ["1.0"], bootstrap=0)
    assert result["models"]["beta"]["samples_per_question"] == {"min": 3, "max": 3}
    assert any("1 completion(s) of samples-fixture have no final label" in w for w in result["warnings"])


def test_sources_and_parameters_are_checked(sample_fixture):
    assert evaluation.parse_source(f"project:{sample_fixture.project.pk}").project == sample_fixture.project
    assert evaluation.parse_source("verifier:sample-rule").verifier == sample_fixture.verifier
    for bad in ("", "project:x", "project:999999", "verifier:nope", "labels:1"):
        with pytest.raises(evaluation.EvaluationError):
            evaluation.parse_source(bad)
    with pytest.raises(evaluation.EvaluationError):
        evaluation.parse_ks(["0"])
    with pytest.raises(evaluation.EvaluationError):
        evaluation.parse_taus(["1.5"])
    other = evaluation.parse_source(f"project:{sample_fixture.project.pk}")
    from verifybench.models import Dataset

    with pytest.raises(evaluation.EvaluationError, match="another dataset"):
        evaluation.model_evaluate(Dataset.objects.create(name="elsewhere"), other, [1], ["1.0"])


# ---------------------------------------------------------------- command


def test_command_json_has_the_gpass_shape(sample_fixture):
    out = io.StringIO()
    call_command(
        "model_eval",
        "--dataset",
        "samples-fixture",
        "--project",
        str(sample_fixture.project.pk),
        "--k",
        "2",
        "--tau",
        "0.5",
        "1.0",
        "--json",
        "--bootstrap",
        "50",
        stdout=out,
    )
    data = json.loads(out.getvalue())
    assert set(data) == {"models", "warnings"}
    alpha = data["models"]["alpha"]
    assert {
        "n_questions",
        "samples_per_question",
        "accuracy",
        "greedy_accuracy",
        "pass@2",
        "g-pass@2_0.5",
        "g-pass@2_1.0",
        "mg-pass@2",
        "questions",
        "ci",
    } <= set(alpha)
    assert alpha["pass@2"] == pytest.approx(5 / 6)
    assert any("fewer than 3k" in warning for warning in data["warnings"])


def test_command_table_from_verdicts(sample_fixture):
    out = io.StringIO()
    call_command(
        "model_eval",
        "--dataset",
        "samples-fixture",
        "--verifier",
        "sample-rule",
        "--k",
        "2",
        "--tau",
        "1.0",
        "--bootstrap",
        "0",
        stdout=out,
    )
    text = out.getvalue()
    assert "verdicts of sample-rule" in text
    assert "g-pass@2_1.0" in text and "50.00" in text
    assert "warning:" in text


def test_command_errors(sample_fixture):
    with pytest.raises(CommandError, match="no dataset"):
        call_command("model_eval", "--dataset", "nope", "--verifier", "sample-rule")
    with pytest.raises(CommandError, match="unknown verifier"):
        call_command("model_eval", "--dataset", "samples-fixture", "--verifier", "nope")
    with pytest.raises(CommandError, match="tau"):
        call_command("model_eval", "--dataset", "samples-fixture", "--verifier", "sample-rule", "--tau", "2")


# ---------------------------------------------------------------- API


def _url(dataset_id: int) -> str:
    return reverse("dataset-model-eval", args=[dataset_id])


def test_api(sample_fixture, researcher, api_client_for):
    client = api_client_for(researcher)
    response = client.get(
        _url(sample_fixture.dataset.pk),
        {
            "source": f"project:{sample_fixture.project.pk}",
            "k": ["2"],
            "tau": ["0.5", "1.0"],
            "bootstrap": "0",
        },
    )
    assert response.status_code == 200
    body = response.json()
    assert body["source"]["kind"] == "project" and body["ks"] == [2] and body["taus"] == ["0.5", "1.0"]
    assert body["models"]["alpha"]["g-pass@2_1.0"] == pytest.approx(1 / 6)
    by_verifier = client.get(
        _url(sample_fixture.dataset.pk), {"source": "verifier:sample-rule", "k": 2, "bootstrap": 0}
    )
    assert by_verifier.json()["models"]["alpha"]["g-pass@2_1.0"] == pytest.approx(1 / 2)


def test_api_permissions_and_errors(sample_fixture, researcher, annotator, adjudicator, api_client_for):
    url = _url(sample_fixture.dataset.pk)
    for user in (annotator, adjudicator):
        assert api_client_for(user).get(url, {"source": "verifier:sample-rule"}).status_code == 403
    client = api_client_for(researcher)
    assert client.get(_url(999999), {"source": "verifier:sample-rule"}).status_code == 404
    assert client.get(url).status_code == 400
    assert client.get(url, {"source": "verifier:sample-rule", "k": "zero"}).status_code == 400
    assert client.get(url, {"source": "verifier:sample-rule", "bootstrap": "-1"}).status_code == 400


# ---------------------------------------------------------------- page


def test_page_renders_the_table_and_the_chart(sample_fixture, researcher, client):
    client.force_login(researcher)
    response = client.get(
        reverse("model-eval-page", args=[sample_fixture.dataset.pk]),
        {
            "source": f"project:{sample_fixture.project.pk}",
            "k": "1 2",
            "tau": "0.5,1.0",
        },
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('data-testid="model-report"') == 2
    assert html.count("<svg") == 2 and html.count('data-testid="gpass-chart"') == 2
    assert html.count("<polyline") == 4  # two models x two k
    assert "k = 1" in html and "k = 2" in html
    assert 'data-metric="pass@2"' in html
    assert "83.33" in html and "16.67" in html  # alpha Pass@2 and G-Pass@2_1.0 in percent
    assert "fewer than 3k" in html


def test_page_defaults_to_the_first_source_and_refuses_annotators(sample_fixture, researcher, annotator, client):
    url = reverse("model-eval-page", args=[sample_fixture.dataset.pk])
    client.force_login(annotator)
    assert client.get(url).status_code == 404  # a page of a dataset they may not see
    client.force_login(researcher)
    html = client.get(url).content.decode()
    assert "final human labels of project" in html and "<svg" in html
    bad = client.get(url, {"source": "verifier:sample-rule", "tau": "3"})
    assert bad.status_code == 400 and 'data-testid="model-eval-error"' in bad.content.decode()
