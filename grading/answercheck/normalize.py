"""Text clean-up shared by the comparisons: LaTeX wrappers, spacing, units and string forms."""
from __future__ import annotations

import re
import unicodedata

_SPACING_COMMANDS = re.compile(
    r"(?<!\\)\\(?:[,;:! ]|(?:quad|qquad|displaystyle|textstyle|limits|nolimits|left|right|big|Big|bigg|Bigg)(?![a-zA-Z]))"
)
_TEXT_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|mathsf|mathtt|operatorname|mbox|emph|boldsymbol)\s*\{")
_MATH_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_ARTICLES = {"a", "an", "the"}
_UNICODE_MATH = {
    "−": "-", "–": "-", "×": "\\times ", "·": "\\cdot ", "÷": "/", "π": "\\pi ", "√": "\\sqrt",
    "∞": "\\infty ", "≤": "\\le ", "≥": "\\ge ", "≠": "\\ne ", "°": "^\\circ", "∪": "\\cup ", "∩": "\\cap ",
    "∈": "\\in ", "±": "\\pm ", "θ": "\\theta ", "α": "\\alpha ", "β": "\\beta ",
}


def unwrap_command(text: str, pattern: re.Pattern[str]) -> str:
    """Replace `\\cmd{body}` by `body` for every command `pattern` matches (pattern ends at the `{`)."""
    while True:
        match = pattern.search(text)
        if match is None:
            return text
        depth, index = 1, match.end()
        while index < len(text) and depth:
            if text[index] == "{":
                depth += 1
            elif text[index] == "}":
                depth -= 1
            index += 1
        if depth:
            return text[: match.start()] + text[match.end():]
        text = text[: match.start()] + text[match.end(): index - 1] + text[index:]


def strip_math_delimiters(text: str) -> str:
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for opener, closer in _MATH_DELIMITERS:
            if len(text) >= len(opener) + len(closer) and text.startswith(opener) and text.endswith(closer):
                text = text[len(opener): len(text) - len(closer)].strip()
                changed = True
    return text.replace("$", "")


def clean_latex(text: str) -> str:
    """Remove presentation-only LaTeX while keeping the mathematics."""
    text = unicodedata.normalize("NFKC", text)
    for symbol, replacement in _UNICODE_MATH.items():
        text = text.replace(symbol, replacement)
    text = strip_math_delimiters(text)
    text = re.sub(r"\\(?:boxed|fbox)\s*\{", r"\\text{", text)
    text = _SPACING_COMMANDS.sub(" ", text)
    text = re.sub(r"\\(?:d|t)frac", r"\\frac", text)
    text = text.replace("\\%", "%").replace("\\$", "")
    text = re.sub(r"\s+", " ", text).strip()
    return text.rstrip(".;, ").strip()


def plain_text(text: str) -> str:
    """`clean_latex` and drop text-style wrappers: `\\text{B}` -> `B`."""
    return unwrap_command(clean_latex(text), _TEXT_WRAPPERS).strip()


def normalize_words(text: str) -> str:
    """Case-, article- and punctuation-insensitive form of a short string answer."""
    text = plain_text(text).lower()
    text = re.sub(r"\\[a-z]+", " ", text)
    text = re.sub(r"[^\w\s.+-]", " ", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)
    words = [word for word in text.split() if word not in _ARTICLES]
    return " ".join(words)


_LHS_ASSIGNMENT = re.compile(
    r"^\s*(?:[a-zA-Z](?:_\{?\w+\}?)?|\\[a-zA-Z]+)(?:\^\{?-1\}?|'+)?(?:\((?:[a-zA-Z]\s*,?\s*)+\))?\s*=\s*(?!=)"
)


def strip_assignment(text: str) -> str:
    """`x = 3` -> `3`; `f(x) = x^2` -> `x^2`. Leaves anything else untouched."""
    match = _LHS_ASSIGNMENT.match(text)
    if match and "=" not in text[match.end():]:
        return text[match.end():].strip()
    return text


_TRAILING_UNIT_WORDS = re.compile(
    r"(?:\s*\\text\{[^{}]*\}|\s+(?:[a-zA-Z]+\.?\s*){1,3}(?:\^\{?\d\}?)?)$"
)


def strip_trailing_units(text: str) -> str:
    """`5 \\text{ cm}` / `12 apples` -> the number; only a trailing run of words is removed."""
    stripped = _TRAILING_UNIT_WORDS.sub("", text).strip()
    return stripped or text
