import io
import json

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from core import demo, roles, taxonomy
from verifybench import demo as dataset_demo
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def snapshot():
    return {
        model.__name__: sorted(model.objects.values_list("pk", flat=True))
        for model in (Dataset, Question, ReferenceAnswer, Completion, PriorLabel, User)
    } | {"passwords": sorted(User.objects.values_list("password", flat=True))}


def test_load_demo_creates_the_dataset_and_users_and_is_idempotent(db):
    out = io.StringIO()
    logins = demo.load_demo(out)
    first = snapshot()

    assert {(login.username, login.role) for login in logins} == set(demo.DEMO_USERS)
    for username, role in demo.DEMO_USERS:
        user = authenticate(username=username, password=demo.DEMO_PASSWORD)
        assert user is not None, username
        assert roles.has_role(user, role)
    admin = User.objects.get(username="admin1")
    assert admin.is_staff and admin.is_superuser
    assert "researcher1" in out.getvalue() and demo.DEMO_PASSWORD in out.getvalue()

    dataset = Dataset.objects.get(name=dataset_demo.DEMO_DATASET_NAME)
    assert dataset.questions.count() >= 24
    assert set(dataset.questions.values_list("answer_class", flat=True)) == {"A", "B", "C", "D"}
    assert Completion.objects.filter(question__dataset=dataset).count() == 4 * dataset.questions.count()
    assert PriorLabel.objects.filter(completion__question__dataset=dataset).count() == 4 * dataset.questions.count()

    second_out = io.StringIO()
    second_logins = demo.load_demo(second_out)
    assert snapshot() == first
    assert not any(login.created for login in second_logins)
    assert "Nothing changed" in second_out.getvalue()


def test_registered_steps_run_in_order_with_the_shared_context(db, monkeypatch):
    monkeypatch.setattr(demo, "DEMO_STEPS", list(demo.DEMO_STEPS))
    seen = []

    @demo.register_demo_step(order=50)
    def later_feature(context):
        seen.append(("later", context.datasets["demo"].name, context.users["annotator1"].username))

    @demo.register_demo_step(order=15)
    def between_users_and_import(context):
        seen.append(("between", "demo" in context.datasets))

    demo.register_demo_step(later_feature, order=50)  # registering twice keeps one entry
    demo.load_demo(io.StringIO())
    assert seen == [("between", False), ("later", "demo", "annotator1")]


def test_load_demo_command_prints_the_logins(db):
    out = io.StringIO()
    call_command("load_demo", "--force", stdout=out)
    for username, _role in demo.DEMO_USERS:
        assert username in out.getvalue()


def test_load_demo_command_refuses_without_debug_unless_forced(db, settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG"):
        call_command("load_demo", stdout=io.StringIO())
    assert not User.objects.filter(username="admin1").exists()


def test_demo_file_covers_the_answer_types_with_four_models_per_question():
    rows = [json.loads(line) for line in dataset_demo.DEMO_FILE.read_text(encoding="utf-8").splitlines()]
    by_question: dict[str, list[dict]] = {}
    for row in rows:
        by_question.setdefault(row["question_id"], []).append(row)
    assert len(by_question) >= 24
    fine_codes = {taxonomy.parse_answer_type(row["answer_type"]).code for row in rows}
    assert {code[0] for code in fine_codes} == {"A", "B", "C", "D"}
    assert {"A5", "A6", "A7", "A8", "B2", "B3", "B4", "B5", "C1", "C2", "C3"} <= fine_codes
    for question_rows in by_question.values():
        assert len({row["completion_model"] for row in question_rows}) == 4
        assert all("\\boxed{" in row["completion"] for row in question_rows)
        assert {row["gold_correct"] for row in question_rows} == {True, False}
