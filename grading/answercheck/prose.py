"""Words in an answer: whether it is running text the checker cannot read as math.

An answer read as a product of symbols ("y equals 3" as y·e·q·u·a·l·s·3) only looks like an expression of another
kind; a verdict of "incorrect" on it would rest on a misreading. Words here are runs of two or more letters that are
not TeX commands, not the names of functions written without a backslash ("sin", "log"), not the connectives "or" and "and",
and not units ("cm", "kg"); and any run of CJK characters.
"""

from __future__ import annotations

import re

from grading.answercheck.units import is_unit_word

_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])|[\u3400-\u9fff\uf900-\ufaff]+")
# Function names written without a backslash, and the connectives that join statements ("x < -1 or x > 5").
MATH_NAMES = frozenset(
    "or and sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh log ln lg exp max min gcd lcm mod det deg lim "
    "inf sup arg dim ker rank tr var cov pi".split()
)


_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[^{}]*\}")


def as_prose(text: str) -> str:
    """`text` with TeX text wrappers opened (their words kept), environment markers and dollar signs gone."""
    opened = _TEXT_WRAPPER.sub(lambda match: f" {match.group(1)} ", _ENVIRONMENT.sub(" ", text))
    return opened.replace("\\$", " ").replace("$", " ")


# Two letters are a word only when they are one of English's short words; otherwise they are a product of two
# symbols ("Ke^{-4x}", "xy").
SHORT_WORDS = frozenset("is of to in at by be as an if on so we it no us my he me do up am".split())


def prose_words(text: str) -> list[str]:
    return [
        word
        for word in _WORD.findall(as_prose(text))
        if word.lower() not in MATH_NAMES
        and not is_unit_word(word)
        and (len(word) > 2 or word.lower() in SHORT_WORDS or not word.isascii())
    ]


def has_prose(text: str) -> bool:
    return bool(prose_words(text))


WORD = _WORD
