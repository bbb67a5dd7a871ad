"""Inputs built to escape the verifier's time limit, shared by the tests and bench/verify_adversarial.py."""

from __future__ import annotations

_MATRIX = "\\\\".join("&".join(f"x_{{{row}{column}}}" for column in range(12)) for row in range(12))

# name -> (completion, reference)
ADVERSARIAL: dict[str, tuple[str, str]] = {
    "7000 unclosed boxes": ("\\boxed{" * 7000, "1"),
    "unclosed boxes after prose": ("Let me think. " * 200 + "\\boxed{\\frac{" * 3000, "1"),
    "huge binomial": ("\\boxed{\\binom{1000000}{500000}}", "1"),
    "huge binomial with choose": ("\\boxed{{1000000 \\choose 500000}}", "1"),
    "700 nested braces": ("\\boxed{" + "{" * 700 + "1" + "}" * 700 + "}", "1"),
    "deeply nested fractions": ("\\boxed{" + "\\frac{1}{" * 150 + "2" + "}" * 150 + "}", "1"),
    "deeply nested roots": ("\\boxed{" + "\\sqrt{" * 200 + "2" + "}" * 200 + "}", "1"),
    "2000 nested parentheses": ("\\boxed{" + "(" * 2000 + "1" + ")" * 2000 + "}", "1"),
    "huge factorial": ("\\boxed{100000!}", "1"),
    "factorial of a power": ("\\boxed{(10^{5})!}", "1"),
    "double factorial": ("\\boxed{(100000)!!}", "1"),
    "power tower": ("\\boxed{2^{2^{2^{2^{2^{2}}}}}}", "1"),
    "power of a power": ("\\boxed{(2^{100})^{(3^{100})}}", "1"),
    "exponent product": ("\\boxed{2^{1000 \\cdot 1000 \\cdot 1000}}", "1"),
    "gamma of a million": ("\\boxed{\\Gamma(10^{6})}", "1"),
    "sum to a billion": ("\\boxed{\\sum_{k=1}^{10^{9}} k}", "1"),
    "symbolic 12x12 determinant": (f"\\boxed{{\\det\\begin{{pmatrix}}{_MATRIX}\\end{{pmatrix}}}}", "1"),
    "two symbolic 12x12 determinants": (
        f"\\boxed{{\\det\\begin{{pmatrix}}{_MATRIX}\\end{{pmatrix}}}}",
        f"\\det\\begin{{pmatrix}}{_MATRIX.replace('x_{00}', 'y')}\\end{{pmatrix}}",
    ),
    "high power of a polynomial": ("\\boxed{(x+1)^{2000}}", "x^2+1"),
    "50k characters then a box": ("Let me think about this. " * 2000 + "\\boxed{5}", "5"),
    "50k characters, no marker": ("word 1.5, and $x$ then. " * 2100, "5"),
    "50k characters on one line with periods": ("The final answer is " + "1." * 25000, "1"),
    "50k dollar signs": ("$" * 50000, "1"),
    "5000 boxes": ("\\boxed{1} " * 5000, "1"),
    "10000 boxes without separators": ("\\boxed{7}" * 10000, "7"),
    "long reference": ("\\boxed{1}", "\\boxed{" * 5000),
    "self-corrections after 2000 boxes": ("\\boxed{3}. Wait, let me re-check. " * 2000 + "So the answer is 4.", "4"),
    "hedge words around 5000 candidates": ("It is probably $1$ or maybe $2$; " * 5000, "1"),
    "20000 lines of one-value list": ("The values are:\n" + "1\n" * 20000, "1, 1"),
}

# Texts for extraction alone, each long enough that a quadratic pass would show.
EXTRACTION_TEXTS: dict[str, str] = {
    "20000 unclosed boxes": "\\boxed{" * 20000,
    "100000 dollar signs": "$" * 100000,
    "answer phrase then 30000 periods": "The final answer is " + "1. " * 30000,
    "20000 boxes": "\\boxed{1} " * 20000,
    "20000 corrections": "\\boxed{2} hmm wait " * 20000,
}
