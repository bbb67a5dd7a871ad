"""General rules for wordings and notations: one group per class of answer the verifier used to miss."""

import pytest

from grading.answercheck import verify


def status(completion, reference, answer_type=None, question=None):
    return verify(completion, reference, answer_type=answer_type, question=question).status


# Word answers: hyphenated modifiers, Roman numerals, framing subjects and verbs.
@pytest.mark.parametrize(
    ("completion", "reference", "answer_type", "expected"),
    [
        ("\\boxed{\\text{anti-symmetric}}", "\\boxed{\\text{symmetric}}", "D1", "incorrect"),
        ("\\boxed{\\text{non-linear}}", "\\boxed{\\text{linear}}", "D1", "incorrect"),
        ("\\boxed{\\text{a linear map}}", "\\boxed{\\text{linear}}", "D1", "correct"),
        ("\\boxed{\\text{Stage 2 cancer}}", "\\boxed{\\text{Stage II cancer}}", "D1", "correct"),
        ("\\boxed{\\text{Stage 3 cancer}}", "\\boxed{\\text{Stage II cancer}}", "D1", "incorrect"),
        ("\\boxed{\\text{parallel}}", "They are parallel.", "D2", "correct"),
        ("\\boxed{\\text{They are parallel}}", "It is parallel.", "D2", "correct"),
        ("\\boxed{\\text{not parallel}}", "They are parallel.", "D2", "inconclusive"),
    ],
)
def test_word_answers(completion, reference, answer_type, expected):
    assert status(completion, reference, answer_type) == expected
