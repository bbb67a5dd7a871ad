"""JSON nested too deeply is refused with a clear message wherever JSON comes in: request bodies (a 400, even
anonymously), import lines from an upload and from the command, proof import lines; never a RecursionError."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from core import jsonlimits
from tests.verifybench.test_api import jsonl_upload, upload_and_import, verifybench_line
from verifybench.models import Dataset

DEEP = "[" * 50_000 + "]" * 50_000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_the_limit_is_exact_and_strings_do_not_count():
    assert jsonlimits.loads(nested(100), max_depth=100) == json.loads(nested(100))
    with pytest.raises(jsonlimits.JSONTooDeep):
        jsonlimits.loads(nested(101), max_depth=100)
    with pytest.raises(jsonlimits.JSONTooDeep, match="nested too deeply"):
        jsonlimits.loads(DEEP, max_depth=100)
    brackets_in_text = json.dumps({"text": "[" * 5000, "list": [{"a": [1]}] * 300})
    assert jsonlimits.loads(brackets_in_text, max_depth=4)["text"] == "[" * 5000
    with pytest.raises(json.JSONDecodeError):
        jsonlimits.loads("[1,", max_depth=100)


@pytest.mark.django_db
def test_a_deep_body_to_the_token_endpoint_is_a_400_even_anonymously():
    response = APIClient().post("/api/auth/token/", DEEP, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


@pytest.mark.parametrize(
    "url", ["/api/exports/", "/api/grading/verifiers/", "/api/grading/judge-hosts/", "/api/projects/"]
)
def test_a_deep_body_to_any_endpoint_is_a_400(url, admin_role_user, api_client_for, settings):
    settings.JSON_MAX_DEPTH = 20
    client = api_client_for(admin_role_user)
    for body in (DEEP, json.dumps({"payload": json.loads(nested(21))})):
        response = client.post(url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.status_code)
        assert "nested too deeply" in response.json()["detail"]


def test_a_deep_import_line_is_a_line_error_in_an_upload(
    researcher, api_client_for, django_capture_on_commit_callbacks
):
    researcher_client = api_client_for(researcher)
    upload = jsonl_upload(verifybench_line("d1", "d1-a"), DEEP)
    job, report = upload_and_import(
        researcher_client, django_capture_on_commit_callbacks, file=upload, dataset="deep", format="verifybench"
    )
    assert job["status"] == "failed"
    (error,) = report["errors"]
    assert error["line"] == 2 and "nested too deeply" in error["reason"]
    assert not Dataset.objects.filter(name="deep").exists()


@pytest.mark.django_db
def test_a_deep_import_line_is_a_line_error_from_the_command(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(verifybench_line("d1", "d1-a") + "\n" + DEEP + "\n")
    err = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(
            "import_jsonl", "--dataset", "deep", "--format", "verifybench", str(path), stdout=io.StringIO(), stderr=err
        )
    assert raised.value.returncode == 1
    assert "line 2" in err.getvalue() and "nested too deeply" in err.getvalue()
    assert "RecursionError" not in err.getvalue()


@pytest.mark.django_db
def test_a_deep_proof_import_line_is_a_line_error():
    from grading.proofs.importing import import_matharena_proofs
    from verifybench.services import ImportRejected

    with pytest.raises(ImportRejected) as rejected:
        import_matharena_proofs(competition_name="deep", source=io.BytesIO(DEEP.encode() + b"\n"))
    (error,) = rejected.value.report.errors
    assert error.line == 1 and "nested too deeply" in error.reason
