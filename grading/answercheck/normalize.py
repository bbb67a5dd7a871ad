"""Text clean-up shared by the comparisons: LaTeX wrappers, spacing, units and string forms."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_SPACING_COMMANDS = re.compile(
    r"(?<!\\)\\(?:[,;:! ]|(?:quad|qquad|displaystyle|textstyle|limits|nolimits|left|right|big|Big|bigg|Bigg)(?![a-zA-Z]))"
)
_TEXT_WRAPPERS = re.compile(
    r"\\(?:text|textbf|textit|textrm|mathrm|mathbf|mathit|mathsf|mathtt|operatorname|mbox|emph|boldsymbol)\s*\{"
)
_MATH_DELIMITERS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_ARTICLES = {"a", "an", "the"}
_UNICODE_MATH = {
    "−": "-",
    "–": "-",
    "×": "\\times ",
    "·": "\\cdot ",
    "÷": "/",
    "π": "\\pi ",
    "√": "\\sqrt",
    "∞": "\\infty ",
    "≤": "\\le ",
    "≥": "\\ge ",
    "≠": "\\ne ",
    "°": "^\\circ",
    "∪": "\\cup ",
    "∩": "\\cap ",
    "∈": "\\in ",
    "∅": "\\emptyset ",
    "±": "\\pm ",
    "θ": "\\theta ",
    "α": "\\alpha ",
    "β": "\\beta ",
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
            return text[: match.start()] + text[match.end() :]
        text = text[: match.start()] + text[match.end() : index - 1] + text[index:]


def strip_math_delimiters(text: str) -> str:
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for opener, closer in _MATH_DELIMITERS:
            if len(text) >= len(opener) + len(closer) and text.startswith(opener) and text.endswith(closer):
                text = text[len(opener) : len(text) - len(closer)].strip()
                changed = True
    return text.replace("$", "")


# "\\boxed", "\\frac", "\\le": a command whose backslash was escaped twice (JSON or a Python
# literal written by hand). A real line break is never followed directly by these names.
_DOUBLED_BACKSLASH = re.compile(
    r"(?<!\\)\\\\(?=(?:boxed|fbox|text|textbf|mathrm|mathbf|operatorname|frac|dfrac|tfrac|cfrac|sqrt|le|leq|ge|geq|lt|gt|neq|ne|"
    r"pi|cdot|times|div|in|infty|cup|cap|left|right|quad|qquad|circ|pm|mp|sin|cos|tan|log|ln|alpha|beta|gamma|theta|Delta|"
    r"emptyset|varnothing|approx|angle|sum|prod|int|lim)(?![a-zA-Z]))"
)
_PERCENT_WORDS = re.compile(
    r"(\d)\s*(?:\\text\{\s*(?:percent|pct|percentage)\s*\}|(?:percent(?:age)?|pct)\b)", re.IGNORECASE
)


def unescape_commands(text: str) -> str:
    return _DOUBLED_BACKSLASH.sub(r"\\", text) if "\\\\" in text else text


_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUPERSCRIPT = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]+")


@lru_cache(maxsize=4096)
def clean_latex(text: str) -> str:
    """Remove presentation-only LaTeX while keeping the mathematics. Cached: answers and references
    are cleaned many times over while they are compared."""
    # Superscript digits are powers ("cm²", "x³"); NFKC would make them plain digits ("cm2").
    text = _SUPERSCRIPT.sub(lambda match: "^" + match.group(0).translate(_SUPERSCRIPT_DIGITS), text)
    text = unicodedata.normalize("NFKC", text)
    for symbol, replacement in _UNICODE_MATH.items():
        text = text.replace(symbol, replacement)
    text = unescape_commands(text)
    # A dollar sign written as currency ("\\$16,\\!386.20") is not a math delimiter.
    text = text.replace("\\$", "")
    text = strip_math_delimiters(text)
    text = re.sub(r"\\(?:boxed|fbox)\s*\{", r"\\text{", text)
    # Thousands separators: "11,\\!111" and "14{,}916" are one number.
    text = re.sub(r",\\!\s*|\s*\{\s*,\s*\}\s*", ",", text)
    text = _SPACING_COMMANDS.sub(" ", text)
    text = re.sub(r"\\(?:d|t|c)frac", r"\\frac", text)
    text = re.sub(r"\\varnothing(?![a-zA-Z])", r"\\emptyset", text)
    text = text.replace("\\%", "%")
    text = _PERCENT_WORDS.sub(r"\1%", text)
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
    if match and "=" not in text[match.end() :]:
        return text[match.end() :].strip()
    return text


_TRAILING_UNIT_WORDS = re.compile(
    r"(?:\s*\\text\{[^{}]*\}(?:\^\{?\d\}?)?|\s+(?:[a-zA-Z]+(?:/[a-zA-Z]+)?\.?\s*){1,3}(?:\^\{?\d\}?)?)$"
)


def strip_trailing_units(text: str) -> str:
    """`5 \\text{ cm}` / `12 apples` / `12 km/h` -> the number; only a trailing run of words is removed."""
    stripped = _TRAILING_UNIT_WORDS.sub("", text).strip()
    return stripped or text


_THOUSANDS = re.compile(r"^([-+]?)([1-9]\d{0,2}(?:(?:,| )\d{3})+)(\.\d+)?$")
_DECIMAL_COMMA = re.compile(r"^([-+]?\d+),(\d+)$")
_E_NOTATION = re.compile(r"^([-+]?\d+(?:\.\d+)?)[eE]([-+]?\d{1,3})$")
_NUMBER_IN_TEXT = re.compile(r"^\\(?:text|mathrm|textrm|textbf|mathbf)\s*\{\s*([-+]?[\d.,]+)\s*\}$")


def plain_number(text: str) -> str:
    """Digit groupings read as one number: "7,425,000" and "1 000" -> "7425000" / "1000";
    a decimal comma ("1000,99", "0,111") -> "1000.99" / "0.111"; E-notation ("1.2e9") -> "1.2\\times 10^{9}";
    a number wrapped in text ("\\text{24}") -> "24". Anything else is returned as is."""
    compact = text.strip()
    wrapped = _NUMBER_IN_TEXT.match(compact)
    if wrapped:
        compact = wrapped.group(1)
    scientific = _E_NOTATION.match(compact)
    if scientific:
        return f"{scientific.group(1)}\\times 10^{{{scientific.group(2)}}}"
    thousands = _THOUSANDS.match(compact)
    if thousands:
        sign, digits, fraction = thousands.groups()
        return sign + re.sub(r"[, ]", "", digits) + (fraction or "")
    decimal = _DECIMAL_COMMA.match(compact)
    if decimal and (len(decimal.group(2)) == 2 or len(decimal.group(2)) > 3 or decimal.group(1).lstrip("+-") == "0"):
        return f"{decimal.group(1)}.{decimal.group(2)}"
    return compact if wrapped else text


# ---------------------------------------------------------------- labelled answers

_EQUALS = re.compile(r"(?<![<>!:\\=])=(?!=)")


def _top_level_split(text: str, pattern: re.Pattern[str]) -> list[str]:
    parts, depth, last = [], 0, 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0:
            match = pattern.match(text, index)
            if match and match.end() > index:
                parts.append(text[last:index])
                last = index = match.end()
                continue
        index += 1
    parts.append(text[last:])
    return parts


_LABEL_COMMANDS = re.compile(
    r"\\(?:frac|angle|triangle|overline|overrightarrow|vec|text|mathrm|operatorname|widehat|hat|bar|"
    r"alpha|beta|gamma|delta|theta|lambda|mu|phi|varphi|omega|sigma|rho|tau|Delta|Phi|Omega|Sigma|odot|cdot|"
    r"left|right|lvert|rvert|mid|in|quad|setminus|cap|cup|triangle|times|circ|complement)(?![a-zA-Z])"
)


# A Greek letter, perhaps indexed: '\\lambda', '\\lambda_2', '\\theta_{1}'.
_GREEK_NAME = re.compile(
    r"\\(?:alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|vartheta|kappa|lambda|mu|nu|xi|rho|sigma|tau|"
    r"phi|varphi|chi|psi|omega|Gamma|Delta|Theta|Lambda|Sigma|Phi|Psi|Omega)(?:\s*_\s*(?:\{[^{}]*\}|\w))?"
)


def _is_label(text: str) -> bool:
    """A name rather than a value: x_1, AB, |AB|, (p, q), f(x), S_{MBCN}:S, \\frac{NO}{BO}, V_1:V_2."""
    if _GREEK_NAME.fullmatch(text.strip()):
        return True
    bare = re.sub(r"_\s*\{[^{}]*\}|_\s*\w", "", text)
    bare = _LABEL_COMMANDS.sub(" ", bare)
    bare = re.sub(r"[{}()|:,'\s]", "", bare)
    return bool(bare) and bare.isalpha() and len(text) <= 40


def _single_letter(text: str) -> str | None:
    bare = text.strip()
    return bare if re.fullmatch(r"[A-Za-z]", bare) or _GREEK_NAME.fullmatch(bare) else None


def answer_value(text: str) -> str:
    """The value a labelled or chained statement gives: 'x = 5+5+1 = 7 = 11' -> '11',
    '(p,q)=(3,2)' -> '(3,2)', 'AB = 4' -> '4', 'S_{MBCN}:S = 7:32' -> '7:32'. An equation between a
    variable and an expression in other variables ('y = 2x + 1') is left as it is."""
    parts = _top_level_split(text, _EQUALS)
    if len(parts) < 2 or any(not part.strip() for part in parts):
        return text
    value = parts[-1].strip()
    if len(parts) >= 3:
        joined = " ".join(parts[1:-1])
        if re.search(r"\\text|\b(?:or|and)\b|[,;]|\\quad", joined):
            return text
        return value
    label = parts[0].strip()
    if not _is_label(label):
        return text
    letter = _single_letter(label)
    value_letters = set(re.findall(r"(?<![\\a-zA-Z])[a-zA-Z](?![a-zA-Z])", re.sub(r"\\[a-zA-Z]+", " ", value)))
    value_letters -= {"e", "i"}
    if letter is not None and value_letters:
        return text  # "y = 2x + 1" is an equation, not a label
    return value


def split_labelled(text: str) -> list[tuple[str | None, str]]:
    """Top-level items of a list with the label of each ('a_3 = 2, a_{37} = 19')."""
    items = []
    for part in _top_level_split(text, re.compile(r"\s*[,;]\s*|\s*\\quad\s*|\s+\\text\{\s*and\s*\}\s+|\s+and\s+")):
        part = part.strip()
        if not part:
            continue
        pieces = _top_level_split(part, _EQUALS)
        if len(pieces) == 2 and _is_label(pieces[0].strip()):
            items.append((re.sub(r"[\s{}]", "", pieces[0]), pieces[1].strip()))
        else:
            items.append((None, part))
    return items


def strip_labels(text: str) -> str:
    """Labels removed from a whole answer or from each item of a list: 'AB=4, CD=5' -> '4, 5';
    'p=5,q=2;p=7,q=2' -> '(5, 2), (7, 2)' (semicolons separate groups of labelled values)."""
    if "=" not in text:
        return text
    groups = _top_level_split(text, re.compile(r"\s*;\s*"))
    if len(groups) > 1 and all("=" in group for group in groups):
        rendered = []
        for group in groups:
            values = [answer_value(item.strip()) for item in _top_level_split(group, re.compile(r"\s*,\s*"))]
            rendered.append(values[0] if len(values) == 1 else "(" + ", ".join(value.strip() for value in values) + ")")
        return ", ".join(rendered)
    items = _top_level_split(text, re.compile(r"\s*[,;]\s*"))
    if len(items) > 1:
        values = [answer_value(item.strip()) for item in items]
        if any(value != item.strip() for value, item in zip(values, items)):
            return ", ".join(values)
        return text
    return answer_value(text)


# ---------------------------------------------------------------- values named in words

_NAMED_VALUE = r"[-+]?(?:\d|\\|\.\d)[^\s,;]*"
_WORD_LABEL = r"[A-Za-z]{3,}(?:\s+[A-Za-z]{3,})?"
_NAMING = r"\s*(?:\s(?:is|equals)\s|=|:|\s)\s*=?\s*"
_WORD_LABEL_ITEM = re.compile(rf"(?:the\s+)?({_WORD_LABEL}){_NAMING}({_NAMED_VALUE})", re.IGNORECASE)
_WORD_LIST_SEPARATORS = re.compile(r"\s*[,;]\s*(?:and\s+)?|\s+and\s+")
# Words that introduce an answer rather than name one of its parts.
_NOT_PART_NAMES = {"answer", "result", "value", "values", "hence", "therefore", "thus", "and", "then", "final"}


# A point or vector as a named value: 'centre (3, -2)'.
_WORD_LABEL_GROUP_ITEM = re.compile(
    rf"(?:the\s+)?({_WORD_LABEL}){_NAMING}({_NAMED_VALUE}|\([^()]{{1,80}}\))", re.IGNORECASE
)


def word_labelled(text: str, *, groups: bool = False) -> list[tuple[str, str]] | None:
    """The parts of a multi-part answer named in words, in order: 'the mean is $4$ and the median is
    $3$', 'Mean: 4; Median: 3' and 'quotient 14, remainder 2' -> [('mean', '4'), ...]; None unless
    the text is nothing but two or more such parts. With `groups`, a value may be a parenthesised
    point ('centre (3, -2) and radius 4')."""
    bare = text.replace("$", "").replace("*", "").strip().rstrip(".")
    items = [item.strip() for item in _top_level_split(bare, _WORD_LIST_SEPARATORS) if item.strip()]
    if len(items) < 2:
        return None
    parts = []
    item_pattern = _WORD_LABEL_GROUP_ITEM if groups else _WORD_LABEL_ITEM
    for item in items:
        match = item_pattern.fullmatch(item)
        if match is None or match.group(1).lower() in _NOT_PART_NAMES:
            return None
        parts.append((re.sub(r"\s+", " ", match.group(1).lower()), match.group(2)))
    if len({label for label, _ in parts}) != len(parts):
        return None
    return parts


def named_value(text: str, label: str) -> str | None:
    """The value the last statement naming `label` gives ('so the quotient is $14$' -> '14')."""
    bare = text.replace("$", "").replace("*", "")
    found = None
    for match in re.finditer(rf"\b{re.escape(label)}{_NAMING}({_NAMED_VALUE})", bare, re.IGNORECASE):
        found = match.group(1).rstrip(".")
    return found


_LETTERED_PART = re.compile(rf"\(?([a-h])\)\s*({_NAMED_VALUE})")


def lettered_parts(text: str) -> list[str] | None:
    """The values of an answer in lettered parts, '(a) 26, (b) 40' -> ['26', '40']; None otherwise."""
    bare = text.replace("$", "").strip().rstrip(".")
    items = [item.strip() for item in _top_level_split(bare, _WORD_LIST_SEPARATORS) if item.strip()]
    matches = [_LETTERED_PART.fullmatch(item) for item in items]
    if len(items) < 2 or any(match is None for match in matches):
        return None
    letters = "".join(match.group(1) for match in matches if match is not None)
    if letters != "abcdefgh"[: len(letters)]:
        return None
    return [match.group(2) for match in matches if match is not None]
