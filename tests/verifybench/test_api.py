"""The benchmark data API: who may see what, filters, pagination, the lean completion listing, the upload."""

import io
import json

import pytest

from core import roles
from verifybench import services
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


LIST_URLS = ["/api/datasets/", "/api/questions/", "/api/references/", "/api/completions/", "/api/prior-labels/"]


def add_question(
    dataset,
    external_id,
    *,
    answer_type="A1",
    answer_class="A",
    domain="math_reasoning",
    source="math_reasoning/unit",
    subject="",
    text=None,
    reference="42",
):
    question = Question.objects.create(
        dataset=dataset,
        external_id=external_id,
        text=text or f"What is question {external_id}?",
        domain=domain,
        source=source,
        subject=subject,
        answer_type=answer_type,
        answer_class=answer_class,
        content_hash=f"hash-{external_id}",
    )
    ReferenceAnswer.objects.create(question=question, final_answer=reference, is_primary=True)
    return question


def add_completion(question, external_id, model_name, *, sample_index=0, text="The answer is $\\boxed{42}$."):
    return Completion.objects.create(
        question=question,
        external_id=external_id,
        model_name=model_name,
        sample_index=sample_index,
        text=text,
        content_hash=f"hash-{question.external_id}-{external_id}",
    )


@pytest.fixture
def data(db):
    algebra = Dataset.objects.create(name="algebra")
    logic = Dataset.objects.create(name="logic")
    q1 = add_question(algebra, "q1", answer_type="A1", answer_class="A", subject="Algebra")
    q2 = add_question(
        algebra,
        "q2",
        answer_type="B3",
        answer_class="B",
        source="math_reasoning/other",
        text="Solve $x^2 > 4$.",
        reference="(-\\infty,-2)\\cup(2,\\infty)",
    )
    q3 = add_question(
        logic,
        "q3",
        answer_type="C3",
        answer_class="C",
        domain="logic_reasoning",
        source="logic_reasoning/puzzles",
        reference="True",
    )
    c1 = add_completion(q1, "c1", "model-a")
    add_completion(q1, "c2", "model-b", sample_index=1)
    add_completion(q2, "c3", "model-a")
    add_completion(q3, "c4", "model-c")
    PriorLabel.objects.create(completion=c1, is_correct=True, source_format="verifybench", annotators=["a1", "a2"])
    for dataset in (algebra, logic):
        services.recount(dataset)  # as an import does
    return {"algebra": algebra, "logic": logic, "q1": q1, "q2": q2, "q3": q3, "c1": c1}


@pytest.fixture
def researcher_client(researcher, api_client_for):
    return api_client_for(researcher)


def results(response):
    assert response.status_code == 200, response.content
    return response.json()["results"]


# --- permissions ---------------------------------------------------------------------------------------------


def detail_urls(data):
    reference = data["q1"].references.get()
    label = data["c1"].prior_labels.get()
    return [
        f"/api/datasets/{data['algebra'].pk}/",
        f"/api/questions/{data['q1'].pk}/",
        f"/api/references/{reference.pk}/",
        f"/api/completions/{data['c1'].pk}/",
        f"/api/prior-labels/{label.pk}/",
    ]


@pytest.mark.parametrize("role", [roles.ANNOTATOR, roles.ADJUDICATOR])
def test_annotators_and_adjudicators_are_refused_every_endpoint(role, make_user, api_client_for, data):
    client = api_client_for(make_user(role))
    for url in LIST_URLS + detail_urls(data):
        assert client.get(url).status_code == 403, url
    assert client.post("/api/datasets/", {"name": "x"}, format="json").status_code == 403
    assert client.patch(f"/api/datasets/{data['algebra'].pk}/", {"description": "x"}, format="json").status_code == 403
    assert client.delete(f"/api/datasets/{data['algebra'].pk}/").status_code == 403
    upload = io.BytesIO(b"{}\n")
    upload.name = "x.jsonl"
    assert client.post("/api/datasets/import/", {"file": upload, "dataset": "x"}, format="multipart").status_code == 403
    assert Dataset.objects.filter(name="x").count() == 0


def test_anonymous_is_refused_every_endpoint(api_client_for, data):
    client = api_client_for(None)
    for url in LIST_URLS + detail_urls(data):
        assert client.get(url).status_code in (401, 403), url
    assert client.post("/api/datasets/", {"name": "x"}, format="json").status_code in (401, 403)
    assert not Dataset.objects.filter(name="x").exists()


def test_a_user_without_a_role_is_refused(make_user, api_client_for, data):
    client = api_client_for(make_user(None))
    for url in LIST_URLS:
        assert client.get(url).status_code == 403, url


@pytest.mark.parametrize("user_fixture", ["researcher", "admin_role_user"])
def test_researchers_and_admins_read_everything(user_fixture, request, api_client_for, data):
    client = api_client_for(request.getfixturevalue(user_fixture))
    for url in LIST_URLS + detail_urls(data):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("user_fixture", ["researcher", "admin_role_user"])
def test_researchers_and_admins_manage_datasets(user_fixture, request, api_client_for, db):
    user = request.getfixturevalue(user_fixture)
    client = api_client_for(user)
    created = client.post("/api/datasets/", {"name": "fresh", "description": "new"}, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["created_by"] == user.username
    assert (body["question_count"], body["completion_count"], body["model_count"]) == (0, 0, 0)
    url = f"/api/datasets/{body['id']}/"
    updated = client.patch(url, {"description": "changed"}, format="json")
    assert updated.status_code == 200
    assert updated.json()["description"] == "changed"
    assert client.delete(url).status_code == 204
    assert not Dataset.objects.filter(name="fresh").exists()


def test_deleting_a_dataset_in_use_is_a_409_and_deletes_nothing(researcher_client, data):
    from annotation.models import AnnotationProject

    AnnotationProject.objects.create(name="round 1", dataset=data["algebra"], kind="correctness")
    response = researcher_client.delete(f"/api/datasets/{data['algebra'].pk}/")
    assert response.status_code == 409
    assert "round 1" in response.json()["detail"]
    assert Question.objects.filter(dataset=data["algebra"]).count() == 2


def test_imported_content_is_read_only_through_the_api(researcher_client, data):
    assert researcher_client.post("/api/questions/", {}, format="json").status_code == 405
    assert researcher_client.delete(f"/api/questions/{data['q1'].pk}/").status_code == 405
    assert (
        researcher_client.patch(f"/api/completions/{data['c1'].pk}/", {"text": "x"}, format="json").status_code == 405
    )
    assert researcher_client.delete(f"/api/prior-labels/{data['c1'].prior_labels.get().pk}/").status_code == 405


def test_duplicate_dataset_name_is_a_clear_400(researcher_client, data):
    response = researcher_client.post("/api/datasets/", {"name": "algebra"}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()


# --- content, filters, search, ordering, pagination ---------------------------------------------------------


def test_dataset_counts(researcher_client, data):
    by_name = {row["name"]: row for row in results(researcher_client.get("/api/datasets/"))}
    assert (
        by_name["algebra"]["question_count"],
        by_name["algebra"]["completion_count"],
        by_name["algebra"]["model_count"],
    ) == (2, 3, 2)
    assert (by_name["logic"]["question_count"], by_name["logic"]["completion_count"]) == (1, 1)


def test_question_has_its_primary_reference_nested(researcher_client, data):
    body = researcher_client.get(f"/api/questions/{data['q2'].pk}/").json()
    assert body["primary_reference"]["final_answer"] == "(-\\infty,-2)\\cup(2,\\infty)"
    assert body["dataset_name"] == "algebra"
    assert body["answer_type_label"] == "B3 - Interval"
    assert body["completion_count"] == 1


@pytest.mark.parametrize(
    "query, expected",
    [
        ("dataset={algebra}", {"q1", "q2"}),
        ("dataset_name=logic", {"q3"}),
        ("answer_type=B3", {"q2"}),
        ("answer_type=A1&answer_type=C3", {"q1", "q3"}),
        ("answer_class=C", {"q3"}),
        ("domain=logic_reasoning", {"q3"}),
        ("source=math_reasoning/other", {"q2"}),
        ("source_prefix=math_reasoning/", {"q1", "q2"}),
        ("subject=Algebra", {"q1"}),
        ("search=x^2", {"q2"}),
    ],
)
def test_question_filters(researcher_client, data, query, expected):
    query = query.format(algebra=data["algebra"].pk)
    assert {row["external_id"] for row in results(researcher_client.get(f"/api/questions/?{query}"))} == expected


def test_invalid_filter_value_is_a_400(researcher_client, data):
    assert researcher_client.get("/api/questions/?answer_type=Z9").status_code == 400


def test_question_ordering(researcher_client, data):
    rows = results(researcher_client.get("/api/questions/?ordering=-external_id"))
    assert [row["external_id"] for row in rows] == ["q3", "q2", "q1"]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("dataset={algebra}", {"c1", "c2", "c3"}),
        ("question={q1}", {"c1", "c2"}),
        ("model_name=model-a", {"c1", "c3"}),
        ("sample_index=1", {"c2"}),
        ("answer_class=C", {"c4"}),
    ],
)
def test_completion_filters(researcher_client, data, query, expected):
    query = query.format(algebra=data["algebra"].pk, q1=data["q1"].pk)
    assert {row["external_id"] for row in results(researcher_client.get(f"/api/completions/?{query}"))} == expected


def test_completion_text_can_be_left_out(researcher_client, data):
    full = results(researcher_client.get("/api/completions/"))
    lean = results(researcher_client.get("/api/completions/?include_text=0"))
    assert all("text" in row for row in full)
    assert all("text" not in row for row in lean)
    assert {row["id"] for row in full} == {row["id"] for row in lean}
    assert lean[0]["dataset"] in {data["algebra"].pk, data["logic"].pk}


def test_reference_and_prior_label_filters(researcher_client, data):
    references = results(researcher_client.get(f"/api/references/?dataset={data['logic'].pk}"))
    assert [row["final_answer"] for row in references] == ["True"]
    labels = results(researcher_client.get("/api/prior-labels/?model_name=model-a"))
    assert [(row["completion"], row["is_correct"], row["annotators"]) for row in labels] == [
        (data["c1"].pk, True, ["a1", "a2"])
    ]
    assert results(researcher_client.get("/api/prior-labels/?is_correct=false")) == []


def test_pagination(researcher_client, db):
    dataset = Dataset.objects.create(name="big")
    for index in range(55):
        add_question(dataset, f"q{index:03d}")
    first = researcher_client.get("/api/questions/?dataset_name=big").json()
    assert first["count"] == 55
    assert len(first["results"]) == 50
    assert first["next"]
    second = researcher_client.get(first["next"]).json()
    assert len(second["results"]) == 5
    assert second["next"] is None


def test_question_listing_query_count_does_not_grow_with_rows(researcher_client, db, django_assert_max_num_queries):
    dataset = Dataset.objects.create(name="queries")
    for index in range(30):
        question = add_question(dataset, f"q{index}")
        add_completion(question, "c", "model-a")
    with django_assert_max_num_queries(8):
        assert len(results(researcher_client.get("/api/questions/"))) == 30
    with django_assert_max_num_queries(8):
        assert len(results(researcher_client.get("/api/completions/"))) == 30


# --- upload ----------------------------------------------------------------------------------------------------


def verifybench_line(question_id, completion_id, *, correct=True, **overrides):
    record = {
        "question_id": question_id,
        "question": f"Compute {question_id}.",
        "answer": "7",
        "completion_id": completion_id,
        "completion": "So the result is $\\boxed{7}$.",
        "completion_model": "model-x",
        "gold_correct": correct,
        "answer_type": "A1 - Integer",
        "answer_subtype": "A - Numeric Values",
        "source": "math_reasoning/upload",
        "annotator": ["u1", "u2"],
    }
    record.update(overrides)
    return json.dumps(record)


def jsonl_upload(*lines, name="upload.jsonl"):
    upload = io.BytesIO(("\n".join(lines) + "\n").encode())
    upload.name = name
    return upload


def upload_and_import(client, capture, **fields):
    """Upload through the API (202 and an import job), let the job run, and return (job payload, report)."""
    with capture(execute=True):
        response = client.post("/api/datasets/import/", fields, format="multipart")
    assert response.status_code == 202, response.content
    assert response["Location"] == response.json()["url"]
    job = client.get(response.json()["url"]).json()
    return job, job["report"]


def test_upload_imports_and_returns_the_report(researcher, api_client_for, django_capture_on_commit_callbacks):
    client = api_client_for(researcher)
    upload = jsonl_upload(
        verifybench_line("u1", "u1-a"), verifybench_line("u1", "u1-b", correct=False), verifybench_line("u2", "u2-a")
    )
    job, report = upload_and_import(
        client, django_capture_on_commit_callbacks, file=upload, dataset="uploaded", format="verifybench"
    )
    assert job["status"] == "succeeded" and job["job"]["progress"]["fraction"] == 1.0
    assert report["ok"] is True
    assert (report["questions_created"], report["completions_created"], report["prior_labels_created"]) == (2, 3, 3)
    dataset = Dataset.objects.get(name="uploaded")
    assert dataset.created_by == researcher and job["dataset"] == "uploaded"
    assert Completion.objects.filter(question__dataset=dataset).count() == 3


def test_upload_without_a_format_detects_it(researcher_client, db, django_capture_on_commit_callbacks):
    _, report = upload_and_import(
        researcher_client,
        django_capture_on_commit_callbacks,
        file=jsonl_upload(verifybench_line("u1", "u1-a")),
        dataset="detected",
    )
    assert report["format"] == "verifybench"


def test_rejected_upload_returns_the_errors_and_writes_nothing(
    researcher_client, db, django_capture_on_commit_callbacks
):
    bad = json.dumps({"question_id": "u2", "question": "Compute.", "completion_id": "x"})
    upload = jsonl_upload(verifybench_line("u1", "u1-a"), bad)
    job, report = upload_and_import(
        researcher_client, django_capture_on_commit_callbacks, file=upload, dataset="rejected", format="verifybench"
    )
    assert job["status"] == "failed" and "Rejected" in job["job"]["error"]
    assert report["ok"] is False
    assert report["errors"]
    assert all({"line", "field", "reason"} <= set(error) for error in report["errors"])
    assert {error["line"] for error in report["errors"]} == {2}
    assert not Dataset.objects.filter(name="rejected").exists()
    assert Question.objects.count() == 0


def test_upload_skipping_invalid_lines_imports_the_rest(
    researcher_client, db, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.IMPORT_UPLOAD_DIR = tmp_path
    upload = jsonl_upload(verifybench_line("u1", "u1-a"), "{not json")
    job, report = upload_and_import(
        researcher_client,
        django_capture_on_commit_callbacks,
        file=upload,
        dataset="partial",
        format="verifybench",
        skip_invalid="true",
    )
    assert (report["questions_created"], report["rejected_lines"]) == (1, 1)
    assert "/" not in report["rejects_path"]  # a name, never the server's path
    rejects = researcher_client.get(job["rejects_url"])
    assert rejects.status_code == 200
    assert json.loads(b"".join(rejects.streaming_content).decode().splitlines()[0])["line"] == 2


def test_upload_form_errors(researcher_client, db):
    missing_file = researcher_client.post("/api/datasets/import/", {"dataset": "d"}, format="multipart")
    assert missing_file.status_code == 400
    assert "file" in missing_file.json()
    unknown_format = researcher_client.post(
        "/api/datasets/import/",
        {"file": jsonl_upload(verifybench_line("u1", "u1-a")), "dataset": "d", "format": "xml"},
        format="multipart",
    )
    assert unknown_format.status_code == 400
    assert "format" in unknown_format.json()
    assert not Dataset.objects.filter(name="d").exists()
