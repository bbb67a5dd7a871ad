"""Requests of every shape an attacker or a broken client sends get a 4xx that says why, never a 500; and an error
under /api/ is JSON whatever format was asked for."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import services as annotation_services
from core import roles
from grading.models import Competition, PromptTemplate, VerifierConfig
from tests.annotation.conftest import build_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(make_user, api_client_for):
    dataset = build_dataset(questions=2, completions_per_question=2, name="shapes")
    project = annotation_services.create_project(dataset=dataset, kind="correctness", seed=1)
    researcher = make_user(roles.RESEARCHER)
    annotator = make_user(roles.ANNOTATOR)
    competition = Competition.objects.create(name="shapes-competition", dataset=dataset)
    page = Client()
    page.force_login(researcher)
    return {
        "dataset": dataset,
        "project": project,
        "api": api_client_for(researcher),
        "annotator_api": api_client_for(annotator),
        "page": page,
        "competition": competition,
    }


@pytest.mark.parametrize("seed", [2**63, -(2**63) - 1, 10**30])
def test_a_seed_beyond_a_64_bit_integer_is_a_400(world, seed):
    project = world["api"].post(
        "/api/projects/", {"dataset": world["dataset"].pk, "kind": "correctness", "seed": seed}, format="json"
    )
    assert project.status_code == 400 and "seed" in project.json()
    VerifierConfig.objects.create(name="rules", kind="rule")
    selection = world["api"].post(
        "/api/grading/selections/",
        {"dataset": world["dataset"].name, "strategy": "verifybench", "verifiers": ["rules"], "seed": seed},
        format="json",
    )
    assert selection.status_code == 400 and "seed" in selection.json()


NUL_QUERIES = [
    ("api", "/api/projects/{project}/items/", "q"),
    ("api", "/api/projects/{project}/items/", "model"),
    ("api", "/api/projects/{project}/items/", "verifier"),
    ("api", "/api/projects/{project}/meta-eval/", "verifier"),
    ("api", "/api/projects/{project}/meta-eval/", "source"),
    ("api", "/api/datasets/{dataset}/model-eval/", "source"),
    ("api", "/api/datasets/{dataset}/model-eval/", "verifier"),
    ("api", "/api/grading/runs/", "dataset"),
    ("page", "/projects/{project}/items/", "q"),
    ("page", "/projects/{project}/items/", "model"),
    ("page", "/projects/{project}/meta-eval/", "verifier"),
    ("page", "/datasets/{dataset}/model-eval/", "source"),
]


@pytest.mark.parametrize("client_name, path, parameter", NUL_QUERIES)
def test_a_nul_in_a_query_parameter_is_a_400_that_names_it(world, client_name, path, parameter):
    url = path.format(project=world["project"].pk, dataset=world["dataset"].pk)
    response = world[client_name].get(url, {parameter: "bad\x00value"})
    assert response.status_code == 400
    assert parameter in response.content.decode()
    if client_name == "api":
        assert response["Content-Type"].startswith("application/json")


def test_a_nul_in_a_json_value_anywhere_in_a_body_is_a_400(world):
    response = world["api"].post(
        "/api/grading/runs/",
        {"verifier": 1, "dataset": world["dataset"].pk, "options": {"chunk_delay": 0, "note": "a\x00b"}},
        format="json",
    )
    assert response.status_code == 400 and "options" in response.json()["detail"]


@pytest.mark.parametrize("body", ["5", "[]", '"x"', "null", "[1, 2]", "true"])
def test_a_body_that_is_not_a_json_object_is_a_400_everywhere(world, body):
    for url in (
        f"/api/grading/competitions/{world['competition'].pk}/projects/",
        "/api/projects/",
        "/api/grading/runs/",
        "/api/exports/",
    ):
        response = world["api"].post(url, body, content_type="application/json")
        assert response.status_code == 400, (url, body, response.status_code)
        assert "JSON object" in response.json()["detail"]


def test_a_timeout_beyond_an_hour_is_refused(world, make_user, api_client_for):
    template = PromptTemplate.objects.get(name="verifybench-final-judgment", version=1)
    response = world["api"].post(
        "/api/grading/verifiers/",
        {"name": "slow", "kind": "rule", "timeout_seconds": 1e308, "template": template.pk},
        format="json",
    )
    assert response.status_code == 400 and "timeout_seconds" in response.json()


@pytest.mark.parametrize("fmt", ["csv", "api", "yaml", "html"])
def test_a_refusal_is_json_whatever_format_is_asked_for(world, fmt):
    response = world["annotator_api"].get(f"/api/projects/{world['project'].pk}/meta-eval/", {"format": fmt})
    assert response.status_code in (403, 404)
    assert response["Content-Type"].startswith("application/json") and "detail" in response.json()


@pytest.mark.parametrize("path", ["/api/items/abc/", "/api/projects/x/meta-eval/", "/api/no-such-thing/"])
def test_every_api_404_is_json(world, path):
    response = world["api"].get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json") and response.json()["detail"]
