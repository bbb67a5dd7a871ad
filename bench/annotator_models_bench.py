"""Speed of the Dawid-Skene and grader models of core.metrics.annotator_models on synthetic projects.

    python bench/annotator_models_bench.py [--labels 1000000] [--items 400000] [--annotators 50] [--classes 2]
                                           [--gold 2000] [--weak-items 100000] [--grades 30000] [--smoke]

Dawid-Skene: --items items with about --labels / --items labels each (2 or 3, like the two-then-a-third
protocol), from --annotators annotators of mixed quality (most careful, some careless, one adversarial), --gold
gold items and one verifier vote on --weak-items items. The labels are built as Python triples before the clock
starts, as the app would hand them over. Printed: the whole fit (encoding the triples, both EM starts, the weak
votes), the EM iterations and the time per iteration, then the time to turn the posteriors into a
`{item: label}` dict, and the accuracy of the model's labels and of the majority vote against the simulated truth.

Grader model: --grades proof grades, three per proof, from 12 graders with known bias and noise.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.metrics.annotator_models import WeakSource, fit_dawid_skene, fit_grader_model  # noqa: E402
from core.metrics.annotator_models.fitting import encode, unzip3  # noqa: E402


def synthetic_labels(args: argparse.Namespace, rng: np.random.Generator) -> tuple[list, np.ndarray, np.ndarray]:
    """(item, annotator, value) triples with integer classes, the truth per item and the labels' item indices."""
    n_items, k = args.items, args.classes
    truth = rng.integers(0, k, n_items)
    extra = max(args.labels - 2 * n_items, 0)
    per_item = np.full(n_items, 2)
    per_item[rng.choice(n_items, size=min(extra, n_items), replace=False)] += 1
    item = np.repeat(np.arange(n_items), per_item)[: args.labels]
    accuracy = rng.uniform(0.75, 0.97, args.annotators)
    accuracy[: max(args.annotators // 10, 1)] = 1 / k  # careless: random labels
    accuracy[-1] = 0.05  # adversarial
    item = rng.permutation(item)  # labels arrive in submission order, not grouped by item
    annotator = rng.integers(0, args.annotators, item.size)
    right = rng.random(item.size) < accuracy[annotator]
    wrong_shift = rng.integers(1, k, item.size) if k > 2 else np.ones(item.size, dtype=np.int64)
    value = np.where(right, truth[item], (truth[item] + wrong_shift) % k)
    labels = list(zip(item.tolist(), (f"annotator-{a}" for a in annotator.tolist()), value.tolist(), strict=True))
    return labels, truth, item


def majority_accuracy(item: np.ndarray, value: np.ndarray, truth: np.ndarray, k: int) -> float:
    votes = np.bincount(item * k + value, minlength=truth.size * k).reshape(truth.size, k)
    return float((votes.argmax(axis=1) == truth).mean())


def bench_dawid_skene(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(7)
    labels, truth, item = synthetic_labels(args, rng)
    gold = {int(i): int(truth[i]) for i in rng.choice(args.items, size=args.gold, replace=False)}
    weak_items = rng.choice(args.items, size=args.weak_items, replace=False)
    weak_right = rng.random(weak_items.size) < 0.85
    weak_values = np.where(weak_right, truth[weak_items], (truth[weak_items] + 1) % args.classes)
    weak_votes = list(zip(weak_items.tolist(), ["verifier"] * weak_items.size, weak_values.tolist(), strict=True))
    sources = {"verifier": WeakSource.symmetric(0.85, list(range(args.classes)))}

    started = time.perf_counter()
    items, annotators, _ = unzip3(labels, "label")
    encode(items, {}), encode(annotators, {})
    encode_seconds = time.perf_counter() - started

    started = time.perf_counter()
    model = fit_dawid_skene(
        labels, classes=list(range(args.classes)), gold=gold, weak_votes=weak_votes, weak_sources=sources
    )
    fit_seconds = time.perf_counter() - started
    started = time.perf_counter()
    final = model.map_labels()
    map_seconds = time.perf_counter() - started

    convergence = model.convergence
    predicted = np.fromiter((final[i] for i in range(args.items)), dtype=np.int64, count=args.items)
    values = np.fromiter((v for _, _, v in labels), dtype=np.int64, count=len(labels))
    print(
        f"Dawid-Skene: {len(labels):,} labels, {args.items:,} items, {args.annotators} annotators, "
        f"{args.classes} classes, {len(gold):,} gold items, {len(weak_votes):,} verifier votes"
    )
    print(
        f"  fit (triples to index arrays, EM from {'both starts' if gold else 'majority vote'}, weak votes): "
        f"{fit_seconds:.2f} s, of which about {encode_seconds:.2f} s turning the triples into index arrays"
    )
    print(
        f"  EM iterations of the winning start ({convergence.start}): {convergence.iterations}, "
        f"converged: {convergence.converged}"
    )
    print(f"  posteriors to an {{item: label}} dict: {map_seconds:.2f} s")
    print(
        f"  accuracy against the simulated truth: model {float((predicted == truth).mean()):.4f}, "
        f"majority vote {majority_accuracy(item, values, truth, args.classes):.4f}"
    )


def bench_grader_model(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(8)
    n_graders, per_proof = 12, 3
    n_proofs = args.grades // per_proof
    bias = rng.normal(0, 0.5, n_graders)
    bias -= bias.mean()
    sigma = rng.uniform(0.3, 1.2, n_graders)
    truth = rng.uniform(0, 7, n_proofs)
    proof = np.repeat(np.arange(n_proofs), per_proof)
    grader = np.argsort(rng.random((n_proofs, n_graders)), axis=1)[:, :per_proof].ravel()
    score = truth[proof] + bias[grader] + sigma[grader] * rng.standard_normal(proof.size)
    grades = list(zip(proof.tolist(), grader.tolist(), score.tolist(), strict=True))

    started = time.perf_counter()
    model = fit_grader_model(grades, score_range=None)
    seconds = time.perf_counter() - started
    estimates = model.graders()
    bias_error = max(abs(estimates[g].bias - bias[g]) for g in range(n_graders))
    sigma_error = max(abs(estimates[g].sigma - sigma[g]) for g in range(n_graders))
    print(f"Grader model: {len(grades):,} grades, {n_proofs:,} proofs, {n_graders} graders")
    print(
        f"  fit: {seconds:.2f} s, {model.convergence.iterations} iterations, converged: {model.convergence.converged}"
    )
    print(f"  largest error: bias {bias_error:.3f}, sigma {sigma_error:.3f} points")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=400_000)
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--gold", type=int, default=2000)
    parser.add_argument("--weak-items", type=int, default=100_000)
    parser.add_argument("--grades", type=int, default=30_000)
    parser.add_argument("--smoke", action="store_true", help="2,000 labels and 90 grades: checks that it runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.labels, args.items, args.annotators, args.gold, args.weak_items, args.grades = 2000, 800, 10, 20, 200, 90
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    bench_dawid_skene(args)
    bench_grader_model(args)


if __name__ == "__main__":
    main()
