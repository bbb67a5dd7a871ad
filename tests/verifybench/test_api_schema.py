import json

from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from verifybench.api.urls import urlpatterns as verifybench_api_urls

OUR_PATHS = [
    "/api/datasets/",
    "/api/datasets/{id}/",
    "/api/datasets/import/",
    "/api/questions/",
    "/api/questions/{id}/",
    "/api/references/",
    "/api/references/{id}/",
    "/api/completions/",
    "/api/completions/{id}/",
    "/api/prior-labels/",
    "/api/prior-labels/{id}/",
]


def test_schema_endpoint_lists_the_benchmark_data_paths(client, db):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    for expected in OUR_PATHS:
        assert expected in paths, expected
    assert "multipart/form-data" in paths["/api/datasets/import/"]["post"]["requestBody"]["content"]
    completion_parameters = {p["name"] for p in paths["/api/completions/"]["get"]["parameters"]}
    assert {"include_text", "model_name", "sample_index", "dataset", "question", "page"} <= completion_parameters


def test_benchmark_data_views_generate_a_valid_schema_without_warnings():
    GENERATOR_STATS.reset()
    generator = SchemaGenerator(patterns=[path("api/", include(verifybench_api_urls))])
    schema = generator.get_schema(request=None, public=True)
    validate_schema(schema)
    assert not GENERATOR_STATS._warn_cache, dict(GENERATOR_STATS._warn_cache)
    assert not GENERATOR_STATS._error_cache, dict(GENERATOR_STATS._error_cache)


def test_docs_page_loads(client, db):
    assert client.get("/api/docs/").status_code == 200
