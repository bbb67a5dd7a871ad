"""A correctness project with two verifiers on forty questions, for the meta-evaluation's tests and pages."""

from __future__ import annotations

from annotation import services
from verifybench.models import Dataset

from .conftest import make_completion, make_question, resolve, rule_verifier, set_verdicts


def two_verifier_project():
    """Forty questions, two completions each, labeled; rule-a right on all but four items, rule-b on all but 14."""
    dataset = Dataset.objects.create(name="uncertainty-fixture")
    completions = []
    for q in range(40):
        question = make_question(dataset, f"q{q}", "AB"[q % 2])
        completions += [make_completion(question, f"{q}-{k}", f"m{k}") for k in range(2)]
    project = services.create_project(dataset=dataset, kind="correctness", name="Uncertainty", seed=1)
    truth = {completion: index % 3 != 0 for index, completion in enumerate(completions)}
    for completion, value in truth.items():
        resolve(project, completion, value)
    first, second = rule_verifier("rule-a"), rule_verifier("rule-b")

    def verdict(value: bool, wrong: bool) -> str:
        return "correct" if value != wrong else "incorrect"

    set_verdicts(first, {c: verdict(v, i < 4) for i, (c, v) in enumerate(truth.items())})
    set_verdicts(second, {c: verdict(v, i % 5 == 1 or i < 6) for i, (c, v) in enumerate(truth.items())})
    return project, first, second
