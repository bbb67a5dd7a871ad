"""Demo step: the demo proof competition (three problems, one with two parallel chains), sample proofs of
fictitious models, and a proof-grading project for the demo graders. Idempotent."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from django.conf import settings

from core.demo import DemoContext, register_demo_step

from .models import ModelInfo, PromptTemplate, ProofProblem, VerifierConfig
from .proofs import services as proof_services
from .proofs.importing import import_matharena_proofs
from .proofs.selectors import proof_projects
from .services import DEFAULT_API_KEY_ENV, ensure_default_templates

DEMO_PROOFS_DIR = Path(settings.BASE_DIR) / "fixtures" / "demo" / "proofs"
DEMO_PROJECT_NAME = "Demo Olympiad 2025 proofs"


def load_demo_competition(directory: Path = DEMO_PROOFS_DIR, *, created_by=None, workspace=None):
    """Create the competition, its problems with rubrics and its model infos when missing, then import the
    sample proofs. Returns (competition, import report)."""
    data = json.loads((directory / "competition.json").read_text(encoding="utf-8"))
    competition = proof_services.get_or_create_competition(
        data["name"],
        date=dt.date.fromisoformat(data["date"]),
        created_by=created_by,
        workspace=workspace,
    )
    if data.get("description") and not competition.description:
        competition.description = data["description"]
        competition.save(update_fields=["description"])
    for model in data.get("models", ()):
        ModelInfo.objects.get_or_create(
            name=model["name"],
            defaults={"release_date": dt.date.fromisoformat(model["release_date"])},
        )
    for position, problem in enumerate(data["problems"], start=1):
        if ProofProblem.objects.filter(competition=competition, problem_idx=str(problem["problem_idx"])).exists():
            continue
        proof_services.add_problem(
            competition,
            problem_idx=problem["problem_idx"],
            statement=problem["statement"],
            max_points=problem["rubric"]["max_points"],
            solutions=problem["solutions"],
            rubric=problem["rubric"],
            position=position,
            created_by=created_by,
        )
    report = import_matharena_proofs(
        competition_name=competition.name,
        source=directory / "proofs.jsonl",
        created_by=created_by,
        source_name="proofs.jsonl",
        workspace=workspace,
    )
    return competition, report


@register_demo_step(order=60)
def create_demo_proof_competition(context: DemoContext) -> None:
    users = context.users
    competition, report = load_demo_competition(
        created_by=users.get("researcher1"), workspace=context.workspaces.get("proofs")
    )
    context.say(
        f"Competition '{competition.name}': {competition.problems.count()} problems with their rubrics from "
        "competition.json; its model proofs from proofs.jsonl:"
    )
    context.say(report.summary())
    project = proof_projects(competition).filter(name=DEMO_PROJECT_NAME).first()
    if project is None:
        project = proof_services.create_proof_project(
            name=DEMO_PROJECT_NAME,
            competition=competition,
            threshold=1.0,
            created_by=users.get("researcher1"),
            graders=[users[name] for name in ("annotator1", "annotator2", "annotator3") if name in users],
            adjudicators=[users["adjudicator1"]] if "adjudicator1" in users else [],
            seed=0,
        )
        context.say(f"Proof-grading project {project.name!r}: {project.items.count()} proofs to grade.")
    else:
        added = proof_services.add_submissions_to_project(project, competition_submissions(competition), seed=0)
        context.say(f"Proof-grading project {project.name!r} already present ({added} new proofs added).")


def competition_submissions(competition):
    from .models import ProofSubmission

    return ProofSubmission.objects.filter(problem__competition=competition)


DEMO_RULE_VERIFIER = "sympy-rules"


@register_demo_step(order=55)
def verify_demo_dataset(context: DemoContext) -> None:
    """Pre-annotate the demo completions with the rule-based verifier, so verdicts show beside human labels."""
    from verifybench.demo import DEMO_DATASET_NAME

    from . import runs
    from .models import VerificationRun

    dataset = context.datasets.get(DEMO_DATASET_NAME)
    if dataset is None:
        return
    verifier, _ = VerifierConfig.objects.get_or_create(
        name=DEMO_RULE_VERIFIER, defaults={"kind": VerifierConfig.Kind.RULE}
    )
    if VerificationRun.objects.filter(verifier=verifier, dataset=dataset).exists():
        return
    run = runs.create_run(
        verifier=verifier, dataset=dataset, created_by=context.users.get("researcher1"), enqueue=False
    )
    run = runs.execute_run(run.pk)
    context.say(f"Verified the demo dataset with {DEMO_RULE_VERIFIER}: {run.counts}")


DEMO_JUDGE = "demo-judge"
DEMO_CASCADE = "demo-cascade"
DEMO_JUDGE_FALLBACK_URL = "http://127.0.0.1:8001/v1"
DEMO_JUDGE_MODEL = "gpt-4o-mini"


@register_demo_step(order=56)
def create_demo_cascade(context: DemoContext) -> None:
    """An LLM judge on the endpoint in OPENAI_BASE_URL (a local OpenAI-compatible server when unset) and a cascade
    that asks it after the rules, checking a tenth of the rule verdicts. Nothing is called here: a researcher starts
    the run from the dataset's jobs page once an admin has put the endpoint on the allow-list with its key bound."""
    ensure_default_templates()
    judge, judge_created = VerifierConfig.objects.get_or_create(
        name=DEMO_JUDGE,
        defaults={
            "kind": VerifierConfig.Kind.JUDGE,
            "base_url": settings.OPENAI_BASE_URL or DEMO_JUDGE_FALLBACK_URL,
            "model": DEMO_JUDGE_MODEL,
            "api_key_env": DEFAULT_API_KEY_ENV,
            "template": PromptTemplate.objects.get(name="verifybench-final-judgment", version=1),
            "price_input_per_million": "0.15",
            "price_output_per_million": "0.60",
            "workspace": context.workspaces.get("answers"),
        },
    )
    _, cascade_created = VerifierConfig.objects.get_or_create(
        name=DEMO_CASCADE,
        defaults={
            "kind": VerifierConfig.Kind.CASCADE,
            "cascade_judge": judge,
            "cascade_sample_rate": 0.1,
            "workspace": context.workspaces.get("answers"),
        },
    )
    if judge_created or cascade_created:
        context.say(
            f"Cascade {DEMO_CASCADE!r}: rules, then {DEMO_JUDGE} ({judge.model} at {judge.base_url}), then "
            f"humans; allow {judge.base_url} with {DEFAULT_API_KEY_ENV} (Admin > Allowed judge endpoints) and start a "
            "run to use it."
        )
