"""Sixteen annotators claiming and submitting at once against real PostgreSQL, until the project is done."""

import random
import threading
import time
from collections import Counter

import pytest
from django.db import connections, transaction
from django.db.models import Count

from annotation import services, workflow
from annotation.models import AnnotationProject, Item, Label, Task

from .conftest import build_dataset

CLIENTS = 16
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def truth(item_id: int) -> bool:
    return item_id % 3 != 0


def run_annotator(project_id, user, seed, barrier, deadline, accepted, refused, failures, lock):
    rng = random.Random(seed)
    project = AnnotationProject.objects.get(pk=project_id)
    try:
        barrier.wait()
        while time.monotonic() < deadline:
            task = services.next_task(project, user)
            if task is None:
                if not Item.objects.filter(project=project, state__in=workflow.OPEN_STATES).exists():
                    return
                time.sleep(0.01)  # the rest is leased to others or already labeled by us
                continue
            if rng.random() < 0.05:
                services.skip_task(task, user)
                continue
            roll = rng.random()
            if roll < 0.05:
                kwargs = {"unsuitable": True, "unsuitable_reason": "cannot tell"}
            else:
                kwargs = {"value": (not truth(task.item_id)) if roll < 0.2 else truth(task.item_id)}
            time.sleep(rng.uniform(0, 0.005))
            try:
                result = services.submit_label(task, user, seconds_spent=1.0, **kwargs)
            except services.WorkflowError as exc:
                with lock:
                    refused.append((task.pk, str(exc)))
                continue
            if rng.random() < 0.2:  # a retried request
                retry = services.submit_label(task, user, seconds_spent=1.0, **kwargs)
                assert not retry.created and retry.label.pk == result.label.pk
            with lock:
                accepted.append((task.pk, task.item_id, user.pk, result.label.pk, kwargs))
    except Exception as exc:  # reported by the main thread
        with lock:
            failures.append(repr(exc))
    finally:
        connections.close_all()


def test_sixteen_concurrent_annotators_finish_a_project(transactional_db, make_user):
    dataset = build_dataset(questions=12, completions_per_question=5)  # 60 items
    project = services.create_project(dataset=dataset, kind="correctness", seed=11)
    annotators = [make_user("annotator") for _ in range(CLIENTS)]
    judge = make_user("adjudicator")
    for user in annotators:
        services.add_member(project, user)
    services.add_member(project, judge, "adjudicator")

    accepted, refused, failures = [], [], []
    lock = threading.Lock()
    barrier = threading.Barrier(CLIENTS)
    deadline = time.monotonic() + 120
    threads = [
        threading.Thread(
            target=run_annotator, args=(project.pk, user, n, barrier, deadline, accepted, refused, failures, lock)
        )
        for n, user in enumerate(annotators)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert refused == []  # leases are 30 minutes: nobody submits late, so nothing is refused
    assert not Item.objects.filter(project=project, state__in=workflow.OPEN_STATES).exists()

    for item in Item.objects.filter(project=project, state=workflow.NEEDS_ADJUDICATION):
        with transaction.atomic():
            services.adjudicate(item, judge, value=truth(item.pk), rationale="checked against the reference")

    items = Item.objects.filter(project=project).annotate(n=Count("labels"))
    assert items.count() == 60
    assert set(items.values_list("state", flat=True)) == {workflow.RESOLVED}
    for item in items:
        assert item.n == item.label_count <= item.required_labels, item
        assert item.n >= project.labels_per_item
    # no lost label: every accepted submission is stored, once, with what was sent
    labels = {label.pk: label for label in Label.objects.filter(item__project=project)}
    assert len(labels) == len(accepted)
    for task_id, item_id, user_id, label_id, kwargs in accepted:
        label = labels[label_id]
        assert (label.task_id, label.item_id, label.annotator_id) == (task_id, item_id, user_id)
        assert label.unsuitable == kwargs.get("unsuitable", False)
        if not label.unsuitable:
            assert label.value == kwargs["value"]
    pairs = Counter((label.item_id, label.annotator_id) for label in labels.values())
    assert max(pairs.values()) == 1
    assert not Task.objects.filter(
        item__project=project, status=Task.Status.LEASED, item__state=workflow.RESOLVED, label__isnull=False
    ).exists()
    resolutions = Counter(items.values_list("resolution", flat=True))
    assert resolutions[workflow.BY_AGREEMENT] > 0 and resolutions[workflow.BY_MAJORITY] > 0
    assert Label.objects.filter(item__project=project, is_tiebreak=True).count() == (
        items.filter(required_labels=3).count()
    )


def test_a_row_locked_by_a_concurrent_claim_is_waited_for_not_reported_as_nothing_left(transactional_db, make_user):
    dataset = build_dataset(questions=1, completions_per_question=1)
    project = services.create_project(dataset=dataset, kind="correctness")
    alice = make_user("annotator")
    services.add_member(project, alice)
    locked, release = threading.Event(), threading.Event()

    def hold_the_only_item():
        try:
            with transaction.atomic():
                Item.objects.select_for_update().get(project=project)
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_only_item)
    holder.start()
    assert locked.wait(10)
    threading.Timer(0.3, release.set).start()
    task = services.next_task(project, alice)
    holder.join()
    assert task is not None and task.item.project_id == project.pk
