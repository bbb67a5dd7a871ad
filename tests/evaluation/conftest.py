"""Small hand-checkable fixtures: human labels and verdicts for meta-evaluation, sampled completions for Pass@k."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.db import transaction

from annotation import aggregates, services
from annotation.models import AnnotationProject, Item
from grading.models import PromptTemplate, Verdict, VerifierConfig
from verifybench import services as dataset_services
from verifybench.label_rules import CORRECTNESS
from verifybench.models import Completion, Dataset, Question


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_question(dataset: Dataset, external_id: str, answer_class: str = "") -> Question:
    return Question.objects.create(
        dataset=dataset,
        external_id=external_id,
        text=f"Question {external_id}",
        answer_class=answer_class,
        content_hash=f"hash-{dataset.pk}-{external_id}",
    )


def make_completion(
    question: Question, external_id: str, model: str, *, sample_index: int = 0, is_greedy: bool = False
) -> Completion:
    completion = Completion.objects.create(
        question=question,
        external_id=external_id,
        model_name=model,
        sample_index=sample_index,
        is_greedy=is_greedy,
        text=f"answer {external_id}",
        content_hash=f"hash-{question.pk}-{external_id}",
    )
    dataset_services.recount(question.dataset)  # as an import does
    return completion


def rule_verifier(name: str) -> VerifierConfig:
    return VerifierConfig.objects.create(name=name, kind=VerifierConfig.Kind.RULE)


def judge_verifier(name: str) -> VerifierConfig:
    template = PromptTemplate.objects.create(
        name=f"{name}-template", contract="final_judgment", user_template="{question}\n{reference}\n{completion}"
    )
    return VerifierConfig.objects.create(
        name=name,
        kind=VerifierConfig.Kind.JUDGE,
        base_url="http://127.0.0.1:9/v1",
        model="judge-model",
        api_key_env="JUDGE_KEY",
        template=template,
    )


def set_verdicts(verifier: VerifierConfig, statuses: dict[Completion, str]) -> None:
    for completion, status in statuses.items():
        with transaction.atomic():  # as grading.services.record_verdict does: the project's tallies move with it
            tracker = aggregates.track_subjects(CORRECTNESS, [completion.pk])
            Verdict.objects.create(completion=completion, verifier=verifier, status=status)
            tracker.done()


def resolve(
    project: AnnotationProject,
    completion: Completion,
    value,
    *,
    excluded=False,
    is_gold=False,
    state=Item.State.RESOLVED,
) -> Item:
    item = Item.objects.get(project=project, subject_id=completion.pk)
    tracker = aggregates.track(project, [item])  # set directly, but counted into the figures as the workflow does
    item.state, item.final_value, item.excluded, item.is_gold = state, value, excluded, is_gold
    item.save(update_fields=["state", "final_value", "excluded", "is_gold"])
    tracker.done()
    item.refresh_from_db()
    return item


@dataclass
class MetaFixture:
    project: AnnotationProject
    rule: VerifierConfig
    judge: VerifierConfig
    items: dict[str, Item]


@pytest.fixture
def meta_fixture(db) -> MetaFixture:
    """Nine completions; six count (resolved, not excluded, not gold). Expected figures are in the tests."""
    dataset = Dataset.objects.create(name="meta-eval-fixture")
    q_a, q_b, q_none = (
        make_question(dataset, "qa", "A"),
        make_question(dataset, "qb", "B"),
        make_question(dataset, "qn"),
    )
    c = {
        "tp": make_completion(q_a, "1", "m1"),
        "tn": make_completion(q_a, "2", "m2"),
        "fn_inconclusive": make_completion(q_b, "3", "m1"),
        "fp": make_completion(q_b, "4", "m2"),
        "missing": make_completion(q_none, "5", "m1"),
        "excluded": make_completion(q_a, "6", "m1", sample_index=1),
        "unresolved": make_completion(q_b, "7", "m2", sample_index=1),
        "gold": make_completion(q_a, "8", "m2", sample_index=1),
        "tn_unclassified": make_completion(q_none, "9", "m2"),
    }
    project = services.create_project(dataset=dataset, kind="correctness", name="Meta fixture", seed=1)
    items = {
        "tp": resolve(project, c["tp"], True),
        "tn": resolve(project, c["tn"], False),
        "fn_inconclusive": resolve(project, c["fn_inconclusive"], True),
        "fp": resolve(project, c["fp"], False),
        "missing": resolve(project, c["missing"], True),
        "excluded": resolve(project, c["excluded"], None, excluded=True),
        "unresolved": resolve(project, c["unresolved"], None, state=Item.State.IN_PROGRESS),
        "gold": resolve(project, c["gold"], True, is_gold=True),
        "tn_unclassified": resolve(project, c["tn_unclassified"], False),
    }
    rule = rule_verifier("rule-check")
    set_verdicts(
        rule,
        {
            c["tp"]: "correct",
            c["tn"]: "incorrect",
            c["fn_inconclusive"]: "inconclusive",
            c["fp"]: "correct",
            c["excluded"]: "correct",
            c["unresolved"]: "correct",
            c["gold"]: "incorrect",
            c["tn_unclassified"]: "incorrect",
        },
    )
    judge = judge_verifier("judge-x")
    set_verdicts(
        judge,
        {
            c["tp"]: "correct",
            c["tn"]: "correct",
            c["fn_inconclusive"]: "correct",
            c["fp"]: "incorrect",
            c["missing"]: "correct",
            c["tn_unclassified"]: "incorrect",
        },
    )
    return MetaFixture(project=project, rule=rule, judge=judge, items=items)


@dataclass
class SampleFixture:
    dataset: Dataset
    project: AnnotationProject
    verifier: VerifierConfig


@pytest.fixture
def sample_fixture(db) -> SampleFixture:
    """One question; alpha: 4 samples (humans: 2 correct) + a correct greedy answer; beta: 4 samples, none correct.

    Verdicts: alpha correct, correct, correct, inconclusive (greedy correct); beta incorrect x3, one without verdict.
    """
    dataset = Dataset.objects.create(name="samples-fixture")
    question = make_question(dataset, "q1", "A")
    alpha = [make_completion(question, f"a{i}", "alpha", sample_index=i) for i in range(4)]
    alpha_greedy = make_completion(question, "a-greedy", "alpha", is_greedy=True)
    beta = [make_completion(question, f"b{i}", "beta", sample_index=i) for i in range(4)]
    project = services.create_project(dataset=dataset, kind="correctness", name="Samples labels", seed=1)
    for completion, value in zip(alpha, (True, True, False, False)):
        resolve(project, completion, value)
    resolve(project, alpha_greedy, True)
    for completion in beta:
        resolve(project, completion, False)
    verifier = rule_verifier("sample-rule")
    set_verdicts(
        verifier,
        {
            alpha[0]: "correct",
            alpha[1]: "correct",
            alpha[2]: "correct",
            alpha[3]: "inconclusive",
            alpha_greedy: "correct",
            beta[0]: "incorrect",
            beta[1]: "incorrect",
            beta[2]: "incorrect",
        },
    )
    return SampleFixture(dataset=dataset, project=project, verifier=verifier)
