"""Finding completions by what the automatic verifiers said about them, for the workflow's item filters.

Registered with `core.subjects` from GradingConfig.ready() as the `verdicts` subject filter: the criteria `verifier`
(a verifier configuration's id) and `verdict` (correct, incorrect or inconclusive), for every subject kind whose
subject is a completion.
"""

from __future__ import annotations

from core import subjects
from core.labels import InvalidValue
from core.subjects import SubjectFilter, SubjectKind
from verifybench.models import Completion

from .models import Verdict, VerifierConfig


def _on_completions(kind: SubjectKind) -> bool:
    return kind.extra.get("subject") == "completion"


def completions_by_verdict(kind_name: str, dataset_id: int, *, verifier="", verdict: str = ""):
    """Completions with a verdict of this verifier (any verifier when none is named) saying this (anything when
    no verdict is named)."""
    verdicts = Verdict.objects.all()
    if verifier:
        try:
            verdicts = verdicts.filter(verifier_id=int(verifier))
        except (TypeError, ValueError):
            raise InvalidValue(f"{verifier!r} is not a verifier id") from None
    if verdict:
        if verdict not in Verdict.Status.values:
            raise InvalidValue(f"a verdict is one of {', '.join(Verdict.Status.values)}, not {verdict!r}")
        verdicts = verdicts.filter(status=verdict)
    return Completion.objects.filter(pk__in=verdicts.values("completion_id"))


def verdict_choices(kind_name: str, dataset_id: int) -> dict[str, list[tuple[str, str]]]:
    return {
        "verifier": [(str(pk), name) for pk, name in VerifierConfig.objects.order_by("name").values_list("pk", "name")],
        "verdict": list(Verdict.Status.choices),
    }


VERDICTS = SubjectFilter(
    name="verdicts",
    criteria=("verifier", "verdict"),
    applies_to=_on_completions,
    filter_subject_ids=completions_by_verdict,
    choices=verdict_choices,
)


def register() -> None:
    subjects.register_subject_filter(VERDICTS)
