"""The annotation protocol through the services: transitions on real items, assignment, leases, idempotent
submission, decisions, append-only history, project settings and the create_annotation_project command."""

from collections import Counter
from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation import claim_queries, services, workflow
from annotation.models import AnnotationProject, Item, ItemEvent, Label, Task
from verifybench.models import Completion, Question

from .conftest import build_dataset, label_item, only_item_project


def first_claimed_item(project, user):
    """The item the next claim will get: nothing is started or prioritised yet, so the lowest random key."""
    return project.items.order_by("random_key").first()


def events(item):
    return list(ItemEvent.objects.filter(item=item).order_by("id").values_list("kind", flat=True))


class TestProjectSettings:
    def test_defaults(self, make_project):
        project, _, _ = make_project(annotators=0)
        assert (project.labels_per_item, project.tiebreak_annotators, project.agreement_threshold) == (2, 1, 0.0)
        assert project.show_model_names is False
        assert project.verdict_visibility == AnnotationProject.VerdictVisibility.ADJUDICATORS
        assert project.lease_minutes == 30

    def test_correctness_project_has_an_item_per_completion(self, make_project, corpus):
        project, _, _ = make_project(annotators=0)
        assert project.items.count() == 6
        assert set(project.items.values_list("required_labels", flat=True)) == {2}
        assert set(project.items.values_list("subject_id", flat=True)) == set(
            Completion.objects.filter(question__dataset=corpus).values_list("pk", flat=True)
        )

    def test_answer_type_project_has_an_item_per_question(self, make_project):
        project, _, _ = make_project(annotators=0, kind="answer_type")
        assert project.items.count() == 3
        assert set(project.items.values_list("subject_id", flat=True)) == set(
            Question.objects.filter(dataset=project.dataset).values_list("pk", flat=True)
        )

    def test_proof_grade_projects_come_from_the_grading_app(self, corpus):
        with pytest.raises(services.InvalidSubmission, match="grading app"):
            services.create_project(dataset=corpus, kind="proof_grade")

    def test_add_items_skips_existing(self, make_project, corpus):
        project, _, _ = make_project(annotators=0)
        completion_ids = list(project.items.values_list("subject_id", flat=True))
        assert services.add_items(project, subject_ids=completion_ids) == 0


class TestTransitionsThroughLabels:
    def test_pending_to_in_progress_on_claim(self, make_project):
        project, (alice, _), _ = make_project()
        assert set(project.items.values_list("state", flat=True)) == {workflow.PENDING}
        task = services.next_task(project, alice)
        assert Item.objects.get(pk=task.item_id).state == workflow.IN_PROGRESS

    def test_agreement(self, make_project):
        project, people, _ = make_project()
        item = first_claimed_item(project, people[0])
        label_item(item, people, [True, True])
        assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_AGREEMENT, True)
        assert events(item) == ["labeled", "labeled", "resolved"]

    def test_tiebreak_then_majority(self, make_project):
        project, people, _ = make_project(annotators=3)
        item = first_claimed_item(project, people[0])
        label_item(item, people[:2], [True, False])
        assert (item.state, item.required_labels) == (workflow.NEEDS_TIEBREAK, 3)
        results = label_item(item, people[2:], [False])
        assert results[0].label.is_tiebreak
        assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_MAJORITY, False)
        assert events(item) == ["labeled", "labeled", "tiebreak_requested", "labeled", "resolved"]

    def test_answer_types_without_majority_need_adjudication(self, make_project):
        project, people, _ = make_project(annotators=3, kind="answer_type")
        item = first_claimed_item(project, people[0])
        label_item(item, people, ["A1", "B3", "C1"])
        assert item.state == workflow.NEEDS_ADJUDICATION
        assert events(item)[-1] == "adjudication_requested"

    def test_unsuitable_majority_excludes(self, make_project):
        project, people, _ = make_project(annotators=3)
        item = first_claimed_item(project, people[0])
        label_item(item, people, ["unsuitable", True, "unsuitable"])
        assert (item.state, item.excluded, item.final_value) == (workflow.RESOLVED, True, None)
        assert Label.objects.get(item=item, annotator=people[0]).unsuitable_reason == "unreadable"
        from annotation import selectors

        table = {row["annotator"]: row for row in selectors.annotator_table(project)}
        assert table[people[0].username]["agreement_with_final"] == 1.0  # unsuitable agrees with "unsuitable"
        assert table[people[1].username]["agreement_with_final"] == 0.0

    def test_unsuitable_needs_a_reason(self, make_project):
        project, (alice, _), _ = make_project()
        task = services.next_task(project, alice)
        with pytest.raises(services.InvalidSubmission, match="say why"):
            services.submit_label(task, alice, unsuitable=True)

    def test_invalid_value_is_refused_and_nothing_is_stored(self, make_project):
        project, (alice, _), _ = make_project()
        task = services.next_task(project, alice)
        with pytest.raises(services.InvalidSubmission):
            services.submit_label(task, alice, value="perhaps")
        assert not Label.objects.exists()

    def test_no_tiebreak_annotators_goes_to_adjudication(self, make_project):
        project, people, _ = make_project(tiebreak_annotators=0)
        item = first_claimed_item(project, people[0])
        label_item(item, people, [True, False])
        assert (item.state, item.required_labels) == (workflow.NEEDS_ADJUDICATION, 2)

    def test_one_label_per_item(self, make_project):
        project, (alice, bob), _ = make_project(labels_per_item=1)
        item = first_claimed_item(project, alice)
        label_item(item, [bob], [True])
        assert (item.state, item.resolution) == (workflow.RESOLVED, workflow.BY_AGREEMENT)


class TestDecisions:
    @pytest.fixture
    def conflict(self, make_project, admin_role_user):
        project, people, judges = make_project(annotators=3, adjudicators=1, kind="answer_type")
        item = first_claimed_item(project, people[0])
        label_item(item, people, ["A1", "B3", "C1"])
        return item, judges[0]

    def test_adjudication_needs_a_rationale(self, conflict):
        item, judge = conflict
        with pytest.raises(services.InvalidSubmission, match="rationale"):
            services.adjudicate(item, judge, value="A1", rationale="  ")

    def test_adjudication_resolves(self, conflict):
        item, judge = conflict
        item = services.adjudicate(item, judge, value="B3", rationale="The answer is an interval.")
        assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_ADJUDICATION, "B3")
        event = ItemEvent.objects.filter(item=item).last()
        assert (event.kind, event.actor, event.rationale) == ("adjudicated", judge, "The answer is an interval.")

    def test_adjudication_can_exclude(self, conflict):
        item, judge = conflict
        item = services.adjudicate(item, judge, unsuitable=True, rationale="The question is ambiguous.")
        assert item.excluded and item.final_value is None

    def test_adjudicating_an_unresolved_open_item_is_refused(self, make_project, adjudicator):
        project, (alice, _), _ = make_project()
        item = first_claimed_item(project, alice)
        with pytest.raises(services.WorkflowError, match="only items that need adjudication") as caught:
            services.adjudicate(item, adjudicator, value=True, rationale="because")
        assert caught.value.status_code == 409

    def test_adjudicating_a_resolved_item_is_refused(self, conflict):
        item, judge = conflict
        services.adjudicate(item, judge, value="B3", rationale="first")
        with pytest.raises(services.WorkflowError, match="only items that need adjudication"):
            services.adjudicate(item, judge, value="A1", rationale="second")

    def test_only_adjudicators_adjudicate(self, conflict, make_user):
        item, _ = conflict
        with pytest.raises(services.NotAllowed):
            services.adjudicate(item, make_user("annotator"), value="A1", rationale="r")

    def test_override_resolved_item(self, conflict, admin_role_user):
        item, judge = conflict
        services.adjudicate(item, judge, value="B3", rationale="first")
        item = services.override(item, admin_role_user, value="A1", rationale="The key was wrong.")
        assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_OVERRIDE, "A1")
        assert events(item)[-2:] == ["adjudicated", "overridden"]

    def test_overriding_a_non_resolved_item_is_refused(self, conflict, admin_role_user):
        item, _ = conflict
        with pytest.raises(services.WorkflowError, match="only resolved items can be overridden"):
            services.override(item, admin_role_user, value="A1", rationale="r")

    def test_only_admins_override(self, conflict, researcher):
        item, judge = conflict
        services.adjudicate(item, judge, value="B3", rationale="first")
        with pytest.raises(services.NotAllowed):
            services.override(item, researcher, value="A1", rationale="r")
        with pytest.raises(services.NotAllowed):
            services.override(item, judge, value="A1", rationale="r")


class TestAssignment:
    def test_never_the_same_item_twice_and_never_more_than_needed(self, make_project):
        project, people, _ = make_project(annotators=4)
        seen: dict[int, list[int]] = {}
        for user in people:
            while (task := services.next_task(project, user)) is not None:
                seen.setdefault(task.item_id, []).append(user.pk)
                services.submit_label(task, user, value=True)
        assert all(len(users) == len(set(users)) == 2 for users in seen.values())
        assert len(seen) == 6
        assert set(project.items.values_list("state", flat=True)) == {workflow.RESOLVED}

    def test_open_lease_is_returned_again(self, make_project):
        project, (alice, _), _ = make_project()
        first = services.next_task(project, alice)
        assert services.next_task(project, alice).pk == first.pk

    def test_items_with_a_label_come_first(self, make_project):
        project, (alice, bob), _ = make_project()
        task = services.next_task(project, alice)
        services.submit_label(task, alice, value=True)
        assert services.next_task(project, bob).item_id == task.item_id

    def test_a_claim_looks_past_started_items_the_annotator_already_did(self, make_project, monkeypatch):
        """Only the first STARTED_LOOKAHEAD started items are looked at before the unstarted ones; the whole queue
        is still walked when nothing else is left, so no item that needs the annotator is ever missed."""
        monkeypatch.setattr(claim_queries, "STARTED_LOOKAHEAD", 1)
        project, (alice, bob, carol), _ = make_project(annotators=3)
        mine = []
        for _ in range(2):  # two items alice labeled, each waiting for a second label
            task = services.next_task(project, alice)
            services.submit_label(task, alice, value=True)
            mine.append(task.item_id)
        served = []
        while (task := services.next_task(project, alice)) is not None:
            served.append(task.item_id)
            services.submit_label(task, alice, value=True)
        assert len(served) == 4 and not set(served) & set(mine)
        # every item now has alice's label: bob is given all six in turn, each the head of the started items
        given = []
        while (task := services.next_task(project, bob)) is not None:
            given.append(task.item_id)
            services.submit_label(task, bob, value=True)
        assert sorted(given) == sorted(mine + served)
        assert services.next_task(project, carol) is None

    def test_then_priority(self, make_project):
        project, (alice, _), _ = make_project()
        urgent = project.items.order_by("-random_key").first()
        Item.objects.filter(pk=urgent.pk).update(priority=10)
        assert services.next_task(project, alice).item_id == urgent.pk

    def test_then_random_order(self, make_project):
        project, (alice, _), _ = make_project()
        lowest = project.items.order_by("random_key").first()
        assert services.next_task(project, alice).item_id == lowest.pk

    def test_leases_plus_labels_never_exceed_the_need(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3)
        first, second = services.next_task(project, people[0]), services.next_task(project, people[1])
        assert first.item_id == second.item_id
        assert services.next_task(project, people[2]) is None

    def test_tiebreak_goes_to_someone_who_has_not_labeled(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3)
        item = project.items.get()
        label_item(item, people[:2], [True, False])
        assert services.next_task(project, people[0]) is None
        assert services.next_task(project, people[1]) is None
        tiebreak = services.next_task(project, people[2])
        assert tiebreak.item_id == item.pk and tiebreak.is_tiebreak

    def test_expired_lease_returns_the_item_to_the_pool(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3, lease_minutes=0)
        first, second = services.next_task(project, people[0]), services.next_task(project, people[1])
        assert services.next_task(project, people[2]).item_id == first.item_id
        assert {first.item_id, second.item_id} == {project.items.get().pk}

    def test_expiry_by_moving_expires_at(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3)
        first = services.next_task(project, people[0])
        services.next_task(project, people[1])
        assert services.next_task(project, people[2]) is None
        Task.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        assert services.next_task(project, people[2]) is not None

    def test_skip_releases_at_once_and_is_not_offered_again(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3)
        first = services.next_task(project, people[0])
        services.next_task(project, people[1])
        skipped = services.skip_task(first, people[0])
        assert skipped.status == Task.Status.SKIPPED
        assert services.next_task(project, people[2]).item_id == first.item_id
        assert services.next_task(project, people[0]) is None

    def test_skip_of_a_submitted_task_is_refused(self, make_project):
        project, (alice, _), _ = make_project()
        task = services.next_task(project, alice)
        services.submit_label(task, alice, value=True)
        with pytest.raises(services.WorkflowError, match="already submitted"):
            services.skip_task(task, alice)

    def test_someone_elses_task_cannot_be_skipped_or_submitted(self, make_project):
        project, (alice, bob), _ = make_project()
        task = services.next_task(project, alice)
        with pytest.raises(services.NotAllowed):
            services.skip_task(task, bob)
        with pytest.raises(services.NotAllowed):
            services.submit_label(task, bob, value=True)

    def test_non_members_and_closed_projects(self, make_project, make_user):
        project, (alice, _), _ = make_project()
        with pytest.raises(services.NotAllowed):
            services.next_task(project, make_user("annotator"))
        project.is_active = False
        project.save()
        with pytest.raises(services.WorkflowError, match="closed"):
            services.next_task(project, alice)

    def test_a_lease_on_an_item_that_stopped_taking_labels_is_not_handed_out_again(self, make_project):
        project, people, _ = make_project(annotators=3)
        item = first_claimed_item(project, people[0])
        label_item(item, people[:2], [True, False])
        tiebreak = services.next_task(project, people[2])
        assert tiebreak.item_id == item.pk
        # the first annotator changes their mind: the two now agree and the tie-break is no longer needed
        services.submit_label(Task.objects.get(item=item, annotator=people[0]), people[0], value=False)
        item.refresh_from_db()
        assert (item.state, item.resolution, item.required_labels) == (workflow.RESOLVED, workflow.BY_AGREEMENT, 2)
        with pytest.raises(services.WorkflowError, match="no longer takes labels"):
            services.submit_label(tiebreak, people[2], value=True)
        following = services.next_task(project, people[2])
        assert following is not None and following.item_id != item.pk


class TestSubmission:
    def test_retried_submit_keeps_one_label(self, make_project):
        project, (alice, _), _ = make_project()
        task = services.next_task(project, alice)
        assert services.submit_label(task, alice, value=True, note="fine").created
        again = services.submit_label(task, alice, value=True, note="fine")
        assert not again.created
        assert Label.objects.filter(task=task).count() == 1
        assert Item.objects.get(pk=task.item_id).label_count == 1

    def test_change_before_resolution_is_recorded(self, make_project):
        project, (alice, _), _ = make_project()
        task = services.next_task(project, alice)
        services.submit_label(task, alice, value=True)
        services.submit_label(task, alice, value=False, note="misread the box")
        label = Label.objects.get(task=task)
        assert (label.value, label.note) == (False, "misread the box")
        assert events(label.item) == ["labeled", "label_changed"]
        assert ItemEvent.objects.filter(item=label.item, kind="labeled").get().value["value"] is True

    def test_change_after_resolution_is_refused(self, make_project):
        project, people, _ = make_project()
        item = first_claimed_item(project, people[0])
        label_item(item, people, [True, True])
        task = Task.objects.get(item=item, annotator=people[0])
        with pytest.raises(services.WorkflowError, match="already resolved") as caught:
            services.submit_label(task, people[0], value=False)
        assert caught.value.status_code == 409
        assert services.submit_label(task, people[0], value=True).created is False

    def test_change_while_waiting_for_adjudication_is_refused(self, make_project):
        project, people, _ = make_project(annotators=3, kind="answer_type")
        item = first_claimed_item(project, people[0])
        label_item(item, people, ["A1", "B3", "C1"])
        task = Task.objects.get(item=item, annotator=people[0])
        with pytest.raises(services.WorkflowError, match="waiting for adjudication"):
            services.submit_label(task, people[0], value="B3")
        item.refresh_from_db()
        assert item.state == workflow.NEEDS_ADJUDICATION

    def test_late_submit_accepted_while_the_slot_is_free(self, make_project):
        project, (alice, _), _ = make_project(lease_minutes=0)
        task = services.next_task(project, alice)
        assert task.expires_at <= timezone.now()
        assert services.submit_label(task, alice, value=True).created

    def test_late_submit_refused_when_the_slot_was_given_away(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3)
        late = services.next_task(project, people[0])
        Task.objects.filter(pk=late.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
        for user in people[1:]:
            services.submit_label(services.next_task(project, user), user, value=True)
        with pytest.raises(services.WorkflowError, match="no longer takes labels .it is resolved.") as caught:
            services.submit_label(late, people[0], value=True)
        assert caught.value.status_code == 409
        item = project.items.get()
        assert item.label_count == 2 and not Label.objects.filter(annotator=people[0]).exists()
        assert events(item)[-1] == "resolved"

    def test_late_submit_refused_while_another_holds_the_last_slot(self, make_project):
        project, people, _ = only_item_project(make_project, annotators=3)
        late = services.next_task(project, people[0])
        Task.objects.filter(pk=late.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
        services.submit_label(services.next_task(project, people[1]), people[1], value=True)
        holder = services.next_task(project, people[2])
        assert holder is not None
        with pytest.raises(services.WorkflowError, match="given to someone else"):
            services.submit_label(late, people[0], value=True)
        item = project.items.get()
        assert ItemEvent.objects.filter(item=item, kind="late_submit_refused").count() == 1


class TestAppendOnly:
    def test_labels_and_events_cannot_be_removed_or_rewritten(self, make_project):
        project, people, _ = make_project()
        item = first_claimed_item(project, people[0])
        label_item(item, people, [True, True])
        label, event = Label.objects.first(), ItemEvent.objects.first()
        with pytest.raises(ValidationError):
            label.delete()
        with pytest.raises(ValidationError):
            Label.objects.filter(item=item).delete()
        event.rationale = "rewritten"
        with pytest.raises(ValidationError):
            event.save()
        with pytest.raises(ValidationError):
            event.delete()
        with pytest.raises(ValidationError):
            ItemEvent.objects.filter(item=item).delete()
        with pytest.raises(ValidationError):
            ItemEvent.objects.filter(item=item).update(rationale="rewritten")
        assert Label.objects.filter(item=item).count() == 2
        assert ItemEvent.objects.filter(item=item, rationale="rewritten").count() == 0


class TestGold:
    def test_mark_gold_refuses_labeled_items(self, make_project, researcher):
        project, people, _ = make_project()
        item = first_claimed_item(project, people[0])
        label_item(item, people[:1], [True])
        with pytest.raises(services.WorkflowError, match="already has workflow labels"):
            services.mark_gold(project, item, True, actor=researcher)

    def test_gold_items_are_served_at_the_gold_rate_and_left_out_of_state_counts(self, make_project, researcher):
        from annotation import selectors

        project, (alice, bob), _ = make_project(gold_rate=1.0)
        gold = project.items.order_by("id").first()
        services.mark_gold(project, gold, False, actor=researcher)
        task = services.next_task(project, alice)
        assert task.item_id == gold.pk
        services.submit_label(task, alice, value=False)
        gold_task = services.next_task(project, bob)
        assert gold_task.item_id == gold.pk
        services.submit_label(gold_task, bob, value=True)
        gold.refresh_from_db()
        assert gold.state == workflow.PENDING and gold.label_count == 0
        counts = selectors.state_counts(project)
        assert (counts["items"], counts["gold_items"], counts["labels"]) == (5, 1, 0)
        table = {row["annotator"]: row for row in selectors.annotator_table(project)}
        assert table[alice.username]["gold_accuracy"] == 1.0
        assert table[bob.username]["gold_accuracy"] == 0.0
        assert table[alice.username]["labels"] == 0


class TestCreateProjectCommand:
    def test_prints_the_new_project_id(self, corpus, make_user):
        annotator, judge = make_user("annotator"), make_user("adjudicator")
        out = StringIO()
        call_command(
            "create_annotation_project",
            "--dataset",
            corpus.name,
            "--kind",
            "correctness",
            "--labels-per-item",
            "3",
            "--annotators",
            annotator.username,
            "--adjudicators",
            judge.username,
            stdout=out,
        )
        project = AnnotationProject.objects.get(pk=int(out.getvalue().strip()))
        assert (project.labels_per_item, project.items.count()) == (3, 6)
        assert set(project.memberships.values_list("user__username", "role")) == {
            (annotator.username, "annotator"),
            (judge.username, "adjudicator"),
        }

    def test_unknown_dataset(self, db):
        with pytest.raises(CommandError, match="no dataset named 'nope'"):
            call_command("create_annotation_project", "--dataset", "nope", "--kind", "correctness")

    def test_unknown_user_creates_nothing(self, corpus):
        with pytest.raises(CommandError, match="no user named 'ghost'"):
            call_command(
                "create_annotation_project", "--dataset", corpus.name, "--kind", "answer_type", "--annotators", "ghost"
            )
        assert not AnnotationProject.objects.exists()

    def test_answer_type_items_are_questions(self, db):
        dataset = build_dataset(questions=4, completions_per_question=1)
        out = StringIO()
        call_command("create_annotation_project", "--dataset", dataset.name, "--kind", "answer_type", stdout=out)
        assert AnnotationProject.objects.get(pk=int(out.getvalue())).items.count() == 4


class TestScoreAgreement:
    def test_scores_use_the_threshold_and_interval_alpha(self, corpus, make_user):
        from annotation import selectors

        project = AnnotationProject.objects.create(
            dataset=corpus, kind="proof_grade", name="scores", agreement_threshold=1.0
        )
        services.add_items(
            project, subject_ids=list(corpus.questions.values_list("completions__pk", flat=True)), seed=3
        )
        people = [make_user("annotator") for _ in range(3)]
        for user in people:
            services.add_member(project, user)
        scores = {0: [6.0, 7.0, 2.0, 5.0, 0.0, 4.0], 1: [6.5, 7.0, 7.0, 5.0, 0.5, 4.0]}
        for n, user in enumerate(people[:2]):
            for position, item in enumerate(project.items.order_by("random_key")):
                task = services.next_task(project, user)
                assert task.item_id == item.pk
                services.submit_label(task, user, value=scores[n][position])
        states = Counter(project.items.values_list("state", flat=True))
        assert states == {workflow.RESOLVED: 5, workflow.NEEDS_TIEBREAK: 1}
        averaged = project.items.order_by("random_key").first()
        assert averaged.final_value == 6.25
        task = services.next_task(project, people[2])
        services.submit_label(task, people[2], value=6.5)
        tiebroken = Item.objects.get(pk=task.item_id)
        assert (tiebroken.state, tiebroken.resolution, tiebroken.final_value) == (
            workflow.RESOLVED,
            workflow.BY_MAJORITY,
            6.5,
        )
        figures = selectors.agreement_figures(project)
        assert figures["alpha_level"] == "interval" and figures["cohens_kappa"] is None
        assert figures["raw_agreement"] == pytest.approx(5 / 6)
        assert 0.5 < figures["krippendorff_alpha"] <= 1.0
