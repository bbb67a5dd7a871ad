"""Projects with final labels made directly in the database, as the workflow leaves them."""

from __future__ import annotations

import itertools

import pytest
from django.utils import timezone

from annotation import aggregates, workflow
from annotation.models import AnnotationProject, Item, Label, Task
from verifybench.importing.hashing import completion_content_hash, question_content_hash
from verifybench.models import Completion, Dataset, Question, ReferenceAnswer

_keys = itertools.count(1)


class LabelledData:
    """Builds questions, completions and correctness items with final labels in one project."""

    def __init__(self, name: str, annotators):
        self.dataset = Dataset.objects.create(name=name)
        self.project = AnnotationProject.objects.create(
            name=f"{name} correctness", dataset=self.dataset, kind="correctness"
        )
        self.annotators = annotators

    def question(
        self,
        external_id: str,
        *,
        answer_type: str = "A1",
        source: str = "math_reasoning/MATH",
        domain: str = "math_reasoning",
        answer: str = "42",
        text: str | None = None,
    ) -> Question:
        text = text or f"Question {external_id}: compute $x$."
        question = Question.objects.create(
            dataset=self.dataset,
            external_id=external_id,
            text=text,
            domain=domain,
            source=source,
            answer_type=answer_type,
            answer_class=answer_type[:1],
            content_hash=question_content_hash(text, answer),
        )
        ReferenceAnswer.objects.create(question=question, final_answer=answer)
        return question

    def completion(
        self, question: Question, external_id: str, *, model: str = "model-a", text: str | None = None
    ) -> Completion:
        text = text or f"Answer of {model} to {question.external_id}: \\boxed{{{external_id}}}"
        return Completion.objects.create(
            question=question,
            external_id=external_id,
            model_name=model,
            text=text,
            content_hash=completion_content_hash(model, text),
        )

    def item(
        self,
        completion: Completion,
        value: bool | None,
        *,
        resolution: str = workflow.BY_AGREEMENT,
        state: str = workflow.RESOLVED,
        excluded: bool = False,
        is_gold: bool = False,
        annotators=None,
    ) -> Item:
        annotators = self.annotators[:2] if annotators is None else annotators
        resolved = state == workflow.RESOLVED
        item = Item.objects.create(
            project=self.project,
            subject_id=completion.pk,
            answer_type=completion.question.answer_type,
            state=state,
            resolution=resolution if resolved else "",
            required_labels=max(2, len(annotators)),
            label_count=0 if is_gold else len(annotators),
            final_value=value if resolved and not excluded else None,
            excluded=excluded,
            is_gold=is_gold,
            gold_value=value if is_gold else None,
            random_key=next(_keys) / 1000,
            resolved_at=timezone.now() if resolved else None,
        )
        now = timezone.now()
        for user in annotators:
            task = Task.objects.create(
                item=item, annotator=user, status=Task.Status.SUBMITTED, leased_at=now, expires_at=now, finished_at=now
            )
            Label.objects.create(item=item, task=task, annotator=user, value=value, unsuitable=excluded)
        # made directly in the database: count the new item into the project's figures as the workflow would
        aggregates.add(self.project.pk, aggregates.contribution(self.project, [item]))
        return item

    def labelled(self, question: Question, external_id: str, value: bool, **kwargs) -> Item:
        model = kwargs.pop("model", "model-a")
        return self.item(self.completion(question, external_id, model=model), value, **kwargs)


@pytest.fixture
def three_annotators(make_user):
    return [make_user("annotator") for _ in range(3)]


@pytest.fixture
def verifybench_data(db, three_annotators):
    """A: 3 eligible questions; B: 1 eligible + 1 with only correct answers; C: 2 eligible; D: none.

    Plus one eligible question without an answer type, and on question a0 an excluded, an unresolved and a gold
    item that must never be exported.
    """
    data = LabelledData("vb", three_annotators)
    for index in range(3):
        q = data.question(f"a{index}", answer_type="A1", answer=str(index))
        data.labelled(q, f"a{index}-c1", True)
        data.labelled(q, f"a{index}-c2", True, resolution=workflow.BY_MAJORITY, annotators=three_annotators)
        data.labelled(q, f"a{index}-w1", False, model="model-b")
        data.labelled(
            q, f"a{index}-w2", False, model="model-b", resolution=workflow.BY_ADJUDICATION, annotators=three_annotators
        )
    q_b = data.question("b0", answer_type="B3", source="math_reasoning/OlympiadBench", answer="(1,2)")
    data.labelled(q_b, "b0-c", True)
    data.labelled(q_b, "b0-w", False, resolution=workflow.BY_OVERRIDE)
    q_b1 = data.question("b1", answer_type="B1", answer="x+1")
    data.labelled(q_b1, "b1-c", True)
    for index in range(2):
        q = data.question(
            f"c{index}", answer_type="C3", source="logic_reasoning/BBH", domain="logic_reasoning", answer="True"
        )
        data.labelled(q, f"c{index}-c", True)
        data.labelled(q, f"c{index}-w", False)
    q_untyped = data.question("u0", answer_type="")
    data.labelled(q_untyped, "u0-c", True)
    data.labelled(q_untyped, "u0-w", False)
    a0 = Question.objects.get(dataset=data.dataset, external_id="a0")
    data.excluded = data.labelled(a0, "a0-unsuitable", None, excluded=True)
    data.unresolved = data.labelled(a0, "a0-open", None, state=workflow.NEEDS_TIEBREAK)
    data.gold = data.labelled(a0, "a0-gold", True, is_gold=True, annotators=[])
    return data


@pytest.fixture
def mumath_data(db, three_annotators):
    """Problems p0..p2; models m1 (3 problems, 2 samples on p0), m2 (3), m3 (2), m4 (2), m5 (1)."""
    data = LabelledData("mu", three_annotators)
    problems = [data.question(f"p{index}", answer_type="", source="", answer=f"{index}/2") for index in range(3)]
    coverage = {"m1": [0, 1, 2], "m2": [0, 1, 2], "m3": [0, 1], "m4": [1, 2], "m5": [2]}
    for model, indexes in coverage.items():
        for index in indexes:
            data.labelled(problems[index], f"{model}-p{index}", (index + len(model)) % 2 == 0, model=model)
    data.labelled(problems[0], "m1-p0-second", True, model="m1")
    data.labelled(problems[1], "m5-p1-unsuitable", None, model="m5", excluded=True)
    return data


@pytest.fixture
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
