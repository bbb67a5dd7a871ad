"""Answers and references that show their working: chains of equalities and equivalences, a
conclusion after "so", lists of assigned values, and an approximation beside the exact value."""

import pytest

from grading.answercheck import verify

REASONING = "Let me work through this step by step.\n\nThe setup gives the key relation, and simplifying it carefully leads to the result.\n\n"


def status(completion, reference, answer_type, question=None):
    return verify(REASONING + completion, reference, answer_type=answer_type, question=question).status


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        # A reference that shows its computation states the value it ends in.
        ("The answer is $720$.", "6! = 720", "A1 - Integer", "correct"),
        ("The answer is $721$.", "6! = 720", "A1 - Integer", "incorrect"),
        ("The answer is $18$.", "\\operatorname{lcm}(6, 9) = 18", "A1 - Integer", "correct"),
        ("The answer is $\\boxed{55}$.", "\\frac{10\\cdot 11}{2} = 55", "A1 - Integer", "correct"),
        ("The answer is $\\boxed{110}$.", "\\frac{10\\cdot 11}{2} = 55", "A1 - Integer", "incorrect"),
        ("The answer is $\\boxed{7 + 8 = 15}$.", "= 3\\cdot 5 = 15", "A1 - Integer", "correct"),
        ("So the result is $= 2\\pi$.", "2\\pi", "A2 - Constant", "correct"),
        ("The angle is $\\boxed{\\frac{360^\\circ}{6} = 60^\\circ}$.", "60^\\circ", "A6 - Angle", "correct"),
        (
            "The angle is $\\boxed{30\\cdot\\frac{\\pi}{180} = \\frac{\\pi}{6}}$.",
            "\\frac{\\pi}{6}",
            "A6 - Angle",
            "correct",
        ),
        ("In binary: $\\boxed{13_{10} = 1101_2}$.", "1101_2", "A7 - Non-decimal number", "correct"),
        ("In binary: $\\boxed{13_{10} = 1011_2}$.", "1101_2", "A7 - Non-decimal number", "incorrect"),
        (
            "So $\\boxed{\\mathbf a + \\mathbf b = (1+2, 3-1) = (3, 2)}$.",
            "\\begin{pmatrix}3\\\\2\\end{pmatrix}",
            "B5 - Matrix/Vector",
            "correct",
        ),
        # An identity: its last side is the simplified expression.
        ("So the sum is $\\boxed{k^2 + k}$.", "\\frac{2k(k+1)}{2} = k^2 + k", "B1 - Algebraic expression", "correct"),
        ("So the sum is $\\boxed{k^2 - k}$.", "\\frac{2k(k+1)}{2} = k^2 + k", "B1 - Algebraic expression", "incorrect"),
        # An equation is not an identity: its constant side is not the answer.
        ("So the result is $\\boxed{0}$.", "x^2 - 4x + 4 = 0", "B1 - Algebraic expression", "inconclusive"),
    ],
)
def test_a_chain_of_equalities_states_its_last_side(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected


def test_several_statements_are_not_one_chain():
    assert status("The roots are $\\boxed{z = 2 + i,\\ z = 2 - i}$.", "2 \\pm i", "A5 - Complex Number") == "correct"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("Hence $\\boxed{x^2 < 9 \\iff -3 < x < 3}$.", "(-3, 3)", "correct"),
        ("Hence $\\boxed{x^2 < 9 \\iff -3 < x < 4}$.", "(-3, 3)", "incorrect"),
        ("Hence $\\boxed{x - 1 > 0 \\Rightarrow x > 1}$.", "(1, \\infty)", "correct"),
    ],
)
def test_a_chain_of_equivalences_states_its_conclusion(completion, reference, expected):
    assert status(completion, reference, "B3 - Interval") == expected


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("$x = 7/2 \\approx 3.5$.", "3.5", "correct"),
        ("$\\sqrt{3} \\approx 1.732$.", "\\sqrt{3}", "correct"),
        # The exact form matches but the stated decimal is not a rounding of it.
        ("$x = 2.6/0.8 \\approx 3.2$.", "3.25", "inconclusive"),
        ("$x = 7/2 \\approx 3.8$.", "3.5", "inconclusive"),
    ],
)
def test_an_approximation_must_agree_with_the_exact_form_beside_it(completion, reference, expected):
    assert status(completion, reference, "A3 - Fraction/Float") == expected


@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        # What follows "so" concludes the sentence, past values named before it.
        (
            "The base angle is $\\pi/6$, so $\\theta = \\pi - \\frac{\\pi}{6} = \\frac{5\\pi}{6}$.",
            "\\frac{5\\pi}{6}",
            "A6 - Angle",
            "correct",
        ),
        (
            "The base angle is $\\pi/6$, so $\\theta = \\pi - \\frac{\\pi}{6} = \\frac{5\\pi}{6}$.",
            "\\frac{\\pi}{6}",
            "A6 - Angle",
            "incorrect",
        ),
        ("We first get $J^2 = 9$, so $J = 3$.", "3", "A1 - Integer", "correct"),
        ("The shared members are 2 and 5, so $P\\cap Q = \\{2, 5\\}$.", "\\{2,5\\}", "B4 - Set", "correct"),
        # A name alone after "so" is not a conclusion: the value before it stays the answer.
        ("The count is $12$, so $n$ divides it.", "12", "A1 - Integer", "correct"),
        # A list of values closed by an equation: the equation states the result.
        ("So the digits are 1, 0, 1 and $5_{10} = 101_2$.", "101_2", "A7 - Non-decimal number", "correct"),
        # "is $3$: $y = 3x$": the colon introduces the full answer.
        ("The slope is $3$: $y = 3x$.", "y = 3x", "B2 - Equation", "correct"),
        ("The ratio is 2 : 7.", "2:7", "A3 - Fraction/Float", "correct"),
    ],
)
def test_the_conclusion_of_a_last_sentence_is_its_answer(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("So the solutions are $x=-4$, $x=0$, and $x=5$.", "x = -4, 0, 5", "correct"),
        ("So the solutions are $x=-4$, $x=0$, and $x=6$.", "x = -4, 0, 5", "incorrect"),
    ],
)
def test_a_list_of_three_or_more_values_after_the_verb_is_read_whole(completion, reference, expected):
    assert status(completion, reference, "A8 - Multiple Values") == expected


def test_a_set_named_by_a_set_operation_is_a_label():
    assert status("The answer is $\\{2, 3\\}$.", "P \\cup Q = \\{2,3\\}", "B4 - Set") == "correct"
    assert status("The answer is $\\{2, 4\\}$.", "P \\cup Q = \\{2,3\\}", "B4 - Set") == "incorrect"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The total comes to fourteen thousand two hundred six apples.", "14206", "correct"),
        ("The total comes to fourteen thousand two hundred seven apples.", "14206", "incorrect"),
        ("Counting the corners gives eight.", "8", "correct"),
        ("After $5$ steps the remainder is three.", "3", "correct"),
        ("The smallest value is forty-two dollars.", "k = 42", "correct"),
        ("nineteen", "19", "correct"),
        # Words that are no number, and a lone "one" (a pronoun as often as a number), state nothing.
        ("We keep the larger one.", "1", "inconclusive"),
    ],
)
def test_a_number_written_in_words_is_the_answer(completion, reference, expected):
    assert status(completion, reference, "A1 - Integer") == expected


def test_number_words_are_read_only_as_a_well_formed_number():
    from grading.answercheck.number_words import number_from_words, value_of_number_words

    assert value_of_number_words("three hundred and twelve") == 312
    assert value_of_number_words("two million forty thousand") == 2_040_000
    assert value_of_number_words("two three") is None
    assert value_of_number_words("forty fifty") is None
    assert number_from_words("sixty-one cm") == "61"
    assert number_from_words("sixty-one is the answer we want here") is None


@pytest.mark.parametrize(
    ("reference", "completion", "expected"),
    [
        ("$9 \\cdot 4 = 36$ square metres.\n\n**Answer:** $36$", "So the area is $36$.", "correct"),
        ("$9 \\cdot 4 = 36$ square metres.\n\n**Answer:** $36$", "So the area is $38$.", "incorrect"),
    ],
)
def test_a_reference_with_a_labelled_answer_states_that_answer(reference, completion, expected):
    assert status(completion, reference, "A1 - Integer") == expected


CHOICE_QUESTION = "Which number is the smallest?\n\n(A) $2^{10}$ (B) $10^{3}$ (C) $3^{6}$ (D) $5^{4}$"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        # A reply with no answer marker that ends in one option's value names that option.
        ("Comparing the powers one by one, the smallest is $5^{4}$.", "correct"),
        ("Comparing the powers one by one, the smallest is $3^{6}$.", "incorrect"),
        ("$5^4 = 625$", "inconclusive"),
        # A reply that names letters or guesses is not read through the values.
        ("Probably C, or maybe D. $5^{4}$.", "inconclusive"),
    ],
)
def test_a_single_choice_reply_may_state_the_value_of_an_option(completion, expected):
    assert verify(completion, "D", answer_type="C1 - Single Choice", question=CHOICE_QUESTION).status == expected


def test_a_computation_ending_in_an_option_value_names_that_option():
    question = "Compute $\\log_3 27$.\n\nA. 2  B. 3  C. 9  D. 27"
    assert verify("$\\log_3 27 = 3$", "B", answer_type="C1 - Single Choice", question=question).status == "correct"
    assert verify("$\\log_3 27 = 9$", "B", answer_type="C1 - Single Choice", question=question).status == "incorrect"


def test_a_worked_choice_reference_names_its_option_at_the_end():
    question = "If $g(x) = x^3$, then $g'(1) =$\n\n(A) $1$ (B) $2$ (C) $3$ (D) $4$"
    reference = "g'(x) = 3x^2, so g'(1) = 3, which is choice (C)."
    assert verify("\\boxed{C}", reference, answer_type="C1 - Single Choice", question=question).status == "correct"
    assert verify("\\boxed{A}", reference, answer_type="C1 - Single Choice", question=question).status == "incorrect"


@pytest.mark.parametrize(("completion", "expected"), [("BD", "correct"), ("BC", "incorrect"), ("DB", "inconclusive")])
def test_option_letters_run_together_are_a_multiple_choice_answer(completion, expected):
    question = "Which are even? Select all that apply.\n\n(A) $1$ (B) $2$ (C) $3$ (D) $4$"
    assert verify(completion, "B, D", answer_type="C2 - Multiple Choice", question=question).status == expected


def test_a_number_in_words_followed_by_a_fraction_or_sign_is_not_read_as_the_integer():
    assert status("The mean is $\\frac{9}{2}$, which is four and a half.", "4.5", "A3 - Fraction/Float") == "correct"
    assert status("So the change is minus four.", "4", "A1 - Integer") != "correct"


def test_a_value_set_in_bold_at_the_end_is_the_one_stated():
    assert status("Grouping by 5 gives 8 groups of 12, total $\\mathbf{96}$.", "96", "A1 - Integer") == "correct"
    assert status("Grouping by 5 gives 8 groups of 12, total $\\mathbf{95}$.", "96", "A1 - Integer") == "incorrect"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        # A sentence with no verb of being lists every value it names.
        ("Both $4$ and $-4$ work here.", "x = \\pm 4", "correct"),
        ("Both $4$ and $-3$ work here.", "x = \\pm 4", "incorrect"),
        # The solutions of one equation joined by "or" are a list, not a guess.
        ("Factoring, $(x-1)(x+5)=0$, so $x=1$ or $x=-5$.", "1, -5", "correct"),
        ("Factoring, $(x-1)(x+5)=0$, so $x=1$ or $x=5$.", "1, -5", "incorrect"),
        # Different unknowns joined by "or" remain a guess.
        ("So $x=1$ or $y=-5$.", "1, -5", "inconclusive"),
        ("The roots are $t=2$ and $t=7$.", "t = 2$ and $t = 7", "correct"),
    ],
)
def test_values_listed_together_are_one_multi_value_answer(completion, reference, expected):
    assert status(completion, reference, "A8 - Multiple Values") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [("The lines cross where $x=3$, $y=-1$.", "correct"), ("The lines cross where $x=-1$, $y=3$.", "incorrect")],
)
def test_coordinates_named_one_by_one_are_a_point(completion, expected):
    assert status(completion, "(3, -1)", "B5 - Matrix/Vector") == expected


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("$\\emptyset$", "the empty set", "correct"),
        ("We have $x^2 + 4 > 0$ for every real $x$, so the solution set is $\\varnothing$.", "\\emptyset", "correct"),
        ("The two lines are parallel, so they meet in the empty set.", "the empty set", "correct"),
        ("It is known as the incenter (where the angle bisectors meet).", "Incenter", "correct"),
        ("It is known as the circumcenter (where the perpendicular bisectors meet).", "Incenter", "inconclusive"),
        ("Its determinant is $b^2 - 4ac$, so it's a parabola.", "parabola", "correct"),
    ],
)
def test_a_word_answer_is_read_from_the_clause_that_concludes_it(completion, reference, expected):
    assert status(completion, reference, "D1 - Specific") == expected


def test_a_worked_word_reference_is_read_from_its_last_sentence_not_its_last_math():
    reference = (
        "If $p$ is prime the group has order $p - 1$. If $p$ is composite a factor divides both sides. "
        "Hence the statement holds exactly when $p$ is prime."
    )
    assert status("So it holds for every odd $p$.", reference, "D1 - Specific") != "correct"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        (
            "Its trace is $4$ and determinant $3$, both positive. So the matrix is invertible.",
            "The determinant is $3 \\ne 0$, so the matrix is invertible. **Yes.**",
            "correct",
        ),
        (
            "The partial sums grow like $\\ln n$, so the series diverges.",
            "Here $p = 1$, so the series diverges.",
            "correct",
        ),
        # Clauses that differ in wording are not called different unless one says yes and the other no.
        (
            "The partial sums stay below $2$, so the series converges.",
            "Here $p = 1$, so the series diverges.",
            "inconclusive",
        ),
    ],
)
def test_states_are_read_from_the_clauses_both_sides_conclude_with(completion, reference, expected):
    question = "Is the matrix $\\begin{pmatrix}2&1\\\\1&2\\end{pmatrix}$ invertible?"
    assert status(completion, reference, "C3 - Finite state selection", question) == expected


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The rank is $1$, so they are not linearly independent.", "No", "correct"),
        ("The rank is $2$, so they are linearly independent.", "No", "incorrect"),
        ("The rank is $2$, so they are linearly independent.", "Yes", "correct"),
    ],
)
def test_a_statement_restating_the_property_asked_about_answers_a_yes_no_question(completion, reference, expected):
    question = "Are the vectors $(1, 2)$ and $(2, 4)$ linearly independent?"
    assert status(completion, reference, "C3 - Finite state selection", question) == expected


def test_an_equation_after_so_is_not_read_as_a_list_with_the_one_before_it():
    completion = "The ratio is $2$, so $\\tan\\alpha = 1$ and $\\alpha = \\frac{\\pi}{4}$."
    assert status(completion, "\\frac{\\pi}{4}", "A6 - Angle") == "correct"


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("Every term is positive, so the series is absolutely convergent.", "converges absolutely", "correct"),
        ("The terms alternate, so the series converges but not absolutely.", "converges absolutely", "inconclusive"),
        (
            "By the ratio test the limit is $1/2$, so the series converges.",
            "It is a geometric series, so it converges.",
            "correct",
        ),
        (
            "The terms do not tend to $0$, so the series diverges.",
            "It is a geometric series, so it converges.",
            "inconclusive",
        ),
    ],
)
def test_a_short_state_is_stated_in_any_word_form_and_order(completion, reference, expected):
    assert status(completion, reference, "C3 - Finite state selection") == expected


def test_the_adjective_empty_names_the_empty_set():
    assert (
        status("No real number satisfies it, so the solution set is empty.", "\\varnothing", "D1 - Specific")
        == "correct"
    )


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The eigenvalues are $\\mu_1=2$, $\\mu_2=5$.", "\\mu = 2$ and $\\mu = 5", "correct"),
        ("The eigenvalues are $\\mu_1=2$, $\\mu_2=6$.", "\\mu = 2$ and $\\mu = 5", "incorrect"),
    ],
)
def test_a_greek_letter_names_a_value(completion, reference, expected):
    assert status(completion, reference, "A8 - Multiple Values") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("$P(n) = 50\\cdot 3^{n}$, $P(2) = 450$.", "correct"),
        ("$P(n) = 50\\cdot 3^{n}$, $P(2) = 150$.", "incorrect"),
    ],
)
def test_a_formula_followed_by_its_value_states_the_value(completion, expected):
    assert status(completion, "450", "A1 - Integer") == expected


@pytest.mark.parametrize(
    ("completion", "reference", "expected"),
    [
        ("The angle lies in the third quadrant.", "Quadrant III", "correct"),
        ("It is in the 3rd quadrant.", "Quadrant III", "correct"),
        ("It is in the fourth quadrant.", "Quadrant III", "inconclusive"),
        ("A Type 2 error.", "Type II error", "correct"),
    ],
)
def test_a_numbered_noun_reads_the_same_in_ordinals_numerals_and_roman_numerals(completion, reference, expected):
    assert status(completion, reference, "D1 - Specific") == expected


def test_a_reference_of_several_sentences_of_math_states_its_last_value():
    reference = "$\\sin x = 0$ iff $x = k\\pi$. In $[0, 2\\pi)$: $\\{0, \\pi\\}$."
    assert status("So $x \\in \\{0, \\pi\\}$.", reference, "B4 - Set") == "correct"
    assert status("So $x \\in \\{0, 2\\pi\\}$.", reference, "B4 - Set") == "incorrect"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("The asymptotes satisfy $x^2/9 = y^2/16$, so $4x - 3y = 0$ and $4x + 3y = 0$.", "correct"),
        ("The asymptotes satisfy $x^2/9 = y^2/16$, so $4x - 3y = 0$ and $4x + 5y = 0$.", "incorrect"),
        ("The slopes are $\\pm\\frac{4}{3}$, so $y = \\pm\\frac{4}{3}x$.", "correct"),
        ("So $y = \\frac{4}{3}x$.", "incorrect"),
    ],
)
def test_a_plus_minus_equation_stands_for_one_equation_of_each_sign(completion, expected):
    assert status(completion, "y = \\pm\\frac{4}{3}x", "B2 - Equation") == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("$\\Delta < 0$", "correct"),
        ("$\\Delta > 0$", "inconclusive"),
        ("The discriminant is below zero.", "inconclusive"),
    ],
)
def test_a_described_reference_is_answered_by_the_statement_after_its_colon(completion, expected):
    assert status(completion, "The discriminant is negative: \\Delta < 0", "D2 - Semantic") == expected
