"""The item browser's queries (every filter, keyset pages) and the bulk actions (exclude, re-open, gold, priority)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import selectors, services, workflow
from annotation.models import Item, ItemEvent
from annotation.selectors import ItemFilter
from grading.models import Verdict, VerifierConfig
from reports import selectors as report_selectors
from verifybench.models import Completion, Question

from .conftest import build_dataset

pytestmark = pytest.mark.django_db


def give(item, users, values):
    """Have each user label exactly this item: it is put first in every queue before each claim."""
    Item.objects.filter(pk=item.pk).update(started=True, priority=10**6)
    for user, value in zip(users, values):
        task = services.next_task(item.project, user)
        assert task is not None and task.item_id == item.pk
        if value == "unsuitable":
            services.submit_label(task, user, unsuitable=True, unsuitable_reason="unreadable")
        else:
            services.submit_label(task, user, value=value)
    Item.objects.filter(pk=item.pk).update(priority=0)
    item.refresh_from_db()
    return item


def ids(items) -> list[int]:
    return [item.pk for item in items]


def browse(project, **params) -> list[int]:
    return ids(selectors.filtered_items(project, ItemFilter.from_params(params)).order_by("id"))


@pytest.fixture
def labeled(make_project, researcher):
    """Six correctness items: one agreed on, one that disagreed and went to a tie-break, one resolved by majority,
    one gold, two untouched."""
    project, people, _ = make_project(annotators=3)
    first, second, third, fourth, gold, untouched = project.items.order_by("id")
    give(first, people[:2], [True, True])
    give(second, people[:2], [True, False])
    give(third, people, [True, False, False])
    services.mark_gold(project, gold, True, actor=researcher)
    return {
        "project": project,
        "people": people,
        "agreed": first,
        "tiebreak": second,
        "majority": third,
        "gold": gold,
        "untouched": untouched,
        "others": [fourth, untouched],
    }


class TestFilters:
    def test_no_filter_is_every_item(self, labeled):
        assert len(browse(labeled["project"])) == 6

    def test_state_and_resolution(self, labeled):
        project = labeled["project"]
        assert browse(project, state="resolved") == sorted([labeled["agreed"].pk, labeled["majority"].pk])
        assert browse(project, state="needs_tiebreak") == [labeled["tiebreak"].pk]
        assert browse(project, resolution="majority") == [labeled["majority"].pk]
        assert browse(project, resolution="agreement") == [labeled["agreed"].pk]

    def test_disagreement_is_labels_that_did_not_agree(self, labeled):
        project = labeled["project"]
        disagreed = sorted([labeled["tiebreak"].pk, labeled["majority"].pk])
        assert browse(project, disagreement="yes") == disagreed
        assert set(browse(project, disagreement="no")) == set(project.items.values_list("pk", flat=True)) - set(
            disagreed
        )

    def test_annotator_is_items_they_labeled(self, labeled):
        project, people = labeled["project"], labeled["people"]
        assert browse(project, annotator=str(people[2].pk)) == [labeled["majority"].pk]
        assert len(browse(project, annotator=str(people[0].pk))) == 3

    def test_gold(self, labeled):
        assert browse(labeled["project"], gold="yes") == [labeled["gold"].pk]
        assert labeled["gold"].pk not in browse(labeled["project"], gold="no")

    def test_model_goes_through_the_subject_plugin(self, labeled):
        project = labeled["project"]
        expected = sorted(
            item.pk
            for item in project.items.all()
            if Completion.objects.get(pk=item.subject_id).model_name == "secret-model-1"
        )
        assert browse(project, model="secret-model-1") == expected and len(expected) == 3
        assert browse(project, model="no-such-model") == []

    def test_answer_type(self, make_project):
        dataset = build_dataset(questions=2)
        Question.objects.filter(dataset=dataset, external_id="q1").update(answer_type="B3")
        project, _, _ = make_project(annotators=0, dataset=dataset)
        assert len(browse(project, answer_type="B3")) == 2 and len(browse(project, answer_type="A1")) == 2

    def test_text_search_in_the_question_and_the_completion(self, make_project):
        dataset = build_dataset(questions=3)
        question = Question.objects.get(dataset=dataset, external_id="q2")
        question.text = "Find the area of the triangle."
        question.save()
        completion = (
            Completion.objects.filter(question__dataset=dataset, external_id="c0").exclude(question=question).first()
        )
        completion.text = "Apply the quadratic formula, then box it."
        completion.save()
        project, _, _ = make_project(annotators=0, dataset=dataset)
        by_subject = {item.subject_id: item.pk for item in project.items.all()}
        in_question = sorted(by_subject[pk] for pk in question.completions.values_list("pk", flat=True))
        assert browse(project, q="triangle") == in_question
        assert browse(project, q="quadratic formula") == [by_subject[completion.pk]]
        assert browse(project, q="nowhere-to-be-found") == []

    def test_verdicts_go_through_grading(self, labeled):
        project = labeled["project"]
        rules, judge = (
            VerifierConfig.objects.create(name=name, kind=kind)
            for name, kind in (("rules", "rule"), ("rules-strict", "rule"))
        )
        items = list(project.items.order_by("id"))
        Verdict.objects.create(completion_id=items[0].subject_id, verifier=rules, status="correct")
        Verdict.objects.create(completion_id=items[1].subject_id, verifier=rules, status="incorrect")
        Verdict.objects.create(completion_id=items[2].subject_id, verifier=judge, status="incorrect")
        assert browse(project, verifier=str(rules.pk), verdict="incorrect") == [items[1].pk]
        assert browse(project, verdict="incorrect") == [items[1].pk, items[2].pk]
        assert browse(project, verifier=str(rules.pk)) == [items[0].pk, items[1].pk]
        with pytest.raises(selectors.InvalidFilter, match="verdict"):
            browse(project, verdict="maybe")

    def test_filters_combine(self, labeled):
        project = labeled["project"]
        assert browse(project, state="resolved", disagreement="yes") == [labeled["majority"].pk]

    def test_a_criterion_the_kind_does_not_answer_is_refused(self, make_project):
        project, _, _ = make_project(annotators=0, kind="answer_type")
        with pytest.raises(selectors.InvalidFilter, match="cannot be filtered by model"):
            browse(project, model="secret-model-0")
        assert len(browse(project, q="Compute")) == 3

    @pytest.mark.parametrize(
        "params",
        [{"state": "done"}, {"resolution": "vote"}, {"gold": "perhaps"}, {"annotator": "alan"}, {"answer_type": "Z9"}],
    )
    def test_bad_values_are_refused(self, params):
        with pytest.raises(selectors.InvalidFilter):
            ItemFilter.from_params(params)

    def test_a_filter_gives_its_parameters_back(self):
        params = {"state": "resolved", "disagreement": "yes", "model": "m", "q": "triangle", "gold": "no"}
        assert ItemFilter.from_params(params).as_params() == params


def walk_pages(project, sort, page_size=2, item_filter=None):
    pages, key = [], ""
    while True:
        page = selectors.browse_items(project, item_filter or ItemFilter(), sort=sort, after=key, page_size=page_size)
        pages.append(ids(page.items))
        if page.next_key is None:
            return pages
        key = page.next_key


class TestKeysetPages:
    @pytest.mark.parametrize("sort", list(selectors.SORTS))
    def test_pages_cover_every_item_once_in_order(self, make_project, sort):
        project, _, _ = make_project(annotators=0)
        for index, item in enumerate(project.items.order_by("id")):
            Item.objects.filter(pk=item.pk).update(priority=index % 3, label_count=0)
        pages = walk_pages(project, sort)
        flat = [pk for page in pages for pk in page]
        field, descending = selectors.SORTS[sort]
        expected = sorted(project.items.all(), key=lambda item: (getattr(item, field), item.pk), reverse=descending)
        assert flat == ids(expected)
        assert [len(page) for page in pages] == [2, 2, 2]

    def test_the_previous_page_comes_back(self, make_project):
        project, _, _ = make_project(annotators=0)
        first = selectors.browse_items(project, ItemFilter(), sort="-priority", page_size=2)
        second = selectors.browse_items(project, ItemFilter(), sort="-priority", after=first.next_key, page_size=2)
        assert first.previous_key is None and second.previous_key is not None
        back = selectors.browse_items(project, ItemFilter(), sort="-priority", before=second.previous_key, page_size=2)
        assert ids(back.items) == ids(first.items) and back.previous_key is None

    def test_pages_after_a_key_are_stable_under_inserts(self, make_project):
        dataset = build_dataset(questions=3)
        project, _, _ = make_project(annotators=0, dataset=dataset)
        for sort in ("id", "-priority"):
            seen = ids(selectors.browse_items(project, ItemFilter(), sort=sort, page_size=2).items)
            key = selectors.browse_items(project, ItemFilter(), sort=sort, page_size=2).next_key
            # new items arrive at the top of both orders (the newest id, the highest priority) while someone reads
            question = Question.objects.create(
                dataset=dataset, external_id=f"new-{sort}", text="New.", content_hash=f"new-{sort}"
            )
            extra = Completion.objects.create(
                question=question, external_id="c", model_name="m", text="x", content_hash=f"new-{sort}"
            )
            services.add_items(project, subject_ids=[extra.pk], priority=50)
            rest = []
            while key:
                page = selectors.browse_items(project, ItemFilter(), sort=sort, after=key, page_size=2)
                rest.extend(ids(page.items))
                key = page.next_key
            before_insert = set(project.items.exclude(subject_id=extra.pk).values_list("pk", flat=True))
            new_item = project.items.get(subject_id=extra.pk).pk
            assert not set(seen) & set(rest), "no item shown twice"
            if sort == "id":
                assert set(seen) | set(rest) == before_insert | {new_item}
            else:
                assert set(seen) | set(rest) == before_insert - {new_item}
                assert new_item not in rest

    def test_a_page_costs_the_same_whatever_the_project_size(self, make_project):
        small, _, _ = make_project(annotators=0, dataset=build_dataset(questions=2, completions_per_question=2))
        large, _, _ = make_project(annotators=0, dataset=build_dataset(questions=30, completions_per_question=4))
        counts = []
        for project in (small, large):
            item_filter = ItemFilter.from_params({"q": "Compute", "model": "secret-model-1", "disagreement": "no"})
            with CaptureQueriesContext(connection) as queries:
                page = selectors.browse_items(project, item_filter, sort="-priority", page_size=50)
                selectors.browse_rows(page.items)
            counts.append(len(queries))
        assert counts[0] == counts[1] <= 3

    def test_bad_keys_and_orders_are_refused(self, make_project):
        project, _, _ = make_project(annotators=0)
        for kwargs in ({"sort": "random_key"}, {"after": "x~y"}, {"after": "1~2", "before": "1~2"}):
            with pytest.raises(selectors.InvalidFilter):
                selectors.browse_items(project, ItemFilter(), **kwargs)


def kinds(item) -> list[str]:
    return list(ItemEvent.objects.filter(item=item).order_by("id").values_list("kind", flat=True))


class TestBulkActions:
    def test_exclude_takes_items_out_of_the_queue_and_the_export(self, labeled, researcher):
        project, people = labeled["project"], labeled["people"]
        items = Item.objects.filter(pk__in=[labeled["agreed"].pk, labeled["tiebreak"].pk, labeled["gold"].pk])
        result = services.bulk_apply(
            project, items, services.EXCLUDE, actor=researcher, rationale="The question has a typo."
        )
        assert (result.applied, result.skipped) == (2, {"gold items are not in the workflow": 1})
        agreed = Item.objects.get(pk=labeled["agreed"].pk)
        assert (agreed.state, agreed.excluded) == (workflow.EXCLUDED, True)
        event = ItemEvent.objects.get(item=agreed, kind=ItemEvent.Kind.EXCLUDED)
        assert (event.actor, event.rationale, event.from_state, event.value["previous"]["final_value"]) == (
            researcher,
            "The question has a typo.",
            workflow.RESOLVED,
            True,
        )
        exported = [row["item_id"] for row in report_selectors.final_correctness_labels(project)]
        assert agreed.pk not in exported and labeled["majority"].pk in exported
        # nobody is given the excluded tie-break item any more
        task = services.next_task(project, people[2])
        assert task is None or task.item_id != labeled["tiebreak"].pk
        again = services.bulk_apply(project, items, services.EXCLUDE, actor=researcher, rationale="again")
        assert again.applied == 0 and again.skipped["already excluded"] == 2

    def test_exclude_and_reopen_need_a_rationale(self, labeled, researcher):
        items = Item.objects.filter(pk=labeled["agreed"].pk)
        for action in (services.EXCLUDE, services.REOPEN):
            with pytest.raises(services.InvalidSubmission, match="rationale"):
                services.bulk_apply(labeled["project"], items, action, actor=researcher, rationale="  ")

    def test_reopen_asks_one_more_label_through_the_state_machine(self, labeled, researcher, make_user):
        project, people = labeled["project"], labeled["people"]
        agreed = labeled["agreed"]
        result = services.bulk_apply(
            project,
            Item.objects.filter(pk__in=[agreed.pk, labeled["tiebreak"].pk]),
            services.REOPEN,
            actor=researcher,
            rationale="Model b is often wrong here.",
        )
        assert (result.applied, result.skipped) == (1, {"only resolved items can be re-opened": 1})
        agreed.refresh_from_db()
        assert (agreed.state, agreed.required_labels, agreed.final_value, agreed.resolution) == (
            workflow.IN_PROGRESS,
            3,
            None,
            "",
        )
        event = ItemEvent.objects.get(item=agreed, kind=ItemEvent.Kind.REOPENED)
        assert event.value["previous"] == {"final_value": True, "resolution": "agreement", "excluded": False}
        assert event.rationale == "Model b is often wrong here."
        # the third annotator is given the re-opened item first (it is started) and their label settles it again
        task = services.next_task(project, people[2])
        assert task.item_id == agreed.pk
        services.submit_label(task, people[2], value=False)
        agreed.refresh_from_db()
        assert (agreed.state, agreed.resolution, agreed.final_value, agreed.label_count) == (
            workflow.RESOLVED,
            workflow.BY_MAJORITY,
            True,
            3,
        )
        assert kinds(agreed)[-3:] == ["reopened", "labeled", "resolved"]

    def test_mark_gold_only_unlabeled_items(self, labeled, researcher):
        project = labeled["project"]
        items = Item.objects.filter(pk__in=[labeled["agreed"].pk, *ids(labeled["others"])])
        result = services.bulk_apply(project, items, services.MARK_GOLD, actor=researcher, value="incorrect")
        assert (result.applied, result.skipped) == (2, {"has labels": 1})
        for item in labeled["others"]:
            item.refresh_from_db()
            assert (item.is_gold, item.gold_value) == (True, False)
            assert kinds(item) == ["gold_set"]
        with pytest.raises(services.InvalidSubmission, match="known answer"):
            services.bulk_apply(project, items, services.MARK_GOLD, actor=researcher, value="perhaps")

    def test_priority_up_and_down(self, labeled, researcher):
        project = labeled["project"]
        items = Item.objects.filter(pk__in=ids(labeled["others"]))
        services.bulk_apply(project, items, services.PRIORITY, actor=researcher, change=5)
        services.bulk_apply(project, items, services.PRIORITY, actor=researcher, change=-2, rationale="less")
        for item in labeled["others"]:
            item.refresh_from_db()
            assert item.priority == 3
            history = [event for event in selectors.history(item) if event["event"] == "priority_changed"]
            assert [event["value"] for event in history] == [{"from": 0, "to": 5}, {"from": 5, "to": 3}]
            assert history[-1]["actor"] == researcher.username and history[-1]["rationale"] == "less"
        with pytest.raises(services.InvalidSubmission, match="whole number"):
            services.bulk_apply(project, items, services.PRIORITY, actor=researcher, change=0)

    def test_only_researchers_and_admins(self, labeled, adjudicator, admin_role_user):
        project = labeled["project"]
        items = Item.objects.filter(pk__in=ids(labeled["others"]))
        for user in (labeled["people"][0], adjudicator):
            with pytest.raises(services.NotAllowed):
                services.bulk_apply(project, items, services.PRIORITY, actor=user, change=1)
        assert services.bulk_apply(project, items, services.PRIORITY, actor=admin_role_user, change=1).applied == 2

    def test_all_matching_a_filter_in_chunks_and_never_beyond_the_limit(self, make_project, researcher, monkeypatch):
        project, _, _ = make_project(annotators=0, dataset=build_dataset(questions=4, completions_per_question=2))
        monkeypatch.setattr(services, "BULK_CHUNK", 3)
        monkeypatch.setattr(services.bulk, "BULK_CHUNK", 3)
        matching = selectors.filtered_items(project, ItemFilter.from_params({"model": "secret-model-0"}))
        result = services.bulk_apply(project, matching, services.PRIORITY, actor=researcher, change=2)
        assert result.applied == 4
        assert sorted(project.items.values_list("priority", flat=True)) == [0, 0, 0, 0, 2, 2, 2, 2]
        monkeypatch.setattr(services, "BULK_LIMIT", 5)
        monkeypatch.setattr(services.bulk, "BULK_LIMIT", 5)
        with pytest.raises(services.SelectionTooLarge, match="narrow the filter"):
            services.bulk_apply(project, project.items.all(), services.PRIORITY, actor=researcher, change=1)
        assert ItemEvent.objects.filter(item__project=project).count() == 4

    def test_items_of_another_project_are_never_touched(self, make_project, researcher):
        one, _, _ = make_project(annotators=0)
        other, _, _ = make_project(annotators=0, dataset=build_dataset())
        with pytest.raises(services.InvalidSubmission, match="no items"):
            services.bulk_apply(one, other.items.all(), services.PRIORITY, actor=researcher, change=1)
