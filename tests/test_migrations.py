"""A database shaped like the one before the floor plan was re-cut (items with one foreign key per subject, export
jobs in the benchmark-data app, runs with done/total) migrates forward with its rows intact, and back again."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [
    ("annotation", "0003_task_index_covers_item"),
    ("grading", "0006_allowed_judge_hosts"),
    ("verifybench", "0004_shared_background_job_fields"),
    ("reports", None),
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state([target for target in targets if target[1]]).apps


def latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_rows_of_the_previous_floor_plan_survive_the_migrations_both_ways():
    old = migrate(BEFORE)
    Dataset, Question = old.get_model("verifybench", "Dataset"), old.get_model("verifybench", "Question")
    Completion, ExportJob = old.get_model("verifybench", "Completion"), old.get_model("verifybench", "ExportJob")
    Project, Item = old.get_model("annotation", "AnnotationProject"), old.get_model("annotation", "Item")
    Competition, Problem = old.get_model("grading", "Competition"), old.get_model("grading", "ProofProblem")
    Submission, Run = old.get_model("grading", "ProofSubmission"), old.get_model("grading", "VerificationRun")
    Verifier = old.get_model("grading", "VerifierConfig")

    dataset = Dataset.objects.create(name="before")
    question = Question.objects.create(
        dataset=dataset, external_id="q1", text="1+1?", answer_type="A1", answer_class="A", content_hash="h"
    )
    completion = Completion.objects.create(
        question=question, external_id="c1", model_name="m", text="2", content_hash="h"
    )
    competition = Competition.objects.create(name="Olympiad", dataset=dataset)
    problem = Problem.objects.create(competition=competition, problem_idx="1", statement="Prove it.")
    proof = Submission.objects.create(problem=problem, model_name="m", text="Proof.", anonymous_id="P-old")
    projects = {
        kind: Project.objects.create(name=kind, dataset=dataset, kind=kind)
        for kind in ("correctness", "answer_type", "proof_grade")
    }
    by_completion = Item.objects.create(
        project=projects["correctness"],
        completion=completion,
        required_labels=2,
        random_key=0.1,
        state="resolved",
        final_value=True,
        resolution="agreement",
    )
    by_question = Item.objects.create(
        project=projects["answer_type"], question=question, required_labels=2, random_key=0.2
    )
    by_proof = Item.objects.create(
        project=projects["proof_grade"], proof_submission=proof, required_labels=2, random_key=0.3
    )
    export = ExportJob.objects.create(
        project=projects["correctness"],
        format="verifybench-hard",
        status="succeeded",
        progress_done=1,
        progress_total=1,
        finished_at=timezone.now(),
    )
    run = Run.objects.create(
        verifier=Verifier.objects.create(name="rules", kind="rule"),
        dataset=dataset,
        status="succeeded",
        total=1,
        done=1,
    )

    new = migrate(latest())
    NewItem, NewExport = new.get_model("annotation", "Item"), new.get_model("reports", "ExportJob")
    NewRun = new.get_model("grading", "VerificationRun")
    items = {item.pk: item for item in NewItem.objects.all()}
    assert (items[by_completion.pk].subject_id, items[by_completion.pk].answer_type) == (completion.pk, "A1")
    assert (items[by_question.pk].subject_id, items[by_question.pk].answer_type) == (question.pk, "A1")
    assert (items[by_proof.pk].subject_id, items[by_proof.pk].answer_type) == (proof.pk, "")
    assert items[by_completion.pk].final_value is True and items[by_completion.pk].resolution == "agreement"
    moved = NewExport.objects.get(pk=export.pk)
    assert (moved.project_id, moved.status, moved.progress_done, moved.log) == (
        projects["correctness"].pk,
        "succeeded",
        1,
        [],
    )
    renamed = NewRun.objects.get(pk=run.pk)
    assert (renamed.progress_total, renamed.progress_done, renamed.redo_from) == (1, 1, None)

    back = migrate(BEFORE)
    OldItem = back.get_model("annotation", "Item")
    assert OldItem.objects.get(pk=by_completion.pk).completion_id == completion.pk
    assert OldItem.objects.get(pk=by_question.pk).question_id == question.pk
    assert OldItem.objects.get(pk=by_proof.pk).proof_submission_id == proof.pk
    assert back.get_model("verifybench", "ExportJob").objects.get(pk=export.pk).format == "verifybench-hard"
    migrate(latest())


@pytest.mark.django_db(transaction=True)
def test_open_account_links_from_before_the_fix_are_bound_or_revoked():
    """Links made before accounts were fingerprinted: one whose account is untouched keeps working, bound to the
    account as it is; one whose account has since got a password or a higher role is revoked."""
    from django.contrib.auth.hashers import make_password

    from verifybench.models import Dataset  # only annotation goes back, so the other apps' models are current

    old = migrate([("annotation", "0012_group_tallies")])
    User, Group = old.get_model("auth", "User"), old.get_model("auth", "Group")
    Project, Invitation = old.get_model("annotation", "AnnotationProject"), old.get_model("annotation", "Invitation")
    dataset = Dataset.objects.create(name="links")
    project = Project.objects.create(name="links", dataset_id=dataset.pk, kind="correctness")
    annotator_group = Group.objects.get_or_create(name="annotator")[0]
    links = {}
    for name, password, extra_group in (
        ("untouched", "!unusable", None),
        ("has-password", make_password("something-long-1"), None),
        ("promoted", "!unusable", "admin"),
    ):
        user = User.objects.create(username=name, password=password)
        user.groups.add(annotator_group)
        if extra_group:
            user.groups.add(Group.objects.get_or_create(name=extra_group)[0])
        links[name] = Invitation.objects.create(
            project=project,
            role="annotator",
            token_hash=name.ljust(64, "0"),
            account=user,
            expires_at=timezone.now() + timezone.timedelta(days=7),
        ).pk
    new = migrate(latest())
    Invitation = new.get_model("annotation", "Invitation")
    after = {name: Invitation.objects.get(pk=pk) for name, pk in links.items()}
    assert after["untouched"].revoked_at is None and len(after["untouched"].account_state) == 64
    assert after["has-password"].revoked_at is not None and after["promoted"].revoked_at is not None
    for name in links:
        User.objects.filter(username=name).delete()
    Project.objects.filter(pk=project.pk).delete()
    dataset.delete()


@pytest.mark.django_db(transaction=True)
def test_a_host_wide_allow_list_entry_becomes_the_endpoints_its_judges_use_with_their_keys():
    old = migrate([("grading", "0010_run_chunks_and_shared_judge_limits")])
    Entry, Config = old.get_model("grading", "AllowedJudgeHost"), old.get_model("grading", "VerifierConfig")
    Template = old.get_model("grading", "PromptTemplate")
    template = Template.objects.create(
        name="migration-template", version=1, contract="final_judgment", user_template="x"
    )
    Entry.objects.create(host="127.0.0.1", allow_private=True)
    Entry.objects.create(host="unused.example.org")
    for name, url, key in (
        ("a", "http://127.0.0.1:8000/v1", "JUDGE_KEY_A"),
        ("b", "http://127.0.0.1:8000/v1", "JUDGE_KEY_B"),
        ("c", "http://127.0.0.1:9000/v1", "JUDGE_KEY_C"),
    ):
        Config.objects.create(
            name=f"migrated-{name}", kind="judge", base_url=url, model="m", api_key_env=key, template=template
        )
    new = migrate(latest())
    Entry = new.get_model("grading", "AllowedJudgeHost")
    entries = {(e.scheme, e.host, e.port): (e.key_envs, e.allow_private) for e in Entry.objects.all()}
    assert entries == {
        ("http", "127.0.0.1", 8000): (["JUDGE_KEY_A", "JUDGE_KEY_B"], True),
        ("http", "127.0.0.1", 9000): (["JUDGE_KEY_C"], True),
        ("https", "unused.example.org", 443): ([], False),
    }
    new.get_model("grading", "VerifierConfig").objects.filter(name__startswith="migrated-").delete()
    Entry.objects.all().delete()
    new.get_model("grading", "PromptTemplate").objects.filter(name="migration-template").delete()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_texts_stored_before_search_documents_wait_for_theirs_and_the_expression_indexes_come_back_on_the_way_down():
    def indexes(table: str) -> set[str]:
        with connection.cursor() as cursor:
            return set(connection.introspection.get_constraints(cursor, table))

    old = migrate([("verifybench", "0010_job_messages_are_sent_from_an_outbox")])
    assert "verifybench_completion_text_search" in indexes("verifybench_completion")
    Dataset, Question = old.get_model("verifybench", "Dataset"), old.get_model("verifybench", "Question")
    Completion = old.get_model("verifybench", "Completion")
    dataset = Dataset.objects.create(name="before search documents")
    question = Question.objects.create(dataset=dataset, external_id="q1", text="A triangle.", content_hash="h")
    Completion.objects.create(question=question, external_id="c1", model_name="m", text="Heron.", content_hash="h")

    new = migrate(latest())
    QuestionSearch, CompletionSearch = (
        new.get_model("verifybench", "QuestionSearch"),
        new.get_model("verifybench", "CompletionSearch"),
    )
    assert list(QuestionSearch.objects.values_list("question_id", "document")) == [(question.pk, None)]
    assert CompletionSearch.objects.filter(document__isnull=True).count() == 1
    assert "verifybench_completion_text_search" not in indexes("verifybench_completion")
    from verifybench.services import index_search_documents

    assert index_search_documents() == 2
    Completion = new.get_model("verifybench", "Completion")
    Completion.objects.create(
        question_id=question.pk, external_id="c2", model_name="m", text="Pick's.", content_hash="h"
    )
    assert CompletionSearch.objects.filter(document__isnull=True).count() == 1  # the trigger keeps working

    migrate([("verifybench", "0010_job_messages_are_sent_from_an_outbox")])
    assert "verifybench_completion_text_search" in indexes("verifybench_completion")
    assert "verifybench_question_text_search" in indexes("verifybench_question")
    current = migrate(latest())
    current.get_model("verifybench", "Dataset").objects.filter(pk=dataset.pk).delete()
