"""Fixtures for the annotation workflow: a small dataset, projects with members, task helpers."""

from __future__ import annotations

import itertools

import pytest

from annotation import services
from annotation.models import ProjectMember
from verifybench import services as dataset_services
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

_dataset_counter = itertools.count(1)


def build_dataset(questions: int = 3, completions_per_question: int = 2, name: str | None = None) -> Dataset:
    dataset = Dataset.objects.create(name=name or f"annotation-tests-{next(_dataset_counter)}")
    for q in range(questions):
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{q}",
            text=f"Compute {q} + 1.",
            answer_type="A1",
            answer_class="A",
            content_hash=f"hash-q{q}",
        )
        ReferenceAnswer.objects.create(question=question, final_answer=str(q + 1))
        for c in range(completions_per_question):
            Completion.objects.create(
                question=question,
                external_id=f"c{c}",
                model_name=f"secret-model-{c}",
                text=f"So the answer is \\boxed{{{q + c}}}",
                content_hash=f"hash-q{q}-c{c}",
            )
    dataset_services.recount(dataset)  # as an import does
    return dataset


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def corpus(db):
    return build_dataset()


@pytest.fixture
def make_project(corpus, make_user):
    """make_project(annotators=2, adjudicators=0, **settings) -> (project, [annotators], [adjudicators])."""

    def make(annotators: int = 2, adjudicators: int = 0, dataset=None, kind: str = "correctness", **settings):
        project = services.create_project(dataset=dataset or corpus, kind=kind, seed=5, **settings)
        people = [make_user("annotator") for _ in range(annotators)]
        judges = [make_user("adjudicator") for _ in range(adjudicators)]
        for user in people:
            services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
        for user in judges:
            services.add_member(project, user, ProjectMember.Role.ADJUDICATOR)
        return project, people, judges

    return make


def label_item(item, users, values, **extra):
    """Have each user claim `item` (it must be the one they are given) and submit the matching value."""
    results = []
    for user, value in zip(users, values):
        task = services.next_task(item.project, user)
        assert task is not None and task.item_id == item.pk, f"{user} was not given item {item.pk}"
        if value == "unsuitable":
            results.append(services.submit_label(task, user, unsuitable=True, unsuitable_reason="unreadable", **extra))
        else:
            results.append(services.submit_label(task, user, value=value, **extra))
    item.refresh_from_db()
    return results


def only_item_project(make_project, annotators: int, **settings):
    """A project with exactly one item (the first completion), so every claim lands on it."""

    def build():
        dataset = build_dataset(questions=1, completions_per_question=1)
        return make_project(annotators=annotators, dataset=dataset, **settings)

    return build()
