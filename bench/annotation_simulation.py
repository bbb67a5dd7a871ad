"""Simulated annotation projects with known truth, run through the real services on PostgreSQL: how many human
labels each final-label rule spends per resolved item, and how often its final labels are right.

    .venv/bin/python bench/annotation_simulation.py [--database-url postgres://postgres@127.0.0.1:5432/bench_annotation_sim]
        [--items 600] [--hard 0.2] [--gold 40] [--coverage 0.9] [--verifier-accuracy 0.9] [--target 0.98 ...]
        [--cap 4] [--refit-every 50] [--seed 1] [--skip-careless] [--smoke]

A synthetic correctness dataset of --items completions, each with a true label (60% correct) and a difficulty: easy,
or hard (--hard of them), where every annotator's accuracy is pulled halfway towards a coin toss. The panel has
eight annotators with their own confusion matrices (different rates on correct and incorrect completions): six
careful ones (accuracy 0.85 to 0.95), one careless (a coin toss) and one adversarial (right 15% of the time). A
rule-based verifier has a verdict on --coverage of the completions, right with --verifier-accuracy on easy items
and halfway to a coin toss on hard ones. --gold items
have known answers and are served at a gold rate of 0.1 under every rule (their labels are counted apart).

Each scenario is a fresh project on the same data, labeled through `services.next_task` / `services.submit_label`
(the real locks, capacity checks and state machine): at each step a random annotator who still has work claims
the next item and answers from their confusion matrix. Refits of the annotator model are the real job
(`annotation.refit`), queued by the label path after --refit-every labels and run in this process as soon as they
are queued (no Celery worker is involved). Items that reach adjudication are decided by an adjudicator who knows
the truth, as an expert would; they are counted.

Scenarios:
  fixed 2+1 / majority     two labels, a third on disagreement, plain majority (the published protocols)
  fixed 2+1 / model        the same labels, final label = the annotator model's most probable value
  adaptive T / model       one label at a time until the posterior reaches T (each --target; verifier votes weak),
                           at most --cap labels, then adjudication

Printed per scenario: human labels per resolved item (gold labels apart), accuracy of the final labels against the
truth (all items, and the items resolved without adjudication), items sent to adjudication, refits run, seconds.
Then the same two fixed scenarios with a panel whose only weak member is the careless annotator.
Targets: adaptive spends at least 35% fewer labels per resolved item than fixed 2+1 / majority at equal or better
accuracy; model-based aggregation is more accurate than majority with a careless annotator.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_annotation_sim"

# (accuracy on correct completions, accuracy on incorrect completions) of each annotator
PANEL = {
    "careful-1": (0.96, 0.94),
    "careful-2": (0.95, 0.90),
    "careful-3": (0.92, 0.93),
    "careful-4": (0.90, 0.86),
    "careful-5": (0.88, 0.85),
    "careful-6": (0.86, 0.84),
    "careless": (0.5, 0.5),
    "adversarial": (0.15, 0.15),
}
CARELESS_ONLY = {name: rates for name, rates in PANEL.items() if name != "adversarial"}


def ensure_database(database_url: str) -> None:
    import psycopg

    url = urlparse(database_url)
    name = url.path.lstrip("/")
    with psycopg.connect(url._replace(path="/postgres").geturl(), autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("SECRET_KEY", "annotation-simulation-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from core.jobs import runner

    runner.set_dispatcher(lambda kind, job_id, attempt: None)  # refits run here, below, not on a worker


@dataclass
class World:
    dataset: object
    truth: dict[int, bool]  # completion id -> is the completion correct
    hard: set[int]
    gold: list[int]  # completion ids of gold items


def build_world(args, rng: random.Random) -> World:
    from grading.models import Verdict, VerifierConfig
    from verifybench.models import Completion, Dataset, Question

    stamp = f"{int(time.time())}-{rng.randrange(10**6)}"
    dataset = Dataset.objects.create(name=f"simulation {stamp}")
    questions = Question.objects.bulk_create(
        Question(
            dataset=dataset,
            external_id=f"q{n}",
            text=f"Simulated question {n}",
            answer_type="A1",
            answer_class="A",
            content_hash=f"sim-{stamp}-q{n}",
        )
        for n in range(args.items)
    )
    completions = Completion.objects.bulk_create(
        Completion(
            question=question,
            external_id="c",
            model_name="m",
            text=f"Simulated answer {n}",
            content_hash=f"sim-{stamp}-c{n}",
        )
        for n, question in enumerate(questions)
    )
    truth = {c.pk: rng.random() < 0.6 for c in completions}
    ids = [c.pk for c in completions]
    hard = {pk for pk in ids if rng.random() < args.hard}
    gold = rng.sample(ids, args.gold)
    verifier, _ = VerifierConfig.objects.get_or_create(name="simulated-rule-check", defaults={"kind": "rule"})

    def verdict(pk: int) -> str:
        # the verifier, too, is worse on hard items: its errors and the humans' fall on the same items
        accuracy = args.verifier_accuracy if pk not in hard else 0.5 + (args.verifier_accuracy - 0.5) / 2
        return "correct" if (truth[pk] if rng.random() < accuracy else not truth[pk]) else "incorrect"

    Verdict.objects.bulk_create(
        Verdict(completion_id=pk, verifier=verifier, status=verdict(pk)) for pk in ids if rng.random() < args.coverage
    )
    return World(dataset, truth, hard, gold)


def answer(rates: tuple[float, float], correct: bool, hard: bool, rng: random.Random) -> bool:
    accuracy = rates[0] if correct else rates[1]
    if hard:
        accuracy = 0.5 + (accuracy - 0.5) / 2
    return correct if rng.random() < accuracy else not correct


def run_queued_refits(project) -> int:
    from annotation.models import AnnotatorModelFit
    from core.jobs import runner

    ran = 0
    for fit in AnnotatorModelFit.objects.filter(project=project, status=AnnotatorModelFit.Status.QUEUED):
        result = runner.run("annotator-model", fit.pk)
        if result.status != AnnotatorModelFit.Status.SUCCEEDED:
            raise SystemExit(f"refit {fit.pk} failed: {result.error}")
        ran += 1
    return ran


def simulate(name: str, world: World, panel: dict, args, seed: int, **settings) -> dict:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from annotation import services, workflow
    from annotation.models import Item, ItemEvent, Label
    from core import roles

    rng = random.Random(seed)
    started = time.perf_counter()
    project = services.create_project(
        dataset=world.dataset, kind="correctness", name=name, seed=seed, gold_rate=0.1, **settings
    )
    researcher = get_user_model().objects.get_or_create(username="simulation-researcher")[0]
    for item in Item.objects.filter(project=project, subject_id__in=world.gold):
        services.mark_gold(project, item, world.truth[item.subject_id], actor=researcher)
    people = {}
    for person in panel:
        user = get_user_model().objects.get_or_create(username=f"sim-{person}")[0]
        services.add_member(project, user)
        people[person] = user
    adjudicator = get_user_model().objects.get_or_create(username="sim-adjudicator")[0]
    adjudicator.groups.add(Group.objects.get_or_create(name=roles.ADJUDICATOR)[0])
    refits = 0
    busy = list(panel)
    while busy:
        person = rng.choice(busy)
        task = services.next_task(project, people[person])
        if task is None:
            busy.remove(person)
            continue
        subject = task.item.subject_id
        services.submit_label(
            task, people[person], value=answer(panel[person], world.truth[subject], subject in world.hard, rng)
        )
        refits += run_queued_refits(project)
    items = Item.objects.filter(project=project, is_gold=False)
    adjudicated = items.filter(events__kind=ItemEvent.Kind.ADJUDICATION_REQUESTED).distinct().count()
    for item in items.filter(state=workflow.NEEDS_ADJUDICATION):
        services.adjudicate(item, adjudicator, value=world.truth[item.subject_id], rationale="checked by an expert")
    open_left = items.exclude(state=workflow.RESOLVED).count()
    finals = list(items.filter(state=workflow.RESOLVED).values_list("subject_id", "final_value", "resolution"))
    right = sum(final == world.truth[subject] for subject, final, _ in finals)
    by_labels = [(subject, final) for subject, final, resolution in finals if resolution != workflow.BY_ADJUDICATION]
    right_by_labels = sum(final == world.truth[subject] for subject, final in by_labels)
    human = Label.objects.filter(item__project=project, item__is_gold=False).count()
    gold_labels = Label.objects.filter(item__project=project, item__is_gold=True).count()
    return {
        "name": name,
        "resolved": len(finals),
        "open": open_left,
        "labels": human,
        "gold_labels": gold_labels,
        "per_item": human / max(len(finals), 1),
        "accuracy": right / max(len(finals), 1),
        "accuracy_by_labels": right_by_labels / max(len(by_labels), 1),
        "adjudication": adjudicated,
        "refits": refits,
        "seconds": time.perf_counter() - started,
    }


def print_table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    header = (
        f"{'scenario':<22} {'resolved':>8} {'labels':>7} {'labels/item':>11} {'accuracy':>9} "
        f"{'acc. w/o adj.':>13} {'adjudicated':>11} {'gold labels':>11} {'refits':>6} {'seconds':>8}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['name']:<22} {row['resolved']:>8} {row['labels']:>7} {row['per_item']:>11.3f} "
            f"{row['accuracy']:>9.4f} {row['accuracy_by_labels']:>13.4f} {row['adjudication']:>11} "
            f"{row['gold_labels']:>11} {row['refits']:>6} {row['seconds']:>8.1f}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_DATABASE_URL)
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--hard", type=float, default=0.2)
    parser.add_argument("--gold", type=int, default=40)
    parser.add_argument("--coverage", type=float, default=0.9)
    parser.add_argument("--verifier-accuracy", type=float, default=0.9)
    parser.add_argument(
        "--target",
        type=float,
        nargs="+",
        default=[0.98],
        help="Confidence targets of adaptive redundancy, one scenario each.",
    )
    parser.add_argument("--cap", type=int, default=4)
    parser.add_argument("--refit-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-careless", action="store_true", help="Leave out the second panel (careless only).")
    parser.add_argument(
        "--smoke", action="store_true", help="24 items, 4 gold, one panel: checks that the simulation runs"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.gold, args.refit_every, args.skip_careless = 24, 4, 10, True
    ensure_database(args.database_url)
    setup_django(args.database_url)
    print(
        f"{args.items} items ({args.hard:.0%} hard), {args.gold} gold, verifier coverage {args.coverage:.0%} "
        f"accuracy {args.verifier_accuracy:.0%}, targets {args.target}, cap {args.cap}, refit every "
        f"{args.refit_every} labels, seed {args.seed}; load average {os.getloadavg()[0]:.2f}"
    )

    rng = random.Random(args.seed)
    world = build_world(args, rng)
    model = {"aggregation": "model", "refit_every": args.refit_every}
    rows = [
        simulate("fixed 2+1 / majority", world, PANEL, args, args.seed),
        simulate("fixed 2+1 / model", world, PANEL, args, args.seed, **model),
    ]
    for target in args.target:
        rows.append(
            simulate(
                f"adaptive {target} / model",
                world,
                PANEL,
                args,
                args.seed,
                adaptive_redundancy=True,
                max_labels=args.cap,
                confidence_target=target,
                **model,
            )
        )
    print_table("Panel: six careful annotators, one careless, one adversarial", rows)
    fixed = rows[0]
    for adaptive in rows[2:]:
        saving = 1 - adaptive["per_item"] / fixed["per_item"]
        met = saving >= 0.35 and adaptive["accuracy"] >= fixed["accuracy"]
        print(
            f"{adaptive['name']} vs fixed 2+1 / majority: {saving:.1%} fewer human labels per resolved item, "
            f"accuracy {adaptive['accuracy']:.4f} vs {fixed['accuracy']:.4f} (target: >= 35% fewer at equal or "
            f"better accuracy: {'met' if met else 'NOT met'})"
        )

    if args.skip_careless:
        return
    careless = [
        simulate("fixed 2+1 / majority", world, CARELESS_ONLY, args, args.seed + 1),
        simulate("fixed 2+1 / model", world, CARELESS_ONLY, args, args.seed + 1, **model),
    ]
    print_table("Panel: six careful annotators and one careless", careless)
    print(
        f"\nmodel vs majority with a careless annotator: accuracy {careless[1]['accuracy']:.4f} vs "
        f"{careless[0]['accuracy']:.4f} without adjudication {careless[1]['accuracy_by_labels']:.4f} vs "
        f"{careless[0]['accuracy_by_labels']:.4f} (target: model more accurate: "
        f"{'met' if careless[1]['accuracy_by_labels'] > careless[0]['accuracy_by_labels'] else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
