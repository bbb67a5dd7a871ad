"""Benchmark rows and annotation projects for the labeling, adjudication and dashboard page tests."""

from __future__ import annotations

import hashlib
import itertools

from annotation import services
from annotation.models import ProjectMember
from verifybench.models import Completion, Dataset, PriorLabel, Question, ReferenceAnswer

HIDDEN_MODEL_NAME = "model-zeta-secret-7b"
PRIOR_LABEL_ANNOTATOR = "prior-annotator-x9"

_serial = itertools.count(1)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_dataset(questions: int = 3, *, name: str | None = None, answer_types=("A1", "B3", "C1", "D2")) -> Dataset:
    """A dataset of `questions` questions with a golden answer, a reference solution, one completion each
    (written by HIDDEN_MODEL_NAME, with its final answer boxed) and an imported prior label."""
    serial = next(_serial)
    dataset = Dataset.objects.create(name=name or f"labeling-set-{serial}")
    for index in range(questions):
        text = f"Question {index + 1}: compute $\\int_0^{{{index + 1}}} 2x\\,dx$."
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{serial}-{index + 1}",
            text=text,
            domain="math_reasoning",
            source="math_reasoning/MATH",
            answer_type=answer_types[index % len(answer_types)],
            answer_class=answer_types[index % len(answer_types)][0],
            content_hash=_hash(f"{serial}-{text}"),
        )
        ReferenceAnswer.objects.create(
            question=question,
            final_answer=f"${(index + 1) ** 2}$",
            solution=f"The antiderivative is $x^2$, so the integral is \\boxed{{{(index + 1) ** 2}}}.",
        )
        completion_text = (
            f"We integrate: $\\int_0^{{{index + 1}}} 2x\\,dx = [x^2]_0^{{{index + 1}}}$.\n\n"
            + "Checking each step carefully. " * 20
            + f"\n\nThe answer is $\\boxed{{{(index + 1) ** 2}}}$."
        )
        completion = Completion.objects.create(
            question=question,
            external_id=f"c{serial}-{index + 1}",
            model_name=HIDDEN_MODEL_NAME,
            text=completion_text,
            content_hash=_hash(f"{serial}-{completion_text}"),
        )
        PriorLabel.objects.create(
            completion=completion, is_correct=True, source_format="verifybench", annotators=[PRIOR_LABEL_ANNOTATOR]
        )
    return dataset


def make_project(dataset: Dataset, *, kind: str = "correctness", annotators=(), adjudicators=(), **settings):
    project = services.create_project(
        dataset=dataset, kind=kind, name=f"{dataset.name}: {kind.replace('_', ' ')}", seed=7, **settings
    )
    for user in annotators:
        services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
    for user in adjudicators:
        services.add_member(project, user, ProjectMember.Role.ADJUDICATOR)
    return project


def label_item(project, user, value, **extra):
    """Claim the user's next task in the project and submit a label for it; returns the submit result."""
    task = services.next_task(project, user)
    assert task is not None, f"{user} got no task"
    return services.submit_label(task, user, value=value, **extra)
