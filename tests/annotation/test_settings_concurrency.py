"""Labels per item and tie-break annotators changed again and again while eight annotators claim and submit at once,
against real PostgreSQL: no submit fails on a constraint or an illegal transition, no item is left stuck, and every
item ends with the labels its requirement asks for."""

import random
import threading
import time

import pytest
from django.db import connections
from django.db.models import Count

from annotation import services, workflow
from annotation.models import AnnotationProject, Item

from .conftest import build_dataset

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ANNOTATORS = 8


def annotate(project_id, user, seed, barrier, deadline, failures, lock):
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
            try:
                services.submit_label(task, user, value=rng.random() < 0.6, seconds_spent=1.0)
            except services.WorkflowError:
                continue  # the item stopped taking labels meanwhile: an answer, not a failure
    except Exception as exc:  # reported by the main thread
        with lock:
            failures.append(repr(exc))
    finally:
        connections.close_all()


def change_settings(project_id, actor, stop, outcomes, failures, lock):
    rng = random.Random(3)
    try:
        while not stop.is_set():
            values = rng.choice(
                [
                    {"labels_per_item": 2},
                    {"labels_per_item": 3},
                    {"tiebreak_annotators": 1},
                    {"tiebreak_annotators": 2},
                    {"labels_per_item": 2, "tiebreak_annotators": 1},
                ]
            )
            project = AnnotationProject.objects.get(pk=project_id)
            try:
                services.update_project(project, actor=actor, **values)
                outcome = "applied"
            except services.SettingRefused:
                outcome = "refused"
            with lock:
                outcomes.append(outcome)
            time.sleep(rng.uniform(0.005, 0.03))
    except Exception as exc:
        with lock:
            failures.append(repr(exc))
    finally:
        connections.close_all()


def test_settings_changed_under_load_never_break_an_item(transactional_db, make_user):
    dataset = build_dataset(questions=8, completions_per_question=5)  # 40 items
    project = services.create_project(dataset=dataset, kind="correctness", seed=5)
    researcher = make_user("researcher")
    annotators = [make_user("annotator") for _ in range(ANNOTATORS)]
    for user in annotators:
        services.add_member(project, user)

    failures, outcomes = [], []
    lock, stop = threading.Lock(), threading.Event()
    barrier = threading.Barrier(ANNOTATORS)
    deadline = time.monotonic() + 120
    changer = threading.Thread(target=change_settings, args=(project.pk, researcher, stop, outcomes, failures, lock))
    threads = [
        threading.Thread(target=annotate, args=(project.pk, user, n, barrier, deadline, failures, lock))
        for n, user in enumerate(annotators)
    ]
    changer.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stop.set()
    changer.join()

    assert failures == []
    assert "applied" in outcomes, outcomes
    assert not Item.objects.filter(project=project, state__in=workflow.OPEN_STATES).exists()  # nothing stuck
    for item in Item.objects.filter(project=project).annotate(n=Count("labels")):
        assert item.n == item.label_count <= item.required_labels, item
        if item.state == workflow.RESOLVED and item.resolution == workflow.BY_AGREEMENT:
            assert item.n == item.required_labels, item
