"""The benchmark data admin: every page loads for a superuser, search and filters work, the upload page imports."""

import io
import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from verifybench.models import Completion, Dataset, ImportJob, PriorLabel, Question, ReferenceAnswer


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def superuser_client(client, db):
    user = User.objects.create_superuser("root", "root@example.org", "pass-word-123")
    client.force_login(user)
    return client


@pytest.fixture
def content(db):
    dataset = Dataset.objects.create(name="admin-set")
    question = Question.objects.create(
        dataset=dataset,
        external_id="q-admin",
        text="Find $x$ with $2x = 14$.",
        answer_type="A1",
        answer_class="A",
        domain="math_reasoning",
        source="math_reasoning/unit",
        content_hash="h",
    )
    reference = ReferenceAnswer.objects.create(question=question, final_answer="7")
    completion = Completion.objects.create(
        question=question,
        external_id="c-admin",
        model_name="model-admin",
        text="$\\boxed{7}$",
        content_hash="h",
    )
    label = PriorLabel.objects.create(completion=completion, is_correct=True, source_format="verifybench")
    return {"dataset": dataset, "question": question, "reference": reference, "completion": completion, "label": label}


MODELS = ["dataset", "question", "referenceanswer", "completion", "priorlabel"]


@pytest.mark.parametrize("model", MODELS)
def test_changelist_and_change_pages_load(superuser_client, content, model):
    changelist = superuser_client.get(reverse(f"admin:verifybench_{model}_changelist"))
    assert changelist.status_code == 200
    key = {"referenceanswer": "reference", "priorlabel": "label"}.get(model, model)
    change = superuser_client.get(reverse(f"admin:verifybench_{model}_change", args=[content[key].pk]))
    assert change.status_code == 200


@pytest.mark.parametrize(
    "model, query",
    [
        ("dataset", "admin-set"),
        ("question", "2x"),
        ("referenceanswer", "q-admin"),
        ("completion", "model-admin"),
        ("priorlabel", "c-admin"),
    ],
)
def test_search_finds_the_row(superuser_client, content, model, query):
    response = superuser_client.get(reverse(f"admin:verifybench_{model}_changelist"), {"q": query})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1


def test_search_without_match(superuser_client, content):
    response = superuser_client.get(reverse("admin:verifybench_question_changelist"), {"q": "no such words"})
    assert response.context["cl"].result_count == 0


def test_list_filters(superuser_client, content):
    url = reverse("admin:verifybench_completion_changelist")
    assert superuser_client.get(url, {"model_name": "model-admin"}).context["cl"].result_count == 1
    assert (
        superuser_client.get(url, {"question__dataset__id__exact": content["dataset"].pk}).context["cl"].result_count
        == 1
    )
    questions = reverse("admin:verifybench_question_changelist")
    assert superuser_client.get(questions, {"answer_class__exact": "B"}).context["cl"].result_count == 0
    assert superuser_client.get(questions, {"domain__exact": "math_reasoning"}).context["cl"].result_count == 1


def test_imported_text_is_read_only(superuser_client, content):
    question = content["question"]
    url = reverse("admin:verifybench_question_change", args=[question.pk])
    response = superuser_client.post(
        url,
        {
            "text": "replaced",
            "domain": "logic_reasoning",
            "source": "x",
            "subject": "",
            "answer_type": "A1",
            "answer_class": "A",
            "references-TOTAL_FORMS": "1",
            "references-INITIAL_FORMS": "1",
            "references-MIN_NUM_FORMS": "0",
            "references-MAX_NUM_FORMS": "1000",
            "references-0-id": content["reference"].pk,
            "references-0-question": question.pk,
            "completions-TOTAL_FORMS": "1",
            "completions-INITIAL_FORMS": "1",
            "completions-MIN_NUM_FORMS": "0",
            "completions-MAX_NUM_FORMS": "1000",
            "completions-0-id": content["completion"].pk,
            "completions-0-question": question.pk,
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else ""
    question.refresh_from_db()
    assert question.text == "Find $x$ with $2x = 14$."
    assert question.source == "math_reasoning/unit"
    assert question.domain == "logic_reasoning"


def test_imported_rows_cannot_be_added_by_hand(superuser_client, content):
    for model in ["question", "referenceanswer", "completion", "priorlabel"]:
        assert superuser_client.get(reverse(f"admin:verifybench_{model}_add")).status_code == 403


def test_researchers_without_staff_status_cannot_open_the_admin(client, researcher):
    client.force_login(researcher)
    response = client.get(reverse("admin:verifybench_dataset_import"))
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def _upload(lines, name="admin.jsonl"):
    upload = io.BytesIO(("\n".join(json.dumps(line) for line in lines) + "\n").encode())
    upload.name = name
    return upload


def _record(question_id, completion_id, **overrides):
    record = {
        "question_id": question_id,
        "question": "What is $3 + 4$?",
        "answer": "7",
        "completion_id": completion_id,
        "completion": "$3 + 4 = \\boxed{7}$",
        "completion_model": "model-upload",
        "gold_correct": True,
        "answer_type": "A1 - Integer",
        "answer_subtype": "A - Numeric Values",
        "source": "math_reasoning/admin",
        "annotator": ["a"],
    }
    record.update(overrides)
    return record


def test_upload_page_loads_and_is_linked_from_the_dataset_list(superuser_client, db):
    url = reverse("admin:verifybench_dataset_import")
    page = superuser_client.get(url)
    assert page.status_code == 200
    assert b'enctype="multipart/form-data"' in page.content
    assert url.encode() in superuser_client.get(reverse("admin:verifybench_dataset_changelist")).content


def test_upload_page_imports_and_shows_the_report(superuser_client, db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = superuser_client.post(
            reverse("admin:verifybench_dataset_import"),
            {
                "file": _upload([_record("a1", "a1-1"), _record("a1", "a1-2", gold_correct=False)]),
                "dataset": "from-admin",
                "format": "verifybench",
            },
        )
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response.url == reverse("job-detail", args=["import", job.pk])
    assert job.status == "succeeded" and job.report["ok"] and job.source_name == "admin.jsonl"
    page = superuser_client.get(response.url).content.decode()
    assert "admin.jsonl" in page and "2 completions created" in page
    assert Completion.objects.filter(question__dataset__name="from-admin").count() == 2


def test_upload_page_shows_the_errors_of_a_rejected_file(superuser_client, db, django_capture_on_commit_callbacks):
    broken = _record("a2", "a2-1")
    del broken["completion"]
    with django_capture_on_commit_callbacks(execute=True):
        response = superuser_client.post(
            reverse("admin:verifybench_dataset_import"),
            {
                "file": _upload([_record("a1", "a1-1"), broken]),
                "dataset": "rejected-in-admin",
                "format": "verifybench",
            },
        )
    job = ImportJob.objects.get()
    assert response.status_code == 302 and job.status == "failed"
    report = job.report
    assert not report["ok"]
    assert [(error["line"], error["field"]) for error in report["errors"]] == [(2, "completion")]
    page = superuser_client.get(response.url).content.decode()
    assert "Nothing was written" in page and "required field is missing" in page
    assert not Dataset.objects.filter(name="rejected-in-admin").exists()
