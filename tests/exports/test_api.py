import io
import json
import zipfile

import pytest

from reports.models import ExportJob


@pytest.fixture
def researcher_client(researcher, api_client_for):
    return api_client_for(researcher)


def post_export(client, project, **body):
    return client.post("/api/exports/", {"project": project.pk, **body}, format="json")


def test_annotators_and_adjudicators_are_refused(verifybench_data, annotator, adjudicator, api_client_for):
    for user in (annotator, adjudicator):
        client = api_client_for(user)
        assert post_export(client, verifybench_data.project, format="verifybench").status_code == 403
        assert client.get("/api/exports/").status_code == 403
    assert api_client_for(None).get("/api/exports/").status_code in (401, 403)
    assert not ExportJob.objects.exists()


def test_create_runs_on_commit_then_shows_progress_manifest_and_download(
    verifybench_data, researcher_client, export_root, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = post_export(
            researcher_client,
            verifybench_data.project,
            format="verifybench",
            file_types=["jsonl", "csv"],
            options={"per_type": 2, "seed": 3},
        )
    assert response.status_code == 201, response.content
    created = response.json()
    assert (created["status"], created["download_url"], created["file_types"]) == ("queued", None, ["jsonl", "csv"])
    job_id = created["id"]
    assert researcher_client.get(f"/api/exports/{job_id}/download/").status_code == 409
    assert len(callbacks) == 1
    callbacks[0]()  # the queued task; Celery runs eagerly without a broker

    body = researcher_client.get(f"/api/exports/{job_id}/").json()
    assert body["status"] == "succeeded"
    assert body["progress"] == {"done": 10, "total": 10}
    assert body["shortfalls"]["D - String"] == {"requested": 2, "available": 0, "selected": 0}
    assert body["manifest"]["counts"]["rows"] == 10
    listed = researcher_client.get("/api/exports/").json()
    assert [job["id"] for job in listed["results"]] == [job_id]

    download = researcher_client.get(f"/api/exports/{job_id}/download/")
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as bundle:
        assert json.loads(bundle.read("manifest.json"))["files"].keys() == {"verifybench.jsonl", "verifybench.csv"}
    assert researcher_client.post(f"/api/exports/{job_id}/cancel/").status_code == 409


def test_cancel_a_queued_job(
    verifybench_data, admin_role_user, api_client_for, export_root, django_capture_on_commit_callbacks
):
    client = api_client_for(admin_role_user)
    with django_capture_on_commit_callbacks(execute=False):
        job_id = post_export(client, verifybench_data.project, format="mumath").json()["id"]
    response = client.post(f"/api/exports/{job_id}/cancel/")
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["cancel_requested"]) == ("cancelled", True)
    assert client.get(f"/api/exports/{job_id}/download/").status_code == 409


def test_bad_requests_are_explained(verifybench_data, researcher_client):
    response = post_export(researcher_client, verifybench_data.project, format="verifybench-easy")
    assert response.status_code == 400 and "format" in response.json()
    response = post_export(researcher_client, verifybench_data.project, format="verifybench", file_types=["xlsx"])
    assert response.status_code == 400 and "file_types" in response.json()
    response = post_export(researcher_client, verifybench_data.project, format="verifybench", options={"per_type": 0})
    assert response.status_code == 400 and "per_type" in response.json()["detail"]
    assert not ExportJob.objects.exists()
