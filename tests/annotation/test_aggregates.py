"""The tallies moved with each change equal the tallies rebuilt from scratch, whatever happened in between: labels,
skips, label changes, tie-breaks, adjudications, overrides, exclusions, re-openings, gold marking and verdicts."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation import aggregates, selectors, services, workflow
from annotation.models import GroupTally, Item, Label, ProjectMember, ProjectTally, Task
from core import roles
from core.metrics import passk
from grading import services as grading_services
from grading.models import VerifierConfig
from reports import evaluation
from verifybench import services as dataset_services
from verifybench.models import Completion

from .conftest import build_dataset

pytestmark = pytest.mark.postgres

_names = itertools.count(1)


def person(role: str) -> User:
    user = User.objects.create_user(username=f"tally-{role}-{next(_names)}")
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


VALUES = st.sampled_from([True, False, "unsuitable"])
# (what happens, out of 100: mostly labels, so items get resolved and decisions have something to act on)
KINDS = [
    (55, "label"),
    (61, "verdict"),
    (68, "skip"),
    (76, "change"),
    (82, "adjudicate"),
    (89, "override"),
    (93, "exclude"),
    (97, "reopen"),
    (100, "gold"),
]
STEP = st.tuples(st.integers(0, 99), st.integers(0, 3), VALUES, st.one_of(st.none(), st.integers(1, 90)))


def step_kind(draw: int) -> str:
    return next(kind for limit, kind in KINDS if draw < limit)


def submit(task, user, value, seconds=None):
    if value == "unsuitable":
        return services.submit_label(task, user, unsuitable=True, unsuitable_reason="unreadable", seconds_spent=seconds)
    return services.submit_label(task, user, value=value, seconds_spent=seconds)


def run(step, project, annotators, staff, items):
    adjudicator, admin, verifiers = staff
    kind, index, value, seconds = step_kind(step[0]), step[1], step[2], step[3]
    try:
        if kind in ("label", "skip"):
            user = annotators[index]
            task = services.next_task(project, user)
            if task is None:
                return
            if kind == "skip":
                services.skip_task(task, user)
            else:
                submit(task, user, value, seconds)
        elif kind == "change":
            user = annotators[index]
            task = (
                Task.objects.filter(item__project=project, annotator=user, status=Task.Status.SUBMITTED)
                .order_by("-id")
                .first()
            )
            if task is not None:
                submit(task, user, value)
        elif kind == "adjudicate":
            item = Item.objects.filter(project=project, state=workflow.NEEDS_ADJUDICATION).order_by("id").first()
            if item is not None:
                services.adjudicate(item, adjudicator, value=value is True, rationale="the reference says so")
        elif kind in ("override", "reopen"):
            resolved = [item for item in items if item.state == workflow.RESOLVED]
            if not resolved:
                return
            item = resolved[index % len(resolved)]
            if kind == "reopen":
                services.bulk_apply(
                    project, Item.objects.filter(pk=item.pk), services.REOPEN, actor=admin, rationale="a second look"
                )
            else:
                services.override(
                    item,
                    admin,
                    value=None if value == "unsuitable" else value,
                    unsuitable=value == "unsuitable",
                    rationale="checked again",
                )
        elif kind == "exclude":
            services.bulk_apply(
                project,
                Item.objects.filter(pk=items[index].pk),
                services.EXCLUDE,
                actor=admin,
                rationale="a second look",
            )
        elif kind == "verdict":
            status = {True: "correct", False: "incorrect", "unsuitable": "inconclusive"}[value]
            grading_services.record_verdict(
                Completion.objects.get(pk=items[index].subject_id),
                verifiers[(seconds or 0) % 2],
                SimpleNamespace(status=status, extracted_answer="", explanation="", reason="", raw_output=""),
            )
        elif kind == "gold":
            services.mark_gold(project, items[index], value is True, actor=admin)
    except services.WorkflowError:
        pass  # a refused step changes nothing; the figures must still match


@pytest.mark.django_db
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(steps=st.lists(STEP, min_size=10, max_size=40))
def test_incremental_tallies_equal_rebuilt_ones(steps):
    dataset = build_dataset(questions=2, completions_per_question=3, name=f"tallies-{next(_names)}")
    # two of a question's three answers come from one model, so Pass@k sees questions with n = 2
    Completion.objects.filter(question__dataset=dataset, external_id="c2").update(model_name="secret-model-0")
    dataset_services.recount(dataset)
    project = services.create_project(dataset=dataset, kind="correctness", seed=3)
    annotators = [person(roles.ANNOTATOR) for _ in range(4)]
    for user in annotators:
        services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
    verifiers = [
        VerifierConfig.objects.create(name=f"tally-rule-{next(_names)}", kind=VerifierConfig.Kind.RULE)
        for _ in range(2)
    ]
    staff = (person(roles.ADJUDICATOR), person(roles.ADMIN), verifiers)
    items = list(Item.objects.filter(project=project).order_by("id"))
    for step in steps:
        run(step, project, annotators, staff, items)
        items = list(Item.objects.filter(project=project).order_by("id"))
    assert (
        Label.objects.filter(item__project=project).count()
        == selectors.state_counts(project)["labels"]
        + Label.objects.filter(item__project=project, item__is_gold=True).count()
    )
    kept = aggregates.all_kept_tallies(project)
    rebuilt = {key: count for key, count in aggregates.computed_with_moments(project).items() if count}
    assert kept == rebuilt
    assert_model_eval_from_counts_equals_the_full_computation(project)


def same_figures(one, other) -> bool:
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(same_figures(one[key], other[key]) for key in one)
    if isinstance(one, float) and isinstance(other, float):
        return one == pytest.approx(other, rel=1e-12, abs=1e-12)
    return one == other


def assert_model_eval_from_counts_equals_the_full_computation(project):
    """The figures read from the kept counts equal those `passk.evaluate_models` gives over every labeled sample
    (bootstrap intervals aside: they resample the same questions with other draws)."""
    source = evaluation.CorrectnessSource(project=project)
    try:
        samples, left_out = evaluation.correctness_samples(project.dataset, source)
    except evaluation.EvaluationError as error:
        with pytest.raises(evaluation.EvaluationError, match=str(error)):
            evaluation.sample_counts(project.dataset, source)
        return
    counts = evaluation.sample_counts(project.dataset, source)
    for ks in ([1], [1, 2, 3]):
        full = passk.evaluate_models(samples, ks, ["0.5", "1.0"], bootstrap=0)
        kept = evaluation.evaluate_counts(counts, ks, ["0.5", "1.0"], bootstrap=0)
        assert same_figures(kept["models"], full["models"])
        assert kept["warnings"] == [*left_out, *full["warnings"]]
    choice = evaluation.choose_ks(samples)
    assert evaluation.choose_ks_from_counts(counts.question_counts) == choice


@pytest.mark.django_db
def test_rebuild_command_gives_back_the_tallies(make_project):
    project, (alice, bob), _ = make_project(annotators=2)
    for user, value in ((alice, True), (bob, False)):
        task = services.next_task(project, user)
        services.submit_label(task, user, value=value, seconds_spent=4)
    before = selectors.progress(project)
    ProjectTally.objects.filter(project=project).delete()
    assert selectors.state_counts(project)["items"] == 0
    call_command("rebuild_aggregates", "--project", str(project.pk))
    assert selectors.progress(project) == before
    assert aggregates.all_kept_tallies(project) == {
        key: count for key, count in aggregates.computed_with_moments(project).items() if count
    }


@pytest.mark.django_db
def test_migrate_counts_the_tallies_of_projects_that_have_none(make_project):
    """A database that predates the tallies has projects with items and no counters: `migrate` counts them."""
    project, (alice, bob), _ = make_project(annotators=2)
    for user, value in ((alice, True), (bob, True)):
        task = services.next_task(project, user)
        services.submit_label(task, user, value=value, seconds_spent=3)
    before = selectors.progress(project)
    ProjectTally.objects.filter(project=project).delete()
    call_command("migrate", verbosity=0)
    assert selectors.progress(project) == before
    untouched = ProjectTally.objects.filter(project=project).count()
    call_command("migrate", verbosity=0)
    assert ProjectTally.objects.filter(project=project).count() == untouched


@pytest.mark.django_db
def test_migrate_counts_the_per_question_counters_of_projects_counted_before_them(make_project):
    project, (alice, bob), _ = make_project(annotators=2)
    for user in (alice, bob):
        task = services.next_task(project, user)
        services.submit_label(task, user, value=True, seconds_spent=3)
    kept = aggregates.all_kept_tallies(project)
    assert any(key.startswith(aggregates.GROUP_PREFIX) for key in kept)
    GroupTally.objects.filter(project=project).delete()
    call_command("migrate", verbosity=0)
    assert aggregates.all_kept_tallies(project) == kept


@pytest.mark.django_db
def test_verdicts_recorded_before_the_project_count_when_its_items_are_added(make_project, corpus):
    verifier = VerifierConfig.objects.create(name=f"tally-rule-{next(_names)}", kind=VerifierConfig.Kind.RULE)
    for completion in Completion.objects.filter(question__dataset=corpus):
        grading_services.record_verdict(
            completion,
            verifier,
            SimpleNamespace(status="correct", extracted_answer="", explanation="", reason="", raw_output=""),
        )
    project, _, _ = make_project(annotators=2)
    assert (
        aggregates.project_tallies(project)[f"vv|{verifier.pk}"]
        == Completion.objects.filter(question__dataset=corpus).count()
    )
    assert aggregates.all_kept_tallies(project) == {
        key: count for key, count in aggregates.computed_with_moments(project).items() if count
    }
    assert services.add_items(project, subject_ids=list(project.items.values_list("subject_id", flat=True))) == 0
    assert aggregates.all_kept_tallies(project) == {
        key: count for key, count in aggregates.computed_with_moments(project).items() if count
    }
