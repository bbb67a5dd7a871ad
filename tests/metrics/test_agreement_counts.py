"""The count-based agreement functions used on large projects equal the table-based ones."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from core.metrics import agreement

NOMINAL = st.sampled_from([True, False, "__unsuitable__"])
INTERVAL = st.sampled_from([0, 1, 2, 3.5, 5, 7])


def labels_strategy(values):
    rater_ids = st.integers(min_value=0, max_value=5)
    unit = st.dictionaries(rater_ids, values, min_size=1, max_size=4)
    return st.dictionaries(st.integers(min_value=0, max_value=40), unit, min_size=1, max_size=25)


def close(a, b):
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9)


@settings(max_examples=150, deadline=None)
@given(labels=labels_strategy(NOMINAL))
def test_nominal_alpha_from_counts_equals_alpha_from_table(labels):
    counts = [Counter(by_rater.values()) for by_rater in labels.values()]
    assert close(agreement.alpha_from_value_counts(counts, "nominal"), agreement.alpha_from_labels(labels, "nominal"))


@settings(max_examples=150, deadline=None)
@given(labels=labels_strategy(INTERVAL))
def test_interval_alpha_from_counts_equals_alpha_from_table(labels):
    counts = [Counter(by_rater.values()) for by_rater in labels.values()]
    assert close(agreement.alpha_from_value_counts(counts, "interval"), agreement.alpha_from_labels(labels, "interval"))


@settings(max_examples=150, deadline=None)
@given(pairs=st.lists(st.tuples(NOMINAL, NOMINAL), max_size=40))
def test_kappa_from_pair_counts_equals_kappa_from_lists(pairs):
    expected = agreement.cohens_kappa([a for a, _ in pairs], [b for _, b in pairs]) if pairs else None
    assert close(agreement.kappa_from_pair_counts(Counter(pairs)), expected)


def test_known_value():
    # Two raters, four items: agree on 3 (c, c, i) and split on one.
    counts = [Counter({True: 2}), Counter({True: 2}), Counter({False: 2}), Counter({True: 1, False: 1})]
    pairs = Counter({(True, True): 2, (False, False): 1, (True, False): 1})
    assert abs(agreement.kappa_from_pair_counts(pairs) - 0.5) < 1e-12
    assert abs(agreement.alpha_from_value_counts(counts) - 0.5333333333333333) < 1e-9
