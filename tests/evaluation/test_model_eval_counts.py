"""The model evaluation reads the counts kept per model and question: the same figures as over every sample, in a
number of queries that does not grow with the number of samples."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import services
from core.metrics import passk
from reports import evaluation
from verifybench.models import Dataset

from .conftest import make_completion, make_question, resolve

MODELS = ("m1", "m2", "m3")


def labeled_dataset(questions: int, seed: int):
    """`questions` questions answered twice by each model and once greedily by m1, every answer labeled."""
    generator = random.Random(seed)
    dataset = Dataset.objects.create(name=f"counted-{questions}-{seed}")
    completions = []
    for q in range(questions):
        question = make_question(dataset, f"q{q}")
        for model in MODELS:
            for index in range(2):
                completions.append(make_completion(question, f"{q}-{model}-{index}", model, sample_index=index))
        completions.append(make_completion(question, f"{q}-greedy", "m1", sample_index=9, is_greedy=True))
    project = services.create_project(dataset=dataset, kind="correctness", name=f"counted {questions}", seed=1)
    for completion in completions[:-1]:  # the last one stays unlabeled
        resolve(project, completion, generator.random() < 0.6)
    return dataset, project


def queries(get, url: str, params: dict) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert get(url, params).status_code == 200
    return len(captured)


@pytest.mark.django_db
def test_the_figures_are_those_of_every_sample():
    dataset, project = labeled_dataset(9, seed=2)
    source = evaluation.CorrectnessSource(project=project)
    samples, left_out = evaluation.correctness_samples(dataset, source)
    full = passk.evaluate_models(samples, [1, 2], ["0.5", "1.0"], bootstrap=0)
    kept = evaluation.model_evaluate(dataset, source, [1, 2], ["0.5", "1.0"], bootstrap=0)
    assert left_out == [
        "1 completion(s) of counted-9-2 have no final label in project "
        f"{project.pk} (unresolved, excluded, gold or not in the project) and are left out"
    ]
    assert kept["warnings"] == [*left_out, *full["warnings"]]
    for model in MODELS:
        for key in ("accuracy", "greedy_accuracy", "pass@1", "pass@2", "g-pass@2_1.0", "mg-pass@2", "n_questions"):
            assert kept["models"][model][key] == pytest.approx(full["models"][model][key])
    assert kept["models"]["m1"]["greedy_accuracy"] is not None


@pytest.mark.django_db
def test_the_api_and_the_page_ask_as_many_queries_for_few_and_many_samples(researcher, api_client_for, client):
    client.force_login(researcher)
    api = api_client_for(researcher)
    counted = []
    for questions in (2, 14):
        dataset, project = labeled_dataset(questions, seed=questions)
        source = {"source": f"project:{project.pk}", "k": ["1", "2"], "bootstrap": "50"}
        api_url = reverse("dataset-model-eval", args=[dataset.pk])
        page_url = reverse("model-eval-page", args=[dataset.pk])
        assert api.get(api_url, source).status_code == 200
        assert client.get(page_url, {"source": source["source"]}).status_code == 200
        counted.append(
            (
                queries(api.get, api_url, source),
                queries(client.get, page_url, {"source": source["source"]}),
            )
        )
    assert counted[0] == counted[1]
