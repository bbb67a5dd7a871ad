"""Annotator models against known answers: Dawid-Skene on simulated panels, the grader bias-and-noise model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.metrics.annotator_models import WeakSource, bootstrap_annotators, fit_dawid_skene, fit_grader_model

# ---------------------------------------------------------------------------------------------------------------
# Simulation helpers
# ---------------------------------------------------------------------------------------------------------------


def simulate_panel(
    accuracies: dict[str, float],
    n_items: int,
    per_item: int,
    *,
    seed: int,
    classes: tuple = (False, True),
    positive_rate: float = 0.5,
) -> tuple[list[tuple[int, str, object]], dict[int, object]]:
    """Labels from annotators who are right with their accuracy and otherwise give another class uniformly."""
    rng = np.random.default_rng(seed)
    names = sorted(accuracies)
    k = len(classes)
    if k == 2:
        truth_codes = (rng.random(n_items) < positive_rate).astype(int)
    else:
        truth_codes = rng.integers(0, k, n_items)
    labels = []
    for item in range(n_items):
        true = int(truth_codes[item])
        for position in rng.choice(len(names), size=per_item, replace=False):
            name = names[position]
            given = true if rng.random() < accuracies[name] else (true + int(rng.integers(1, k))) % k
            labels.append((item, name, classes[given]))
    return labels, {item: classes[int(code)] for item, code in enumerate(truth_codes)}


def majority_vote(labels: list[tuple[int, str, object]]) -> dict[int, object]:
    votes: dict[int, dict[object, int]] = {}
    for item, _, value in labels:
        votes.setdefault(item, {}).setdefault(value, 0)
        votes[item][value] += 1
    return {item: max(counts, key=counts.get) for item, counts in votes.items()}


def accuracy_of(predicted: dict, truth: dict) -> float:
    return sum(predicted[item] == truth[item] for item in truth) / len(truth)


# ---------------------------------------------------------------------------------------------------------------
# Dawid-Skene
# ---------------------------------------------------------------------------------------------------------------


def test_perfect_annotators_recover_the_truth_with_confidence_near_one():
    labels, truth = simulate_panel({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}, 300, 3, seed=1)
    model = fit_dawid_skene(labels)
    assert model.map_labels() == truth
    posteriors = model.items()
    assert min(p.confidence for p in posteriors.values()) > 0.999
    for estimate in model.annotators().values():
        assert estimate.accuracy > 0.98
    assert model.convergence.converged


def test_adversarial_annotator_is_read_inverted():
    panel = {"good1": 0.9, "good2": 0.9, "good3": 0.85, "good4": 0.85, "flipper": 0.0}
    labels, truth = simulate_panel(panel, 600, 3, seed=2)
    model = fit_dawid_skene(labels)
    flipper = model.annotator("flipper")
    assert flipper.confusion[True][False] > 0.95 and flipper.confusion[False][True] > 0.95
    assert flipper.accuracy < 0.05
    assert flipper.weight > 2  # informative, once inverted
    # The flipper alone says True: the model reads False.
    alone = model.item_posterior([("flipper", True)])
    assert alone.label is False and alone.confidence > 0.9
    # One good annotator against the flipper saying the same thing: the flipper's vote counts against it.
    assert (
        model.item_posterior([("good1", True), ("flipper", True)]).confidence
        < model.item_posterior([("good1", True)]).confidence
    )
    assert accuracy_of(model.map_labels(), truth) > accuracy_of(majority_vote(labels), truth) + 0.05


def test_careless_annotator_gets_no_weight_and_the_model_beats_majority_vote():
    panel = {"careful1": 0.85, "careful2": 0.85, "careless1": 0.5, "careless2": 0.5, "careless3": 0.5}
    labels, truth = simulate_panel(panel, 2000, 3, seed=3)
    model = fit_dawid_skene(labels)
    for name in ("careless1", "careless2", "careless3"):
        estimate = model.annotator(name)
        assert estimate.weight < 0.15
        assert abs(estimate.accuracy - 0.5) < 0.05
    for name in ("careful1", "careful2"):
        assert model.annotator(name).weight > 1.0
        assert abs(model.annotator(name).accuracy - 0.85) < 0.04
    # A careless label hardly moves an item.
    assert abs(model.item_posterior([("careless1", True)]).posterior[True] - model.class_prior[True]) < 0.05
    model_accuracy = accuracy_of(model.map_labels(), truth)
    majority_accuracy = accuracy_of(majority_vote(labels), truth)
    assert model_accuracy > majority_accuracy + 0.05, (model_accuracy, majority_accuracy)


def empirical_accuracy(labels: list[tuple[int, str, object]], truth: dict[int, object], annotator: str) -> float:
    own = [value == truth[item] for item, who, value in labels if who == annotator]
    return sum(own) / len(own)


def test_few_gold_items_recover_annotator_quality():
    panel = {"a": 0.95, "b": 0.85, "c": 0.75, "d": 0.65, "e": 0.9}
    labels, truth = simulate_panel(panel, 2000, 3, seed=4)
    gold = {item: truth[item] for item in range(30)}
    model = fit_dawid_skene(labels, gold=gold)
    for name in panel:
        estimate = model.annotator(name)
        assert abs(estimate.accuracy - empirical_accuracy(labels, truth, name)) < 0.03, (name, estimate.accuracy)
        assert estimate.accuracy_sd < 0.02
    for item, value in gold.items():
        posterior = model.item(item)
        assert posterior.gold and posterior.label == value and posterior.confidence == 1.0


def test_bootstrap_shows_the_spread_that_fixed_posteriors_hide():
    # Four annotators, two labels per item: the likelihood is flat along "a better, b worse" and the estimates
    # move more between samples than the Dirichlet standard deviations, which hold the item posteriors fixed, say.
    panel = {"a": 0.95, "b": 0.8, "c": 0.7, "d": 0.6}
    labels, _ = simulate_panel(panel, 1500, 2, seed=12)
    model = fit_dawid_skene(labels)
    intervals = bootstrap_annotators(labels, resamples=40, seed=1)
    assert set(intervals) == set(panel)
    for name in panel:
        interval = intervals[name]
        low, high = interval.accuracy
        assert interval.resamples == 40
        assert low <= model.annotator(name).accuracy <= high
        assert high - low > 2 * 1.96 * model.annotator(name).accuracy_sd
        cell_low, cell_high = interval.confusion[True][True]
        assert 0 < cell_low < cell_high < 1
    assert bootstrap_annotators(labels, resamples=3, seed=2) == bootstrap_annotators(labels, resamples=3, seed=2)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_annotators(labels, resamples=0)


def test_gold_anchor_resolves_label_switching_when_every_annotator_is_adversarial():
    panel = {"a": 0.1, "b": 0.15, "c": 0.1, "d": 0.2, "e": 0.1}
    labels, truth = simulate_panel(panel, 1000, 3, seed=5)
    # Without gold the mirror image (everyone right, every item flipped) fits the labels just as well, and the
    # prior prefers annotators better than chance: the model is confidently wrong.
    unanchored = fit_dawid_skene(labels)
    assert accuracy_of(unanchored.map_labels(), truth) < 0.1
    assert unanchored.annotator("a").accuracy > 0.85
    # Twenty gold items are enough to find the right reading.
    gold = {item: truth[item] for item in range(20)}
    anchored = fit_dawid_skene(labels, gold=gold)
    assert anchored.convergence.start == "gold"
    inverted_majority = {item: not value for item, value in majority_vote(labels).items()}
    assert accuracy_of(anchored.map_labels(), truth) >= accuracy_of(inverted_majority, truth) - 0.01 > 0.9
    for name, accuracy in panel.items():
        assert abs(anchored.annotator(name).accuracy - accuracy) < 0.05


def test_smoothing_keeps_an_annotator_with_three_labels_uncertain():
    labels, truth = simulate_panel({"a": 0.95, "b": 0.95, "c": 0.95}, 200, 3, seed=6)
    items = [0, 1, 2]
    labels += [(item, "newcomer", truth[item]) for item in items]  # three right labels
    model = fit_dawid_skene(labels)
    newcomer = model.annotator("newcomer")
    assert newcomer.n_labels == 3
    assert 0.6 < newcomer.accuracy < 0.9
    assert newcomer.accuracy_sd > 0.1
    for row in newcomer.confusion.values():
        assert all(0.05 < p < 0.95 for p in row.values())
    assert all(sd > 0.05 for row in newcomer.confusion_sd.values() for sd in row.values())
    # Its label alone is weaker evidence than one from an established annotator.
    assert model.item_posterior([("newcomer", True)]).confidence < model.item_posterior([("a", True)]).confidence


def test_confusion_uncertainty_shrinks_with_more_labels():
    small, _ = simulate_panel({"a": 0.9, "b": 0.9, "c": 0.9}, 60, 3, seed=7)
    large, _ = simulate_panel({"a": 0.9, "b": 0.9, "c": 0.9}, 1200, 3, seed=7)
    sd_small = fit_dawid_skene(small).annotator("a").confusion_sd[True][True]
    sd_large = fit_dawid_skene(large).annotator("a").confusion_sd[True][True]
    assert sd_large < sd_small / 3


def weak_setup():
    labels, truth = simulate_panel({"a": 0.9, "b": 0.9, "c": 0.85, "d": 0.85}, 400, 2, seed=8)
    split_item = 10_000
    agreed_item = 10_001
    labels += [(split_item, "a", True), (split_item, "b", False), (agreed_item, "a", True), (agreed_item, "b", True)]
    sources = {"rules": WeakSource.binary(tpr=0.95, tnr=0.95), "judge": WeakSource.symmetric(0.99, [False, True])}
    return labels, truth, split_item, agreed_item, sources


def test_weak_votes_shift_a_split_item_but_do_not_decide_it():
    labels, _, split_item, _, sources = weak_setup()
    weak = [(split_item, "rules", True), (split_item, "judge", True)]
    model = fit_dawid_skene(labels, weak_votes=weak, weak_sources=sources)
    without = model.item(split_item)
    shifted = model.item(split_item, with_weak=True)
    assert shifted.n_weak_votes == 2 and without.n_weak_votes == 0
    assert shifted.posterior[True] > without.posterior[True] + 0.1
    # Two strong verifiers together still move the odds by at most max_weak_odds = 3.
    odds_with = shifted.posterior[True] / shifted.posterior[False]
    odds_without = without.posterior[True] / without.posterior[False]
    odds_ratio = odds_with / odds_without
    assert odds_ratio == pytest.approx(3.0)
    assert shifted.confidence < 0.9


def test_weak_votes_alone_never_decide_an_item():
    labels, _, _, _, sources = weak_setup()
    only_weak = 20_000
    weak = [(only_weak, "rules", True)] * 5 + [(only_weak, "judge", True)] * 5
    model = fit_dawid_skene(labels, weak_votes=weak, weak_sources=sources)
    posterior = model.item(only_weak, with_weak=True)
    assert posterior.n_labels == 0
    prior_true = model.class_prior[True]
    capped = 3 * prior_true / (3 * prior_true + (1 - prior_true))
    assert posterior.posterior[True] == pytest.approx(capped)
    assert posterior.confidence < 0.8
    assert model.item(only_weak).posterior[True] == pytest.approx(prior_true)  # without weak votes: the prior


def test_weak_votes_cannot_overrule_agreeing_annotators_or_gold():
    labels, truth, _, agreed_item, sources = weak_setup()
    gold_item = 0
    weak = [(agreed_item, "rules", False), (agreed_item, "judge", False), (gold_item, "judge", not truth[gold_item])]
    model = fit_dawid_skene(labels, gold={gold_item: truth[gold_item]}, weak_votes=weak, weak_sources=sources)
    assert model.item(agreed_item, with_weak=True).label is True
    assert model.item(agreed_item, with_weak=True).confidence < model.item(agreed_item).confidence
    assert model.item(gold_item, with_weak=True).posterior == model.item(gold_item).posterior


def test_weak_votes_never_enter_the_fit():
    labels, truth, _, _, sources = weak_setup()
    weak = [(item, "judge", not value) for item, value in truth.items()]  # a verifier that is always wrong
    plain = fit_dawid_skene(labels)
    with_weak = fit_dawid_skene(labels, weak_votes=weak, weak_sources=sources)
    for name in ("a", "b", "c", "d"):
        np.testing.assert_allclose(with_weak.confusion_matrix(name), plain.confusion_matrix(name))
    np.testing.assert_allclose(with_weak.posterior_matrix(), plain.posterior_matrix())
    assert with_weak.convergence.log_objective == pytest.approx(plain.convergence.log_objective)


def test_weak_vote_errors():
    labels, _, split_item, _, sources = weak_setup()
    with pytest.raises(KeyError, match="unknown source"):
        fit_dawid_skene(labels, weak_votes=[(split_item, "oracle", True)], weak_sources=sources)
    with pytest.raises(ValueError, match="no confusion column"):
        fit_dawid_skene(labels, weak_votes=[(split_item, "rules", "maybe")], weak_sources=sources)
    with pytest.raises(ValueError, match="summing to 1"):
        fit_dawid_skene(
            labels,
            weak_votes=[(split_item, "bad", True)],
            weak_sources={"bad": WeakSource({True: {True: 0.9}, False: {False: 0.9, True: 0.1}})},
        )
    with pytest.raises(ValueError, match="never wrong"):
        WeakSource.binary(tpr=1.0, tnr=0.9)


def test_weak_source_may_give_values_that_are_not_classes():
    labels, _, split_item, _, _ = weak_setup()
    verifier = WeakSource(
        {True: {True: 0.8, False: 0.05, "inconclusive": 0.15}, False: {True: 0.1, False: 0.7, "inconclusive": 0.2}}
    )
    model = fit_dawid_skene(labels, weak_votes=[(split_item, "v", "inconclusive")], weak_sources={"v": verifier})
    shifted = model.item(split_item, with_weak=True)
    assert shifted.posterior[False] > model.item(split_item).posterior[False]  # inconclusive is likelier if False


def test_multi_class_answer_types_and_per_stratum_accuracy():
    classes = ("A", "B", "C", "unsuitable")
    rng = np.random.default_rng(9)
    n_items = 1500
    truth = {item: classes[int(rng.choice(4, p=[0.4, 0.3, 0.2, 0.1]))] for item in range(n_items)}
    strata = {item: "algebra" if item % 2 == 0 else "geometry" for item in range(n_items)}
    # "mixer" calls every B an A; "geometer" is careful on algebra and guesses on geometry.
    labels = []
    for item, true in truth.items():
        for name in ("a", "b", "c", "mixer", "geometer"):
            if rng.random() < 0.5:
                continue
            if name == "mixer":
                given = "A" if true == "B" else (true if rng.random() < 0.9 else classes[int(rng.integers(4))])
            elif name == "geometer" and strata[item] == "geometry":
                given = classes[int(rng.integers(4))]
            else:
                given = true if rng.random() < 0.9 else classes[int(rng.integers(4))]
            labels.append((item, name, given))
    gold = {item: truth[item] for item in range(40)}
    model = fit_dawid_skene(labels, classes=classes, gold=gold, strata=strata)
    assert model.classes == classes
    mixer = model.annotator("mixer")
    assert mixer.confusion["B"]["A"] > 0.85
    assert model.item_posterior([("mixer", "A")]).posterior["B"] > 0.2  # an A from the mixer may well be a B
    assert model.item_posterior([("mixer", "C")]).label == "C"
    labelled = {item for item, _, _ in labels}
    predicted = model.map_labels()
    assert accuracy_of(predicted, {item: truth[item] for item in labelled}) > 0.9
    geometer = model.annotator("geometer").by_stratum
    assert set(geometer) == {"algebra", "geometry"}
    assert geometer["algebra"].accuracy > 0.85
    assert geometer["geometry"].accuracy < 0.5
    assert geometer["algebra"].n_labels + geometer["geometry"].n_labels == model.annotator("geometer").n_labels
    assert 0 < geometer["geometry"].accuracy_sd < 0.1
    assert sum(model.class_prior.values()) == pytest.approx(1.0)
    assert model.class_prior["A"] > model.class_prior["unsuitable"]


def test_incremental_posterior_matches_the_fit():
    labels, _ = simulate_panel({"a": 0.9, "b": 0.8, "c": 0.7}, 300, 2, seed=10)
    model = fit_dawid_skene(labels)
    for item in (0, 1, 2, 3):
        own = [(annotator, value) for label_item, annotator, value in labels if label_item == item]
        fitted = model.item(item)
        incremental = model.item_posterior(own)
        assert incremental.n_labels == fitted.n_labels == 2
        for value, probability in fitted.posterior.items():
            assert incremental.posterior[value] == pytest.approx(probability, abs=1e-9)
    # Nothing known yet: the class prior; an unknown annotator counts with the prior confusion (2 to 1).
    assert model.item_posterior([]).posterior == pytest.approx(model.class_prior)
    stranger = model.item_posterior([("stranger", True)]).posterior[True]
    prior_odds = model.class_prior[True] / model.class_prior[False]
    assert stranger / (1 - stranger) == pytest.approx(prior_odds * 2)
    with pytest.raises(ValueError, match="not one of the classes"):
        model.item_posterior([("a", "maybe")])


def test_em_climbs_and_is_deterministic():
    labels, truth = simulate_panel({"a": 0.9, "b": 0.7, "c": 0.6, "d": 0.55}, 500, 2, seed=11)
    gold = {item: truth[item] for item in range(10)}
    first = fit_dawid_skene(labels, gold=gold)
    history = first.convergence.history
    assert all(later >= earlier - 1e-9 * abs(earlier) for earlier, later in zip(history, history[1:], strict=False))
    assert first.convergence.converged and first.convergence.iterations == len(history)
    assert first.convergence.log_likelihood < 0
    second = fit_dawid_skene(list(reversed(labels)), gold=gold)
    assert second.map_labels() == first.map_labels()
    np.testing.assert_allclose(second.confusion_matrix("b"), first.confusion_matrix("b"), atol=1e-6)
    capped = fit_dawid_skene(labels, gold=gold, max_iterations=2)
    assert capped.convergence.iterations == 2 and not capped.convergence.converged


def test_input_errors():
    with pytest.raises(ValueError, match="not one of the classes"):
        fit_dawid_skene([(1, "a", "x")], classes=["y", "z"])
    with pytest.raises(ValueError, match="at least two classes"):
        fit_dawid_skene([(1, "a", "x")])
    with pytest.raises(ValueError, match="triple"):
        fit_dawid_skene([(1, "a")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="nothing to fit"):
        fit_dawid_skene([], classes=[0, 1])
    with pytest.raises(ValueError, match="gold class"):
        fit_dawid_skene([(1, "a", 0)], classes=[0, 1], gold={1: 2})
    with pytest.raises(ValueError, match="positive"):
        fit_dawid_skene([(1, "a", 0)], classes=[0, 1], confusion_prior_wrong=0)


def test_gold_items_without_labels_and_string_item_ids():
    labels = [("q1", "ann", "yes"), ("q1", "bob", "yes"), ("q2", "ann", "no"), ("q2", "bob", "yes")]
    model = fit_dawid_skene(labels, gold={"q3": "no"})
    assert model.classes == ("no", "yes")
    assert model.item("q3").gold and model.item("q3").n_labels == 0 and model.item("q3").label == "no"
    assert set(model.item_ids) == {"q1", "q2", "q3"}
    assert model.posterior_matrix().shape == (3, 2)


label_triples = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(["u1", "u2", "u3", "u4"]), st.sampled_from([0, 1, 2])),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(labels=label_triples, weak_items=st.lists(st.integers(0, 8), max_size=6))
def test_posteriors_are_distributions(labels, weak_items):
    sources = {"v": WeakSource.symmetric(0.9, [0, 1, 2])}
    model = fit_dawid_skene(
        labels,
        classes=[0, 1, 2],
        gold={0: 1},
        weak_votes=[(item, "v", item % 3) for item in weak_items],
        weak_sources=sources,
    )
    for with_weak in (False, True):
        matrix = model.posterior_matrix(with_weak=with_weak)
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
        assert (matrix >= 0).all()
        for posterior in model.items(with_weak=with_weak).values():
            assert 1 / 3 - 1e-12 <= posterior.confidence <= 1.0
            assert posterior.posterior[posterior.label] == posterior.confidence
    for estimate in model.annotators().values():
        for row in estimate.confusion.values():
            assert math.isclose(sum(row.values()), 1.0)
        assert 0 < estimate.accuracy < 1 and estimate.accuracy_sd > 0 and estimate.weight >= 0


@settings(max_examples=40, deadline=None)
@given(labels=label_triples, permutation=st.permutations(["u1", "u2", "u3", "u4"]))
def test_relabelling_annotators_changes_nothing(labels, permutation):
    renamed = dict(zip(["u1", "u2", "u3", "u4"], [f"x-{name}" for name in permutation], strict=True))
    model = fit_dawid_skene(labels, classes=[0, 1, 2])
    relabelled = fit_dawid_skene([(item, renamed[who], value) for item, who, value in labels], classes=[0, 1, 2])
    for item in model.item_ids:
        assert relabelled.item(item).posterior == pytest.approx(model.item(item).posterior, abs=1e-9)
    for who in model.annotator_ids:
        np.testing.assert_allclose(relabelled.confusion_matrix(renamed[who]), model.confusion_matrix(who), atol=1e-9)


# ---------------------------------------------------------------------------------------------------------------
# Grader bias and noise (interval scores)
# ---------------------------------------------------------------------------------------------------------------


def simulate_grades(
    biases: list[float],
    sigmas: list[float],
    n_proofs: int,
    per_proof: int,
    *,
    seed: int,
) -> tuple[list[tuple[int, int, float]], np.ndarray]:
    """Grades score = truth + bias + N(0, sigma^2), each proof by `per_proof` graders drawn without replacement."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.5, 6.5, n_proofs)
    grades = []
    for proof in range(n_proofs):
        for grader in rng.choice(len(biases), size=per_proof, replace=False):
            grader = int(grader)
            score = truth[proof] + biases[grader] + sigmas[grader] * rng.standard_normal()
            grades.append((proof, grader, float(score)))
    return grades, truth


BIASES = [-1.0, -0.5, 0.0, 0.0, 0.5, 1.0]
SIGMAS = [0.3, 0.5, 0.8, 1.0, 1.2, 0.6]


def test_grader_model_recovers_known_biases_and_noise():
    grades, truth = simulate_grades(BIASES, SIGMAS, 600, 3, seed=20)
    model = fit_grader_model(grades, score_range=None)
    assert model.convergence.converged
    for grader, (bias, sigma) in enumerate(zip(BIASES, SIGMAS, strict=True)):
        estimate = model.grader(grader)
        assert abs(estimate.bias - bias) < 0.15, (grader, estimate)
        assert abs(estimate.sigma - sigma) < 0.12, (grader, estimate)
        assert abs(estimate.bias - bias) < 3.5 * estimate.bias_sd
        assert 0 < estimate.sigma_sd < 0.1
    estimates = np.array([model.proof(proof).mean for proof in range(len(truth))])
    sds = np.array([model.proof(proof).sd for proof in range(len(truth))])
    plain = np.zeros(len(truth))
    counts = np.zeros(len(truth))
    for proof, _, score in grades:
        plain[proof] += score
        counts[proof] += 1
    plain /= counts
    model_rmse = float(np.sqrt(np.mean((estimates - truth) ** 2)))
    plain_rmse = float(np.sqrt(np.mean((plain - truth) ** 2)))
    assert model_rmse < 0.8 * plain_rmse, (model_rmse, plain_rmse)
    coverage = float(np.mean(np.abs(estimates - truth) < 1.96 * sds))
    assert 0.88 < coverage < 0.99


def test_gold_proofs_anchor_a_harsh_panel():
    harsh = [bias + 0.8 for bias in BIASES]  # every grader 0.8 points above the truth on average
    grades, truth = simulate_grades(harsh, SIGMAS, 600, 3, seed=21)
    # Without gold only relative harshness is visible: the biases are centred on 0 (the documented limit).
    unanchored = fit_grader_model(grades, score_range=None)
    assert abs(np.mean([e.bias for e in unanchored.graders().values()])) < 1e-6
    assert unanchored.truth_mean == pytest.approx(float(truth.mean()) + 0.8, abs=0.15)
    gold = {proof: float(truth[proof]) for proof in range(60)}
    anchored = fit_grader_model(grades, gold=gold, score_range=None)
    assert anchored.convergence.converged
    estimates = [anchored.grader(grader).bias for grader in range(len(harsh))]
    assert np.mean(estimates) == pytest.approx(0.8, abs=0.12)
    for estimate, bias in zip(estimates, harsh, strict=True):
        assert abs(estimate - bias) < 0.25
    assert anchored.proof(0).gold and anchored.proof(0).sd == 0 and anchored.proof(0).mean == pytest.approx(gold[0])


def test_two_grades_per_proof_shrink_a_grader_with_few_grades():
    grades, _ = simulate_grades([0.0] * 8, [0.7] * 8, 400, 2, seed=22)
    grades += [(proof, "rare", score + 1.5) for proof, grader, score in grades[:6:2]]  # three grades, 1.5 too high
    model = fit_grader_model(grades)
    rare = model.grader("rare")
    regular = model.grader(0)
    assert rare.n_grades == 3
    assert 0.3 < rare.bias < 1.2  # seen, but pulled towards 0 by the prior
    assert rare.bias_sd > 2 * regular.bias_sd
    assert rare.sigma_sd > regular.sigma_sd
    for grader in range(8):
        estimate = model.grader(grader)
        assert abs(estimate.bias) < 3 * estimate.bias_sd
        assert abs(estimate.sigma - 0.7) < 3 * estimate.sigma_sd
    assert all(math.isfinite(e.bias_sd) and math.isfinite(e.sigma) for e in model.graders().values())


def test_proof_posterior_matches_the_fit_and_clips_to_the_range():
    grades, _ = simulate_grades(BIASES, SIGMAS, 200, 3, seed=23)
    model = fit_grader_model(grades, score_range=None)
    for proof in (0, 1, 2):
        own = [(grader, score) for graded, grader, score in grades if graded == proof]
        fitted = model.proof(proof)
        incremental = model.proof_posterior(own)
        assert incremental.mean == pytest.approx(fitted.mean, abs=1e-9)
        assert incremental.sd == pytest.approx(fitted.sd, abs=1e-9)
        assert incremental.n_grades == fitted.n_grades == 3
    nothing = model.proof_posterior([])
    assert nothing.mean == pytest.approx(model.truth_mean) and nothing.sd == pytest.approx(model.truth_sd)
    # An unknown grader counts as unbiased with the pooled noise.
    stranger = model.proof_posterior([("stranger", 5.0)])
    weight = model.truth_sd**2 / (model.truth_sd**2 + model.pooled_noise_sd**2)
    assert stranger.mean == pytest.approx(model.truth_mean + weight * (5.0 - model.truth_mean))
    bounded = fit_grader_model(grades, score_range=(0.0, 7.0))
    assert bounded.proof_posterior([(0, 7.0), (2, 7.0), (4, 7.0)] * 3).mean <= 7.0
    assert bounded.proof_posterior([(5, 0.0)] * 4).mean >= 0.0


def test_grader_em_climbs_and_is_deterministic():
    grades, truth = simulate_grades(BIASES, SIGMAS, 300, 2, seed=24)
    gold = {proof: float(truth[proof]) for proof in range(10)}
    model = fit_grader_model(grades, gold=gold)
    history = model.convergence.history
    assert all(later >= earlier - 1e-9 * abs(earlier) for earlier, later in zip(history, history[1:], strict=False))
    again = fit_grader_model(list(grades), gold=gold)
    assert again.graders() == model.graders()
    with pytest.raises(ValueError, match="finite"):
        fit_grader_model([(1, "g", float("nan"))])
    with pytest.raises(ValueError, match="no grades"):
        fit_grader_model([])


@settings(max_examples=40, deadline=None)
@given(
    grades=st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from(["g1", "g2", "g3"]), st.sampled_from([0, 0.5, 1, 3, 5.5, 7])),
        min_size=1,
        max_size=30,
    )
)
def test_grader_model_outputs_are_in_range(grades):
    model = fit_grader_model(grades)
    for estimate in model.proofs().values():
        assert 0.0 <= estimate.mean <= 7.0 and estimate.sd > 0
    for estimate in model.graders().values():
        assert estimate.sigma >= 0.1 - 1e-12 and estimate.bias_sd > 0 and math.isfinite(estimate.bias)
