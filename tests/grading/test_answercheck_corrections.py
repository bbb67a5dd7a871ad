"""Self-corrections, hedges, option labels, units, rounding, exact integers and percent, state
sentences and lists on lines: the classes of failure found on the VerifyBench-style held-out sets."""

import pytest

from grading.answercheck import verify
from grading.answercheck.core import reference_final_answer


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


# A later statement takes back an earlier box.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        (
            "First try: $\\boxed{48}$.\n\nHmm, wait. I counted one case twice. Redoing it: the answer is 42.",
            "42",
            "correct",
        ),
        (
            "First try: $\\boxed{42}$.\n\nHmm, wait. I counted one case twice. Redoing it: the answer is 48.",
            "42",
            "incorrect",
        ),
        ("So $\\boxed{-3}$.\n\nWait, the sign is off. Let me redo it.\n\nSo $x = 3$.", "3", "correct"),
        (
            "A first pass gives $\\boxed{B}$.\n\nActually, that misreads option B. Re-checking, it is Option C",
            "C",
            "correct",
        ),
        # A box confirmed by a later check stays the answer.
        ("So the answer is $\\boxed{42}$.\n\nLet me double-check: $6 \\cdot 7 = 42$, so it holds.", "42", "correct"),
    ],
)
def test_a_correction_after_the_last_box_gives_the_answer(completion, reference, expected):
    assert (
        status(
            completion,
            reference,
            "C1" if reference == "C" else None,
            "Pick one: (A) 1 (B) 2 (C) 3 (D) 4" if reference == "C" else None,
        )
        == expected
    )


# A guess between candidates is never a decided verdict, whichever comes last.
@pytest.mark.parametrize(
    "completion",
    [
        "The answer is probably $7$, though it could also be $12$.",
        "The answer is probably $12$, though it could also be $7$.",
        "I am not sure whether it is $7$ or $12$.",
        "It is either $7$ or $12$.",
        "Maybe the answer is $\\boxed{12}$.",
    ],
)
def test_hedged_answers_are_inconclusive(completion):
    assert status(completion, "12") == "inconclusive"


def test_inequalities_joined_by_or_are_a_union_not_a_guess():
    assert status("Hence $x<-1$ or $x\\geq 4$.", "(-\\infty,-1)\\cup[4,\\infty)", "B3") == "correct"
    assert status("Hence $x<-1$ or $x\\geq 5$.", "(-\\infty,-1)\\cup[4,\\infty)", "B3") == "incorrect"


# References that are a sentence or a short worked solution ending in the answer.
@pytest.mark.parametrize(
    ("reference", "answer_type", "expected"),
    [
        ("Squaring both sides gives $x^2 = 9$.\n\nThe answer is 3.", "A1", "3"),
        ("Since $6^2 = 36 < 40 < 49 = 7^2$, the largest such $n$ is $6$.", "A1", "6"),
        ("It takes $3 \\cdot 4 = 12$ steps. The answer is 12:00.", "A3", "12:00"),
        ("The series diverges.", "D2", "The series diverges."),
    ],
)
def test_short_solution_references(reference, answer_type, expected):
    assert reference_final_answer(reference, reference_is_solution=False, answer_type=answer_type) == expected


# Option letters written with their value, on either side, in questions typed as numeric.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The answer is (C).", "The count is $4 \\cdot 3 = 12$, so the final answer is (C) 12.", "correct"),
        ("$\\boxed{12}$", "The count is $4 \\cdot 3 = 12$, so the final answer is (C) 12.", "correct"),
        ("The answer is (D).", "The count is $4 \\cdot 3 = 12$, so the final answer is (C) 12.", "incorrect"),
        ("Answer: (B) 720", "720", "correct"),
        ("Answer: (C) 900", "720", "incorrect"),
    ],
)
def test_option_letters_with_values(completion, reference, expected):
    assert status(completion, reference, "A1 - Integer") == expected


def test_an_option_named_with_its_value_in_words():
    question = "What is the remainder of $2^{100}$ modulo $7$? Options: A. 1  B. 2  C. 4  D. 6"
    assert status("Option B (the remainder is 2).", "B", "A1 - Integer", question) == "correct"
    assert status("Option C (the remainder is 4).", "B", "A1 - Integer", question) == "incorrect"


# Exact integers, percent on both sides, coarse rounding, units.
@pytest.mark.parametrize(
    ("completion", "reference", "question", "expected"),
    [
        ("$\\boxed{11{,}111{,}111{,}110}$", "11111111100", None, "incorrect"),
        ("$\\boxed{11{,}111{,}111{,}100}$", "11111111100", None, "correct"),
        ("$\\boxed{1\\%}$", "100\\%", None, "incorrect"),
        ("$\\boxed{100\\%}$", "100\\%", None, "correct"),
        ("$\\boxed{28}$", "28\\%", None, "correct"),
        ("$\\boxed{1.41}$", "1.414", "Give $\\sqrt2$ rounded to three decimal places.", "incorrect"),
        ("$\\boxed{1.414}$", "1.414", "Give $\\sqrt2$ rounded to three decimal places.", "correct"),
        ("$\\boxed{60\\text{ m/s}}$", "60", "What is its average speed in km/h?", "inconclusive"),
        ("$\\boxed{60\\text{ km/h}}$", "60", "What is its average speed in km/h?", "correct"),
        ("The total is $\\$16\\,403.50$.", "16403.5", None, "correct"),
        ("The sum is $\\frac{100\\cdot 101}{2} = 5050$.", "5050", None, "correct"),
        ("It will show 12:00.", "12:00", None, "correct"),
        ("It will show 11:00.", "12:00", None, "incorrect"),
    ],
)
def test_numbers_units_and_rounding(completion, reference, question, expected):
    assert status(completion, reference, "A3 - Fraction/Float", question) == expected


# Proof outcomes and truth values, state sentences after remarks.
@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The claim is false; $n = 40$ is a counterexample.", "Disproved", "correct"),
        ("Hence the statement is true.\n\nI hope this helps.", "Proved", "correct"),
        ("Hence the statement is true.", "Disproved", "incorrect"),
        ("Therefore it cannot be done: no such tour exists.\n\nThis agrees with the count above.", "No", "correct"),
        ("Therefore such a tour exists.", "No", "incorrect"),
    ],
)
def test_state_sentences(completion, reference, expected):
    assert status(completion, reference, "C4 - Finite state selection") == expected


def test_values_listed_one_per_line():
    listed = "Checking each candidate in turn.\n\nThe primes are:\n23\n29\n31\n37"
    assert status(listed, "23, 29, 31, 37", "A8") == "correct"
    assert status(listed.replace("37", "39"), "23, 29, 31, 37", "A8") == "incorrect"


def test_several_complex_values():
    assert status("$\\boxed{\\pm 2i}$", "2i, -2i", "A5") == "correct"
    assert status("$\\boxed{-2i, 2i}$", "2i, -2i", "A5") == "correct"
    assert status("$\\boxed{2i}$", "2i, -2i", "A5") == "incorrect"


def test_a_small_difference_next_to_a_huge_value_is_not_hidden_by_the_tolerance():
    assert status("$\\boxed{(x+y+z+w)^{60}}$", "(x+y+z+w)^{60}+1", "B1") == "incorrect"
    assert status("$\\boxed{(x+y+z+w)^{60}}$", "(w+x+y+z)^{60}", "B1") == "correct"
