import threading

import pytest

from grading.answercheck import BatchItem, CheckResult, verify, verify_batch
from grading.answercheck.deadline import DeadlineExceeded, run_with_deadline
from grading.answercheck.detect import detect_answer_type

CASES = [
    # A1 integers
    ("A1", "42", r"\boxed{42}", True),
    ("A1", "42", r"\boxed{43}", False),
    ("A1", "42", r"\boxed{-42}", False),
    ("A1", "1275", r"\boxed{1,275}", True),
    ("A1", "12", r"\boxed{12 \text{ edges}}", True),
    ("A1", "3", r"\boxed{2.99}", False),
    # A2 constants
    ("A2", r"2\pi", r"\boxed{2\pi}", True),
    ("A2", r"2\pi", r"\boxed{6.28}", True),
    ("A2", r"2\pi", r"\boxed{\pi}", False),
    ("A2", "e-1", r"\boxed{1.718}", True),
    ("A2", "e-1", r"\boxed{e+1}", False),
    # A3 fractions, decimals, proportions
    ("A3", r"\frac{1}{3}", r"\boxed{0.333}", True),
    ("A3", r"\frac{1}{3}", r"\boxed{0.34}", False),
    ("A3", r"\frac{7}{8}", r"\boxed{0.88}", True),
    ("A3", r"\frac{7}{8}", r"\boxed{0.87}", False),
    ("A3", "2:3", r"\boxed{2:3}", True),
    ("A3", "2:3", r"\boxed{3:2}", False),
    ("A3", "0.75", r"\boxed{x=\frac34}", True),
    ("A3", "0.5", r"\boxed{0.54}", False),
    # A4 radicals
    ("A4", r"\frac{\sqrt{3}}{2}", r"\boxed{\frac{3}{2\sqrt3}}", True),
    ("A4", r"\frac{\sqrt{3}}{2}", r"\boxed{\frac{\sqrt2}{2}}", False),
    ("A4", r"5\sqrt{2}", r"\boxed{\sqrt{50}}", True),
    ("A4", r"1+\sqrt{2}", r"\boxed{1-\sqrt{2}}", False),
    # A5 complex numbers
    ("A5", "3+4i", r"\boxed{4i+3}", True),
    ("A5", "3+4i", r"\boxed{3-4i}", False),
    ("A5", "-i", r"\boxed{-i}", True),
    ("A5", "-i", r"\boxed{i}", False),
    # A6 angles
    ("A6", r"120^\circ", r"\boxed{\frac{2\pi}{3}}", True),
    ("A6", r"120^\circ", r"\boxed{120}", True),
    ("A6", r"120^\circ", r"\boxed{60^\circ}", False),
    ("A6", r"\frac{\pi}{6}", r"\boxed{30^\circ}", True),
    ("A6", r"\frac{\pi}{6}", r"\boxed{\frac{\pi}{3}}", False),
    # A7 other bases
    ("A7", "1234_8", r"\boxed{1234_{8}}", True),
    ("A7", "1234_8", r"\boxed{1234}", True),
    ("A7", "1234_8", r"\boxed{1243_8}", False),
    ("A7", "44_7", r"\boxed{32_{10}}", False),
    # A8 several values, any order
    ("A8", "1, -2", r"\boxed{-2, 1}", True),
    ("A8", "1, -2", r"\boxed{x=1 \text{ or } x=-2}", True),
    ("A8", "1, -2", r"\boxed{1 \text{ and } -2}", True),
    ("A8", "1, -2", r"\boxed{1}", False),
    ("A8", "1, -2", r"\boxed{-1, 2}", False),
    ("A8", "3, -3", r"\boxed{\pm 3}", True),
    # B1 expressions
    ("B1", "x^2+2x+1", r"\boxed{(x+1)^2}", True),
    ("B1", "x^2+2x+1", r"\boxed{(x-1)^2}", False),
    ("B1", "x^2 + C", r"\boxed{x^2 + 5 + C}", True),
    ("B1", "x^2 + C", r"\boxed{2x^2 + C}", False),
    ("B1", r"\frac{x-3}{2}", r"\boxed{f^{-1}(x)=\frac{x-3}{2}}", True),
    ("B1", "2a^2+ab", r"\boxed{2a^2+b}", False),
    # B2 equations
    ("B2", "y=2x+1", r"\boxed{2x - y + 1 = 0}", True),
    ("B2", "y=2x+1", r"\boxed{y = 2x - 1}", False),
    ("B2", "x+y+z=1", r"\boxed{2x+2y+2z=2}", True),
    ("B2", "x=2, y=1", r"\boxed{y=1, x=2}", True),
    ("B2", "x=2, y=1", r"\boxed{x=1, y=2}", False),
    ("B2", "x=2, y=1", r"\boxed{x=2}", False),
    # B3 intervals
    ("B3", "[1,2)", r"\boxed{[1,2)}", True),
    ("B3", "[1,2)", r"\boxed{(1,2)}", False),
    ("B3", r"(-2,2)", r"\boxed{-2 < x < 2}", True),
    ("B3", r"[1,\infty)", r"\boxed{[1,\infty]}", False),
    ("B3", r"(-\infty,-3)\cup(3,\infty)", r"\boxed{(3,\infty)\cup(-\infty,-3)}", True),
    ("B3", r"(-\infty,-3)\cup(3,\infty)", r"\boxed{(3,\infty)}", False),
    # B4 sets and tuples
    ("B4", r"\{1,2,3\}", r"\boxed{\{3,1,2\}}", True),
    ("B4", r"\{1,2,3\}", r"\boxed{\{1,2\}}", False),
    ("B4", "(1,2)", r"\boxed{(1,2)}", True),
    ("B4", "(1,2)", r"\boxed{(2,1)}", False),
    ("B4", "(1,2,3)", r"\boxed{(1,2)}", False),
    # B5 matrices and vectors
    ("B5", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\boxed{\begin{bmatrix}1 & 2\\ 3 & 4\end{bmatrix}}", True),
    ("B5", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\boxed{\begin{pmatrix}1&3\\2&4\end{pmatrix}}", False),
    ("B5", r"\begin{pmatrix}3\\-2\end{pmatrix}", r"\boxed{(3,-2)}", True),
    ("B5", r"\begin{pmatrix}3\\-2\end{pmatrix}", r"\boxed{(-3,2)}", False),
    # C1 single choice
    ("C1", "B", "The answer is (B).", True),
    ("C1", "B", "**Answer:** C", False),
    ("C1", "B", r"\boxed{\text{B}}", True),
    ("C1", "B", "Final answer: B. Paris", True),
    # C2 multiple choice
    ("C2", "A, C", r"\boxed{A and C}", True),
    ("C2", "A, C", r"\boxed{AC}", True),
    ("C2", "A, C", r"\boxed{A}", False),
    ("C2", "A, C", r"\boxed{A, B, C}", False),
    # C3 finite states
    ("C3", "True", "Final answer: True", True),
    ("C3", "True", "Final answer: Yes", True),
    ("C3", "Yes", "Final answer: No", False),
    ("C3", "valid", "Final answer: not valid", False),
    ("C3", "valid", "Final answer: The argument is valid", True),
    ("C3", "odd", "Final answer: even", False),
    # D1 specific wording
    ("D1", "photosynthesis", "Final answer: Photosynthesis.", True),
    ("D1", "photosynthesis", "Final answer: respiration", False),
    ("D1", "Pythagorean theorem", r"The answer is \text{the Pythagorean Theorem}.", True),
    # D2 semantic
    ("D2", "the sequence diverges", "Final answer: The sequence diverges.", True),
    ("D2", "they are parallel", "Final answer: perpendicular", False),
]


@pytest.mark.parametrize(("answer_type", "reference", "completion", "expected"), CASES)
def test_verify_by_type(answer_type, reference, completion, expected):
    verdict = verify(completion, reference, answer_type=answer_type)
    assert verdict.status == ("correct" if expected else "incorrect"), verdict.explanation
    assert verdict.answer_type_used == answer_type


def test_choice_by_option_text_uses_the_question():
    question = "What is the capital of France?\nA. Berlin\nB. Paris\nC. Rome"
    assert verify("The answer is Paris.", "B", answer_type="C1", question=question).status == "correct"
    assert verify("The answer is Rome.", "B", answer_type="C1", question=question).status == "incorrect"


def test_semantic_string_needing_judgment_is_inconclusive():
    verdict = verify("Final answer: it grows without bound", "the sequence diverges", answer_type="D2")
    assert verdict.status == "inconclusive"


def test_public_type_spelling_is_accepted():
    verdict = verify("Final answer: Yes", "True", answer_type="C4 - Finite state selection")
    assert verdict.answer_type_used == "C3"
    assert verdict.status == "correct"


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("42", "A1"),
        (r"2\pi", "A2"),
        (r"\frac{1}{2}", "A3"),
        (r"\sqrt{3}", "A4"),
        ("3+4i", "A5"),
        (r"120^\circ", "A6"),
        ("1234_8", "A7"),
        ("1, -2", "A8"),
        ("ax+b", "B1"),
        ("y=2x+1", "B2"),
        (r"(1,2) \cup (3,4)", "B3"),
        (r"\{1,2,3\}", "B4"),
        (r"\begin{pmatrix}1\\2\end{pmatrix}", "B5"),
        ("B", "C1"),
        ("A, C", "C2"),
        ("True", "C3"),
        ("photosynthesis", "D1"),
    ],
)
def test_detect_answer_type(reference, expected):
    assert detect_answer_type(reference) == expected


def test_reference_solution_uses_its_last_boxed_answer():
    solution = r"We find $a=2$ first, so the total is $\boxed{10}$."
    verdict = verify(r"\boxed{10}", solution, reference_is_solution=True)
    assert verdict.reference_answer == "10"
    assert verdict.status == "correct"


def test_missing_final_answer_is_inconclusive():
    verdict = verify("I could not finish the computation", "42", answer_type="A1")
    assert verdict.status == "inconclusive"
    assert verdict.extracted_answer is None


def test_verdict_explains_both_sides():
    verdict = verify(r"\boxed{0.333}", r"\frac13", answer_type="A3")
    assert isinstance(verdict, CheckResult)
    assert "0.333" in verdict.explanation and r"\frac13" in verdict.explanation
    assert verdict.predicted_correct is True


def test_pathological_power_ends_inconclusive():
    verdict = verify(r"\boxed{(x+1)^{100000}}", "x^2+1", answer_type="B1", timeout=2)
    assert verdict.status == "inconclusive"


def _spin_forever():
    while True:
        pass


def _double(value):
    return 2 * value


def test_deadline_interrupts_work_in_the_main_thread():
    with pytest.raises(DeadlineExceeded):
        run_with_deadline(_spin_forever, timeout=0.3)


def test_deadline_interrupts_work_in_another_thread():
    outcome = {}

    def worker():
        try:
            run_with_deadline(_spin_forever, timeout=0.5)
        except DeadlineExceeded:
            outcome["timed_out"] = True
        outcome["after"] = run_with_deadline(_double, 21, timeout=30)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(timeout=120)
    assert outcome == {"timed_out": True, "after": 42}


def test_verify_from_another_thread_gives_the_same_verdict():
    results = []
    thread = threading.Thread(
        target=lambda: results.append(verify(r"\boxed{4i+3}", "3+4i", answer_type="A5", timeout=60))
    )
    thread.start()
    thread.join(timeout=120)
    assert results and results[0].status == "correct"


def test_verify_batch_keeps_order_and_matches_verify():
    items = [
        BatchItem(completion=r"\boxed{42}", reference="42", answer_type="A1"),
        {"completion": r"\boxed{41}", "answer": "42", "answer_type": "A1"},
        BatchItem(completion=r"\boxed{42}", reference="42", answer_type="A1"),
        BatchItem(completion="no answer", reference="42", answer_type="A1"),
    ]
    statuses = [verdict.status for verdict in verify_batch(items)]
    assert statuses == ["correct", "incorrect", "correct", "inconclusive"]


def test_verify_batch_with_worker_processes():
    items = [BatchItem(completion=rf"\boxed{{{n % 7}}}", reference=str(n % 5), answer_type="A1") for n in range(60)]
    verdicts = verify_batch(items, workers=2, chunk_size=10)
    expected = ["correct" if n % 7 == n % 5 else "incorrect" for n in range(60)]
    assert [verdict.status for verdict in verdicts] == expected


@pytest.fixture
def readings(monkeypatch) -> list:
    """The items the batch verifier reads (extracts answers from), in order, starting from an empty memo."""
    from grading.answercheck import batch

    calls = []
    original = batch._prepare

    def counting(item):
        calls.append(item)
        return original(item)

    monkeypatch.setattr(batch, "_prepare", counting)
    monkeypatch.setattr(batch, "_READ", {})
    return calls


def test_identical_rows_in_a_batch_are_read_once_and_answered_in_order(readings):
    calls = readings
    right = BatchItem("The answer is $\\boxed{4}$.", "4")
    wrong = BatchItem("The answer is $\\boxed{5}$.", "4")
    verdicts = verify_batch([right, wrong, right, right, wrong], timeout=5.0)
    assert [verdict.status for verdict in verdicts] == ["correct", "incorrect", "correct", "correct", "incorrect"]
    assert len(calls) == 2


def test_an_item_read_in_an_earlier_batch_is_not_read_again_unless_its_reading_timed_out(readings, monkeypatch):
    from grading.answercheck import batch

    calls = readings
    right = BatchItem("So $\\boxed{4}$.", "4")
    assert [v.status for v in verify_batch([right])] == ["correct"]
    # the same completion against another reference, or as a different type, is another item
    assert [v.status for v in verify_batch([right, BatchItem("So $\\boxed{4}$.", "5")])] == ["correct", "incorrect"]
    assert calls == [right, BatchItem("So $\\boxed{4}$.", "5")]

    calls.clear()
    slow = BatchItem("So $\\boxed{7}$.", "7")

    def timing_out(item, *, timeout):
        raise batch.DeadlineExceeded

    monkeypatch.setattr(batch, "run_with_deadline", lambda function, item, timeout: timing_out(item, timeout=timeout))
    assert verify_batch([slow])[0].status == "inconclusive"
    monkeypatch.setattr(batch, "run_with_deadline", lambda function, item, timeout: function(item))
    assert verify_batch([slow])[0].status == "correct"
