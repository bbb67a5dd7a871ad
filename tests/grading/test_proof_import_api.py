"""MathArena proof files go through the same import entry points as the other formats: the command and the API."""

import io
import json

import pytest
from django.core.management import call_command

from grading.models import Competition, ProofProblem, ProofSubmission
from verifybench.models import Dataset

PROBLEM = {
    "problem_idx": 1,
    "problem": "Prove that $n^3 - n$ is divisible by $6$.",
    "points": 7,
    "grading_scheme": [
        {"title": "Factor", "points": 3, "desc": "Writes (n-1)n(n+1)."},
        {"title": "Divisibility", "points": 4, "desc": "Argues 2 and 3 divide it."},
    ],
    "sample_solution": "Three consecutive integers contain a multiple of 2 and of 3.",
}
OUTPUT = {
    "problem_idx": 1,
    "model_name": "model-a",
    "model_config": {"temperature": 0.6},
    "idx_answer": 0,
    "answer": "$n^3-n=(n-1)n(n+1)$, a product of three consecutive integers.",
}


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


class Imported:
    """The upload's import job as it ended: its report is the body, the status code says how it ended."""

    def __init__(self, response, client):
        self.upload = response
        self.job = client.get(response.json()["url"]).json() if response.status_code == 202 else None
        self.status_code = (
            response.status_code if self.job is None else (201 if self.job["status"] == "succeeded" else 400)
        )

    def json(self):
        return self.job["report"] if self.job is not None else self.upload.json()

    @property
    def content(self):
        return self.job if self.job is not None else self.upload.content


@pytest.fixture
def upload(django_capture_on_commit_callbacks):
    def post(client, content: bytes, **fields):
        file = io.BytesIO(content)
        file.name = "proofs.jsonl"
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/api/datasets/import/", {"file": file, "dataset": "API Olympiad", **fields}, format="multipart"
            )
        return Imported(response, client)

    return post


@pytest.mark.django_db
def test_proof_file_imports_through_the_api(researcher, api_client_for, upload):
    response = upload(api_client_for(researcher), jsonl(PROBLEM, OUTPUT), format="matharena-proofs")
    assert response.status_code == 201, response.content
    assert response.json()["problems_created"] == 1 and response.json()["submissions_created"] == 1
    competition = Competition.objects.get(name="API Olympiad")
    assert ProofProblem.objects.filter(competition=competition).count() == 1
    assert ProofSubmission.objects.filter(problem__competition=competition, model_name="model-a").count() == 1


@pytest.mark.django_db
def test_a_bad_proof_line_rejects_the_upload_and_writes_nothing(researcher, api_client_for, upload):
    broken = dict(OUTPUT, idx_answer="first")
    response = upload(api_client_for(researcher), jsonl(PROBLEM, broken), format="matharena-proofs")
    assert response.status_code == 400
    assert any(error["line"] == 2 and error["field"] == "idx_answer" for error in response.json()["errors"])
    assert not Competition.objects.filter(name="API Olympiad").exists()
    assert not ProofSubmission.objects.exists()


@pytest.mark.django_db
def test_annotators_cannot_import_proofs(annotator, api_client_for, upload):
    assert upload(api_client_for(annotator), jsonl(PROBLEM), format="matharena-proofs").status_code == 403
    assert not Dataset.objects.exists()


@pytest.mark.django_db
def test_import_jsonl_command_imports_proofs(tmp_path):
    path = tmp_path / "proofs.jsonl"
    path.write_bytes(jsonl(PROBLEM, OUTPUT))
    out = io.StringIO()
    call_command("import_jsonl", str(path), dataset="Command Olympiad", format="matharena-proofs", stdout=out)
    assert "competition 'Command Olympiad'" in out.getvalue()
    assert ProofSubmission.objects.filter(problem__competition__name="Command Olympiad").count() == 1


@pytest.mark.django_db
def test_a_proof_file_is_recognised_without_a_format(researcher, api_client_for, upload):
    response = upload(api_client_for(researcher), jsonl(PROBLEM, OUTPUT))
    assert response.status_code == 201, response.content
    assert response.json()["format"] == "matharena-proofs"
    assert ProofSubmission.objects.filter(problem__competition__name="API Olympiad").count() == 1
    # a file of model proofs alone (its problems imported before) is recognised too
    second = dict(OUTPUT, model_name="model-b")
    response = upload(api_client_for(researcher), jsonl(second))
    assert response.status_code == 201, response.content
    assert ProofSubmission.objects.filter(problem__competition__name="API Olympiad").count() == 2


@pytest.mark.django_db
def test_a_question_file_is_not_taken_for_proofs(tmp_path):
    from verifybench.services import import_jsonl

    path = tmp_path / "questions.jsonl"
    path.write_text(
        json.dumps(
            {
                "question_id": "q1",
                "question": "1+1?",
                "reference_answer": "2",
                "answer_type": "A1",
                "completion_id": "c1",
                "model": "m",
                "completion": "It is 2.",
            }
        )
        + "\n"
    )
    report = import_jsonl(dataset_name="plain", source=str(path))
    assert report.format != "matharena-proofs" and report.completions_created == 1
    assert not Competition.objects.exists()
