"""Datasets whose completions a rule-based verifier can judge, and correctness projects with final labels."""

from __future__ import annotations

import hashlib
import itertools

from annotation import services
from annotation.models import ProjectMember
from grading.models import VerifierConfig
from verifybench import services as dataset_services
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

_serial = itertools.count(1)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_verifiable_dataset(questions: int = 3, per_question: int = 4, *, name: str | None = None) -> Dataset:
    """Question q has reference 10+q and answer type A1 (B3 for every third question); completion k of each
    question boxes the right answer when k is even, a wrong one when odd, and is written by model-(k % 2)."""
    serial = next(_serial)
    dataset = Dataset.objects.create(name=name or f"jobs-set-{serial}")
    for q in range(questions):
        answer_type = "A1" if q % 3 != 2 else "C1"
        reference = str(10 + q) if answer_type == "A1" else "B"
        text = f"Question {q}: what is {10 + q}?" if answer_type == "A1" else f"Question {q}: pick the letter B."
        question = Question.objects.create(
            dataset=dataset,
            external_id=f"q{serial}-{q}",
            text=text,
            domain="math_reasoning",
            source="math_reasoning/MATH",
            answer_type=answer_type,
            answer_class=answer_type[0],
            content_hash=_hash(f"{serial}-{text}"),
        )
        ReferenceAnswer.objects.create(question=question, final_answer=reference)
        for k in range(per_question):
            right = k % 2 == 0
            if answer_type == "A1":
                answer = reference if right else str(90 + k)
            else:
                answer = "B" if right else "D"
            body = f"Working it out, attempt {k}. The answer is $\\boxed{{{answer}}}$."
            Completion.objects.create(
                question=question,
                external_id=f"c{serial}-{q}-{k}",
                model_name=f"model-{k % 2}",
                text=body,
                content_hash=_hash(f"{serial}-{q}-{k}-{body}"),
            )
    dataset_services.recount(dataset)  # as an import does
    return dataset


def is_right(completion: Completion) -> bool:
    return int(completion.external_id.rsplit("-", 1)[1]) % 2 == 0


def rule_verifier(name: str = "rules") -> VerifierConfig:
    return VerifierConfig.objects.create(name=name, kind=VerifierConfig.Kind.RULE)


def correctness_project(dataset: Dataset, *, annotators=(), name: str | None = None):
    project = services.create_project(
        dataset=dataset, kind="correctness", name=name or f"{dataset.name} labels", seed=3, labels_per_item=2
    )
    for user in annotators:
        services.add_member(project, user, ProjectMember.Role.ANNOTATOR)
    return project


def label_everything(project, annotators) -> None:
    """Each annotator labels every item with the truth, so every item resolves by agreement."""
    for user in annotators:
        while (task := services.next_task(project, user)) is not None:
            services.submit_label(task, user, value=is_right(task.item.subject))
