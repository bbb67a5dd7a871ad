"""The model-evaluation page chooses k from the number of samples each question has, and explains a single sample.

LiveMathBench recommends n >= 3k samples per question; `passk.suggested_ks` takes the largest powers of two that
meet it (and, below six samples, those with n >= k).
"""

from __future__ import annotations

import io
import re

import pytest
from django.urls import reverse

from annotation import services
from core import workspaces
from core.demo import load_demo
from reports import evaluation
from verifybench.demo import DEMO_DATASET_NAME
from verifybench.models import Dataset

from .conftest import make_completion, make_question, resolve, rule_verifier, set_verdicts

pytestmark = pytest.mark.django_db


def sampled_dataset(name: str, samples: int, *, questions: int = 3, models=("alpha", "beta")):
    """`samples` answers of each model to each question, every other one right (verdicts of verifier `name`-rule)."""
    dataset = Dataset.objects.create(name=name)
    verifier = rule_verifier(f"{name}-rule")
    statuses = {}
    for q in range(questions):
        question = make_question(dataset, f"q{q}")
        for model in models:
            for index in range(samples):
                completion = make_completion(question, f"{model}-{q}-{index}", model, sample_index=index)
                statuses[completion] = "correct" if index % 2 == 0 else "incorrect"
    set_verdicts(verifier, statuses)
    return dataset, verifier


def page(client, dataset, **params):
    response = client.get(reverse("model-eval-page", args=[dataset.pk]), params)
    return response, response.content.decode()


def k_field(html: str) -> str:
    return re.search(r'<input type="text" id="k" name="k" value="([^"]*)"', html).group(1)


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# ---------------------------------------------------------------- choose_ks


def test_choose_ks_reads_the_median_number_of_sampled_answers_per_model_and_question():
    rows = [{"model": "a", "question_id": q, "correct": True, "greedy": False} for q in (1, 1, 1, 2, 2, 3, 3, 3, 3)]
    rows += [{"model": "b", "question_id": 1, "correct": True, "greedy": False}] * 48
    rows += [{"model": "a", "question_id": 2, "correct": True, "greedy": True}] * 10  # greedy answers do not count
    choice = evaluation.choose_ks(rows)
    # counts per (model, question): 2, 3, 4, 48 -> lower median 3
    assert (choice.samples_per_question, choice.fewest, choice.most) == (3, 2, 48)
    assert choice.ks == [2] and not choice.recommended and not choice.single_sample
    assert evaluation.choose_ks([]) is None
    assert evaluation.choose_ks(rows[-1:]) is None


# ---------------------------------------------------------------- the page


def test_many_samples_give_the_largest_powers_of_two_with_three_samples_each(client, researcher):
    dataset, verifier = sampled_dataset("forty-eight", 48, questions=2)
    client.force_login(researcher)
    response, html = page(client, dataset)
    assert response.status_code == 200
    assert k_field(html) == "4 8 16"
    assert 'data-metric="pass@16"' in html and 'data-metric="g-pass@16_1.0"' in html
    assert 'data-metric="mg-pass@4"' in html
    assert html.count('data-testid="gpass-chart"') == 2 and html.count("<polyline") == 6  # two models x three k
    choice = text_of(html[html.index('data-testid="k-choice"') :])
    assert "n = 48" in choice and "k = 4, 8, 16" in choice and "LiveMathBench" in choice
    assert 'data-testid="single-sample"' not in html
    assert "fewer than 3k" not in html and "exceeds the number of samples" not in html


def test_few_samples_fall_back_to_k_within_n_and_say_it_is_below_the_recommendation(client, researcher):
    dataset, _ = sampled_dataset("four", 4)
    client.force_login(researcher)
    _, html = page(client, dataset)
    assert k_field(html) == "2 4"
    choice = text_of(html[html.index('data-testid="k-choice"') :])
    assert "No k of 2 or more has n ≥ 3k" in choice and "k = 2, 4" in choice
    assert 'data-metric="g-pass@4_0.5"' in html
    assert "fewer than 3k" in html  # the warnings name the questions too


def test_k_values_given_in_the_form_are_kept_and_the_choice_is_shown_beside_them(client, researcher):
    dataset, _ = sampled_dataset("twenty-four", 24, questions=1)
    client.force_login(researcher)
    _, html = page(client, dataset, k="3")
    assert k_field(html) == "3"
    assert 'data-metric="pass@3"' in html and 'data-metric="pass@8"' not in html
    assert "the page would choose k = 2, 4, 8" in text_of(html)


def test_one_sample_per_question_shows_accuracy_and_pass_at_1_and_explains_g_pass(client, researcher):
    dataset, _ = sampled_dataset("single", 1, questions=4)
    client.force_login(researcher)
    response, html = page(client, dataset)
    assert response.status_code == 200
    assert k_field(html) == "1"
    explanation = text_of(html[html.index('data-testid="single-sample"') :])
    assert "one sampled answer per model" in explanation
    assert "needs several samples of every question" in explanation and "3k" in explanation
    assert html.count('data-testid="model-report"') == 2
    assert 'data-metric="pass@1"' in html and "Accuracy" in html
    assert "g-pass@" not in html and "mg-pass@" not in html and "<svg" not in html
    assert 'data-testid="model-eval-warnings"' not in html  # nothing to warn about for Pass@1
    # each model's only answer to a question is sample 0, which is right: 100 % accuracy and Pass@1 for both
    assert html.count(">100.00<") == 4


def test_human_labels_of_a_project_with_one_label_per_question_open_the_page(client, researcher):
    dataset = Dataset.objects.create(name="labelled-once")
    completions = [make_completion(make_question(dataset, f"q{q}"), f"c{q}", "alpha") for q in range(3)]
    project = services.create_project(dataset=dataset, kind="correctness", name="Once", seed=1)
    for completion, value in zip(completions, (True, False, True)):
        resolve(project, completion, value)
    client.force_login(researcher)
    response, html = page(client, dataset, source=f"project:{project.pk}")
    assert response.status_code == 200
    assert 'data-testid="single-sample"' in html and 'data-metric="pass@1"' in html
    assert ">66.67<" in html


def test_the_demo_dataset_opens_with_its_human_labels_and_its_verdicts(client, researcher):
    load_demo(stdout=io.StringIO())
    dataset = Dataset.objects.get(name=DEMO_DATASET_NAME)
    workspaces.add_member(dataset.workspace, researcher)
    client.force_login(researcher)
    for params in ({}, {"source": "verifier:sympy-rules"}):
        response, html = page(client, dataset, **params)
        assert response.status_code == 200, params
        assert 'data-testid="k-choice"' in html and html.count('data-testid="model-report"') >= 1
        assert 'data-testid="model-eval-error"' not in html
