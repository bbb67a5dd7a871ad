"""Adaptive redundancy under twelve annotators claiming and submitting at once against real PostgreSQL: items ask
for one label at a time, and no item is ever given more labels than it asked for or than the cap."""

import random
import threading
import time
from collections import Counter

import pytest
from django.db import connections
from django.db.models import Count

from annotation import label_model, services, workflow
from annotation.models import AnnotationProject, AnnotatorModelFit, Item, Label, Task

from .conftest import build_dataset

CLIENTS = 12
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def truth(item_id: int) -> bool:
    return item_id % 3 != 0


def run_annotator(project_id, user, accuracy, seed, barrier, deadline, accepted, refused, failures, lock):
    rng = random.Random(seed)
    project = AnnotationProject.objects.get(pk=project_id)
    try:
        barrier.wait()
        while time.monotonic() < deadline:
            task = services.next_task(project, user)
            if task is None:
                if not Item.objects.filter(project=project, state__in=workflow.OPEN_STATES).exists():
                    return
                time.sleep(0.01)
                continue
            value = truth(task.item_id) if rng.random() < accuracy else not truth(task.item_id)
            time.sleep(rng.uniform(0, 0.005))
            try:
                result = services.submit_label(task, user, value=value)
            except services.WorkflowError as exc:
                with lock:
                    refused.append((task.pk, str(exc)))
                continue
            with lock:
                accepted.append((task.item_id, user.pk, result.label.pk))
    except Exception as exc:  # reported by the main thread
        with lock:
            failures.append(repr(exc))
    finally:
        connections.close_all()


def test_concurrent_annotators_never_over_assign_an_adaptive_item(transactional_db, make_user):
    dataset = build_dataset(questions=10, completions_per_question=4)  # 40 items
    project = services.create_project(
        dataset=dataset,
        kind="correctness",
        seed=3,
        aggregation="model",
        adaptive_redundancy=True,
        confidence_target=0.98,
        max_labels=3,
        refit_every=0,
    )
    annotators = [make_user("annotator") for _ in range(CLIENTS)]
    for user in annotators:
        services.add_member(project, user)
    accuracies = [0.97 if n % 2 == 0 else 0.8 for n in range(CLIENTS)]
    parameters = label_model.FittedParameters(
        classes=[False, True],
        class_prior=[0.5, 0.5],
        confusion={str(user.pk): [[a, 1 - a], [1 - a, a]] for user, a in zip(annotators, accuracies, strict=True)},
    )
    AnnotatorModelFit.objects.create(
        project=project, status=AnnotatorModelFit.Status.SUCCEEDED, parameters=parameters.as_json()
    )
    assert set(Item.objects.filter(project=project).values_list("required_labels", flat=True)) == {1}

    accepted, refused, failures = [], [], []
    lock = threading.Lock()
    barrier = threading.Barrier(CLIENTS)
    deadline = time.monotonic() + 120
    threads = [
        threading.Thread(
            target=run_annotator,
            args=(project.pk, user, accuracies[n], n, barrier, deadline, accepted, refused, failures, lock),
        )
        for n, user in enumerate(annotators)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert refused == []  # nobody was given a slot the item did not ask for
    assert not Item.objects.filter(project=project, state__in=workflow.OPEN_STATES).exists()
    items = Item.objects.filter(project=project).annotate(n=Count("labels"))
    states = Counter(items.values_list("state", flat=True))
    assert set(states) <= {workflow.RESOLVED, workflow.NEEDS_ADJUDICATION}
    for item in items:
        assert item.n == item.label_count <= item.required_labels <= project.max_labels, item
        if item.state == workflow.RESOLVED:
            assert item.resolution == workflow.BY_MODEL and item.confidence >= 0.98
        else:
            assert item.label_count == project.max_labels and item.confidence < 0.98
    pairs = Counter((label.item_id, label.annotator_id) for label in Label.objects.filter(item__project=project))
    assert max(pairs.values()) == 1 and len(pairs) == len(accepted)
    assert not Task.objects.filter(item__project=project, status=Task.Status.LEASED).exists()
    # one label is never enough here (a careful label alone is 0.97 < 0.98): two agreeing ones settle most items
    per_item = Counter(items.values_list("label_count", flat=True))
    assert per_item[2] > 0 and sum(per_item.values()) == 40
