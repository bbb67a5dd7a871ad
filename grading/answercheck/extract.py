"""Locate the final answer in a free-text completion or reference solution.

Pure functions with no Django imports. `final_answer_span` returns character offsets into the
raw text so a reader can highlight the answer; `extract_final_answer` returns the cleaned text.

Every function here runs in time linear in the length of the text (one pass to match braces, regular
expressions without nested quantifiers over unbounded text, and fixed-size windows for the
fallbacks), so extraction stays cheap on long or adversarial completions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from grading.answercheck.number_words import number_word_spans

_BOX_OPENER = re.compile(r"\\(?:boxed|fbox)\s*\{")

# Phrases that introduce a final answer, strongest first. Each captures the rest of the line.
_ANSWER_PHRASES: tuple[re.Pattern[str], ...] = (
    re.compile(r"final\s+answer\s*(?:is|:)?\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"\*\*\s*(?:final\s+)?answer\s*[:：]?\s*\*\*\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"(?:^|\n)[ \t]*#*[ \t]*answer[ \t]*[:：][ \t]*", re.IGNORECASE),
    re.compile(
        r"the\s+(?:correct\s+)?(?:answer|option|choice)\s+(?:is|would\s+be|should\s+be)\s*[:：]?\s*", re.IGNORECASE
    ),
    re.compile(r"the\s+(?:final\s+|correct\s+)?result\s+is\s*[:：]?\s*", re.IGNORECASE),
    re.compile(r"(?:answer|result)\s*[:：]\s*", re.IGNORECASE),
    # "Hence: (-2, 2)", "Therefore: A, C.": a concluding word followed by a colon states the answer.
    re.compile(r"(?:^|(?<=[\n.!]))[ \t]*\**(?:hence|therefore|thus|so)\**[ \t]*[:：][ \t]*", re.IGNORECASE),
    # Chinese: "所以答案是 12。", "最终答案为 $x$", "答：他需要支付 120 元。"
    re.compile(r"(?:最终|最后的?)?答案\s*(?:是|为|應為|应为)?\s*[:：]?\s*"),
    re.compile(r"(?:^|(?<=[\n。.!！]))[ \t]*答[ \t]*[:：][ \t]*"),
)

_CJK_PHRASES = frozenset(_ANSWER_PHRASES[-2:])

# "Final answer: ..." and a line starting "Answer:" are explicit enough to override an earlier box
# ("A first pass gives \\boxed{7}. ... Answer: $8$").
_EXPLICIT_PHRASES = _ANSWER_PHRASES[:3]

_TRAILING_CHOICE = re.compile(r"(?:^|[\s:*])\(?\**([A-J])\**\)?[.)]?[ \t*.]*$")
_CHOICE_STATEMENT = re.compile(r"(?:option|choice)\s*\(?\**([A-J])\b\**\)?", re.IGNORECASE)

# Closing remarks that follow an answer and are not part of it.
_CLOSING_REMARK = re.compile(
    r"(?:(?:I\s+)?hope\s+(?:it|this|that)\s+(?:is|was)\s+(?:correct|right|helpful)|I\s+apologi[sz]e|let\s+me\s+know|feel\s+free|"
    r"thank\s+you|hope\s+this\s+helps|please\s+(?:let|feel|check)|note\s*:|<\|[a-z_]+\|>|</?s>|</?think>)",
    re.IGNORECASE,
)
_CHAT_TOKENS = re.compile(r"<\|[a-z_]+\|>\s*(?:user|assistant|system)?|</?s>", re.IGNORECASE)

# Words that show the last sentence is not a plain statement of the result.
_DOUBT = re.compile(
    r"\b(?:wrong|incorrect|mistake|wait|however|but|check|verify|suppose|assume|if|unless|maybe|perhaps|possibly)\b",
    re.IGNORECASE,
)
_STRONG_DOUBT = re.compile(
    r"\b(?:wrong|incorrect|mistake|wait|however|but|not|unless|maybe|perhaps|possibly|probably|or|actually|error)\b|\?",
    re.IGNORECASE,
)
# A later passage that takes back an earlier boxed answer ("Hmm, wait. Let me re-check that step").
_CORRECTION = re.compile(
    r"\b(?:wait|hmm+|actually|oops|mistake|re-?check(?:ing)?|re-?do(?:ing)?|reconsider(?:ing)?|correcting|correction|"
    r"on second thought|made an? (?:error|slip))\b",
    re.IGNORECASE,
)
# Words that make the sentence stating an answer a guess between candidates.
_HEDGE_WORDS = re.compile(
    r"\b(?:probably|possibly|perhaps|maybe|(?:might|could|may)\s+also\s+be|either|not\s+(?:sure|certain)|unsure|"
    r"cannot\s+decide|can't\s+decide|or\s+possibly)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(r"\b(?:not|isn't|aren't|never|no)\W*$", re.IGNORECASE)
_COPULA = re.compile(
    r"\b(?:it's|is|are|was|were|equals?|be|gives?|get|obtain|becomes?|yields?|to)\b|=|:", re.IGNORECASE
)

# Inline or display math, or a number written out (thousands separators, decimals, fractions, percent).
_MATH_CHUNK = re.compile(
    r"\$\$(?P<dd>[^$]{1,2000}?)\$\$|\$(?P<d>(?:\\\$|[^$\n]){1,1000}?)\$|\\\((?P<p>[^\n]{1,1000}?)\\\)|\\\[(?P<b>.{1,2000}?)\\\]",
    re.DOTALL,
)
# A number may carry a power ("2^10"), and π or a root written as characters ("10π", "6√2", "√3"); a digit right
# after "^" is an exponent ("81 cm^2"), never a number of its own.
_NUMBER_TOKEN = re.compile(
    r"(?<![\w.:^])[-+−]?(?:√\d+(?:\.\d+)?|\d{1,2}:\d{2}(?!\d|[.,]\d)|\d{1,3}(?:(?:,|\{,\}|,\\!|\\,| )\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?|\.\d+)(?:\s*/\s*\d+)?(?:\^\{?\d+\}?)?(?:\s?(?:π|√\d+))?\s*(?:%|\\%|percent\b)?"
)

# A price: a dollar sign before an amount, with running prose (two words) up to the next dollar sign, or none after
# it. Such a sign and an escaped one (\$) are masked before the math is located, so they never open a formula.
_PRICE = re.compile(r"\$(?=(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d$]))")
_TWO_WORDS = re.compile(r"(?<![A-Za-z\\])[A-Za-z]{2,}[\s,;:.]+[A-Za-z]{2,}(?![A-Za-z])")
_TEX_COMMAND = re.compile(r"\\[A-Za-z]+(?:\s*\{[^{}$]*\})?")


def is_price(text: str, position: int, end: int | None = None) -> bool:
    """Whether the dollar sign at `position` is a currency sign (the renderer asks too, so a price is never typeset)."""
    end = len(text) if end is None else end
    if position and text[position - 1] in "\\$":  # escaped, or the second sign of "$$"
        return False
    if _PRICE.match(text, position, end) is None:
        return False
    closing = text.find("$", position + 1, end)
    if closing == -1:
        return True
    between = text[position + 1 : closing]
    # (the substitution only when the plain search finds words: most formulas hold none)
    return bool(_TWO_WORDS.search(between) and _TWO_WORDS.search(_TEX_COMMAND.sub(" ", between)))


def mask_prices(text: str) -> str:
    """`text` with every currency dollar sign (and escaped one) replaced by a space: the same length, so spans
    found in the result are spans of `text`."""
    if "$" not in text:
        return text
    prices = [match.start() for match in _PRICE.finditer(text) if is_price(text, match.start())]
    masked = text.replace("\\$", "\\ ") if "\\$" in text else text
    if not prices:
        return masked
    chars = list(masked)
    for position in prices:
        chars[position] = " "
    return "".join(chars)


_FALLBACK_WINDOW = 600


_BRACE = re.compile(r"\\[{}]|[{}]")


def _brace_partners(text: str, start: int = 0) -> dict[int, int]:
    """Index of each `{` from `start` on -> index of its matching `}`, for every balanced pair, in
    one pass over the braces alone (escaped braces `\\{` do not count)."""
    partners: dict[int, int] = {}
    stack: list[int] = []
    for match in _BRACE.finditer(text, start):
        token = match.group()
        if len(token) == 2:
            continue
        if token == "{":
            stack.append(match.start())
        elif stack:
            partners[stack.pop()] = match.start()
    return partners


@lru_cache(maxsize=32)
def _box_scan(text: str) -> tuple[tuple[tuple[int, int], ...], bool]:
    """(spans of the contents of every complete box in order, whether an unclosed box remains).
    Cached: extraction asks several times about the same completion."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return (), False
    first = _BOX_OPENER.search(text)
    # Braces before the first box cannot close one; pairing starts there.
    partners = _brace_partners(text, first.start()) if first else {}
    spans: list[tuple[int, int]] = []
    unclosed = False
    for match in _BOX_OPENER.finditer(text):
        open_index = match.end() - 1
        close_index = partners.get(open_index)
        if close_index is None:
            unclosed = True
        else:
            spans.append((open_index + 1, close_index))
    # A bare `\boxed 5` (no braces) is legal TeX and appears in some outputs.
    for match in re.finditer(r"\\boxed[ \t]+([^\s{$\\][^\s$]*)", text):
        spans.append((match.start(1), match.end(1)))
    spans.sort()
    return tuple(spans), unclosed


def boxed_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the contents of every complete `\\boxed{...}` / `\\fbox{...}`, in order of appearance."""
    return list(_box_scan(text)[0])


def _outermost(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop spans nested inside another span (a boxed inside a boxed)."""
    result: list[tuple[int, int]] = []
    for start, end in spans:
        if result and start >= result[-1][0] and end <= result[-1][1]:
            continue
        result.append((start, end))
    return result


def _trim_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink a span past surrounding whitespace, math delimiters, bold markers and final punctuation."""
    strip_chars = " \t\r\n*$`"
    for _ in range(4):
        before = (start, end)
        while start < end and text[start] in strip_chars:
            start += 1
        while end > start and text[end - 1] in strip_chars + ".;,。，；！":
            end -= 1
        for opener, closer in (("\\(", "\\)"), ("\\[", "\\]")):
            if (
                text.startswith(opener, start)
                and text.startswith(closer, end - len(closer))
                and end - start >= len(opener) + len(closer)
            ):
                start, end = start + len(opener), end - len(closer)
        if (start, end) == before:
            break
    if start >= end:
        return None
    return start, end


def _sentence_end(text: str, start: int, limit: int) -> int:
    """End of the answer that starts at `start`: the first sentence end ('. ', '! ', '? ' or the line
    end) outside math and braces, or a closing remark, whichever comes first."""
    depth = 0
    in_dollar = False
    index = start
    while index < limit:
        char = text[index]
        if char == "\\" and index + 1 < limit:
            nxt = text[index + 1]
            if nxt == "(" or nxt == "[":
                depth += 1
            elif nxt == ")" or nxt == "]":
                depth = max(0, depth - 1)
            index += 2
            continue
        if char == "$":
            in_dollar = not in_dollar
        elif char in "{([":
            depth += 1
        elif char in "})]":
            depth = max(0, depth - 1)
        elif char in ".!?" and not in_dollar and depth == 0:
            following = text[index + 1 : index + 2]
            if following == "" or following.isspace():
                return index
        elif char in "。！？" and not in_dollar and depth == 0:  # no space follows a full-width sentence end
            return index
        elif char == "<" and text.startswith("<|", index):
            return index
        index += 1
    return limit


_PART_VALUE = r"(?:\$[^$]{1,80}\$?|[-+]?\d[\d.,/]*\d|\d)"
# "the mean is $4$ and the median is $3$": several named values, kept whole rather than narrowed to the last.
_NAMED_PARTS = re.compile(
    rf"\s*(?:the\s+)?[A-Za-z]{{3,}}\s+(?:is|equals|=)\s+{_PART_VALUE}"
    rf"(?:\s*(?:,\s*(?:and\s+)?|;\s*|\s+and\s+)(?:the\s+)?[A-Za-z]{{3,}}\s+(?:is|equals|=)\s+{_PART_VALUE})+\s*",
    re.IGNORECASE,
)

_DANGLING_ABBREVIATION = re.compile(r"[,;]?\s*\(?\b(?:i\.e|e\.g)$", re.IGNORECASE)

_LEAD_IN = re.compile(r"^(?:that\s+|then\s+|therefore,?\s+|thus,?\s+|so,?\s+)", re.IGNORECASE)


def _answer_in_sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow "The largest $n$ is 34" to "34": when the answer phrase is followed by a sentence in
    words, keep what follows its last verb ("is", "are", "=", ...) at the top level."""
    segment = text[start:end]
    if not re.match(r"\s*[A-Za-z]{2,}", segment) or re.match(r"\s*\\", segment):
        return start, end
    if len(segment) <= 400 and _NAMED_PARTS.fullmatch(segment):
        return start, end
    words = re.findall(r"[A-Za-z]{2,}", re.sub(r"\$[^$]*\$|\\\(.*?\\\)|\\[a-zA-Z]+(?:\{[^{}]*\})?", " ", segment))
    # "AB = 4, BC = 5" is a labelled answer, not a sentence: its labels are not words.
    if len([word for word in words if len(word) >= 3 or word.islower()]) < 2:
        return start, end
    last = None
    in_dollar = False
    depth = 0
    for index, char in enumerate(segment):
        if char == "$":
            in_dollar = not in_dollar
        elif char in "{([":
            depth += 1
        elif char in "})]":
            depth = max(0, depth - 1)
        if in_dollar or depth:
            continue
        if char == "=" or (char.isalpha() and (index == 0 or not segment[index - 1].isalpha())):
            match = _COPULA.match(segment, index)
            if match:
                last = match.end()
    if last is None:
        return start, end
    rest = segment[last:]
    if not rest.strip() or not re.search(r"[\d$\\]", rest):
        return start, end
    return start + last, end


def _phrase_span(
    text: str, patterns: tuple[re.Pattern[str], ...] = _ANSWER_PHRASES, after: int = 0
) -> tuple[int, int] | None:
    """The answer after the last answer-introducing phrase, up to the end of its sentence."""
    has_cjk_answer = "答" in text
    for pattern in patterns:
        if pattern in _CJK_PHRASES and not has_cjk_answer:
            continue
        match = None
        for candidate in pattern.finditer(text, after):
            match = candidate
        if match is None:
            continue
        start = match.end()
        line_end = text.find("\n", start)
        if line_end == -1:
            line_end = len(text)
        # An answer on the following line: "**Answer:**\n\n$x = 2$".
        if not text[start:line_end].strip():
            following = re.compile(r"[ \t\r]*\n\s*(\S[^\n]*)").match(text, start)
            if following is None:
                continue
            start, line_end = following.start(1), following.end(1)
        # Display math opened on this line runs on to its closing delimiter.
        for opener, closer in (("\\[", "\\]"), ("$$", "$$")):
            head = text[start:line_end].lstrip()
            if head.startswith(opener) and closer not in head[len(opener) :]:
                close = text.find(closer, start + len(opener) + (len(text[start:line_end]) - len(head)), start + 4000)
                if close != -1:
                    line_end = close + len(closer)
        end = _sentence_end(text, start, line_end)
        remark = _CLOSING_REMARK.search(text, start, end)
        if remark:
            end = remark.start()
        # "72 km/h, i.e. (B)" ends its first sentence at the abbreviation: what is left of it goes.
        dangling = _DANGLING_ABBREVIATION.search(text, max(start, end - 8), end)
        if dangling:
            end = dangling.start()
        span = _trim_span(text, start, end)
        if span is None:
            continue
        narrowed = _trim_span(text, *_answer_in_sentence(text, *span))
        return narrowed or span
    return None


def _choice_span(text: str) -> tuple[int, int] | None:
    tail_start = max(0, len(text) - 200)
    tail = text[tail_start:]
    last_line_start = tail.rstrip().rfind("\n") + 1
    last_line = tail[last_line_start:].rstrip()
    match = _TRAILING_CHOICE.search(last_line[-40:])
    if match:
        offset = tail_start + last_line_start + max(0, len(last_line) - 40)
        return offset + match.start(1), offset + match.end(1)
    statements = list(_CHOICE_STATEMENT.finditer(tail))
    if statements:
        match = statements[-1]
        return tail_start + match.start(1), tail_start + match.end(1)
    return None


def _strip_closing(text: str, start: int, end: int) -> int:
    """End of the text once trailing chat tokens and closing remarks ("I hope it is correct.") are cut."""
    for _ in range(6):
        window_start = max(start, end - _FALLBACK_WINDOW)
        window = text[window_start:end]
        stripped = window.rstrip()
        if not stripped:
            return window_start
        token = _CHAT_TOKENS.search(stripped[-40:] if len(stripped) > 40 else stripped)
        if token and (len(stripped) <= 40 or token.end() == len(stripped[-40:])) and stripped.endswith(token.group(0)):
            end = window_start + len(stripped) - len(token.group(0))
            continue
        # The last sentence, if it is a closing remark.
        cut = max(stripped.rfind(". ", 0, len(stripped) - 1), stripped.rfind("\n", 0, len(stripped) - 1))
        last_sentence = stripped[cut + 1 :]
        if _CLOSING_REMARK.search(last_sentence) and not _MATH_CHUNK.search(last_sentence):
            end = window_start + cut + 1
            continue
        return window_start + len(stripped)
    return end


def _outside_dollars(text: str, start: int, position: int) -> int:
    """`position`, or the end of the $...$ / $$...$$ region it falls in (one pass over the dollars)."""
    index = text.find("$", start)
    while index != -1 and index < position:
        display = text.startswith("$$", index)
        closer = "$$" if display else "$"
        close = text.find(closer, index + len(closer))
        if close == -1:
            return position
        if close + len(closer) > position:
            return close + len(closer)
        index = text.find("$", close + len(closer))
    return position


def _math_regions(window: str) -> list[tuple[int, int]]:
    """Spans of the math chunks of `window`, which starts outside math."""
    return [(match.start(), match.end()) for match in _MATH_CHUNK.finditer(window)]


def _last_math_span(text: str) -> tuple[int, int] | None:
    """Fallback for a completion with no box and no answer phrase: the mathematical expression its
    last sentence states ("We find that $x < 3$.", "the volume is 120."), or the whole text when
    it is nothing but an answer ("$[0,1)$", "7,425,000").

    A last sentence that doubts or negates ("not", "wait", "if") or names several candidates
    joined by "or" gives no answer."""
    start = text.rfind("</think>")
    start = 0 if start == -1 else start + len("</think>")
    end = _strip_closing(text, start, len(text))
    window_start = max(start, end - _FALLBACK_WINDOW)
    window_start = _outside_dollars(text, start, window_start)
    if window_start >= end:
        return None
    window = text[window_start:end]
    if not window.strip():
        return None
    # The whole (short) text is an answer by itself.
    if window_start == start and len(window.strip()) <= 120 and "\n\n" not in window.strip():
        bare = window.strip()
        letters = re.sub(
            r"\\[a-zA-Z]+|\$|\\\(|\\\)|\\\[|\\\]|\b[a-zA-Z]\b|\b(?:and|or|pct|percent|percentage|cm|m|km|units?)\b",
            " ",
            bare,
        )
        if not re.search(r"[A-Za-z]{2,}|[\u3400-\u9fff]", letters) and (bare.count("$") % 2 == 0):
            offset = window.index(bare)
            return _trim_span(text, window_start + offset, window_start + offset + len(bare))
    regions = _math_regions(window)
    candidates = list(regions)
    # Numbers written outside math; a number between unmatched dollars is not outside math.
    region_index = 0
    for match in _NUMBER_TOKEN.finditer(window):
        if not re.search(r"\d", match.group(0)):
            continue
        while region_index < len(regions) and regions[region_index][1] <= match.start():
            region_index += 1
        if region_index < len(regions) and regions[region_index][0] <= match.start() < regions[region_index][1]:
            continue
        before = window[max(0, match.start() - 200) : match.start()]
        if window.count("$", 0, match.start()) % 2 == 1 or before.rfind("\\(") > before.rfind("\\)"):
            continue
        candidates.append((match.start(), match.end()))
    # A number written in words closing the text ("... so the remainder is two."); only past every
    # number and piece of math, where it cannot be a count in the working ("the two roots").
    # Nor right after a number written in digits outside math in its sentence, with no verb between, where it
    # qualifies that number ("**86,450 widgets** in ten weeks"; not "$100!$ ends in twenty-four zeros", where the
    # formula is the subject, nor "after 5 steps the remainder is three").
    last_end = max((high for _, high in candidates), default=0)
    plain_number_end = max((high for low, high in candidates if (low, high) not in regions), default=0)
    for low, high, _ in number_word_spans(window, last_end):
        sentence_break = max(window.rfind(". ", 0, low), window.rfind("\n", 0, low), window.rfind("。", 0, low))
        if (
            last_end
            and plain_number_end == last_end
            and sentence_break < last_end
            and not _COPULA.search(window, last_end, low)
        ):
            continue
        candidates.append((low, high))
    if not candidates:
        return None
    candidates.sort()
    last = candidates[-1]
    # The start of the sentence holding the last candidate: a sentence end or line break outside math.
    sentence_start = 0
    display_ends = {high for low, high in regions if window.startswith(("$$", "\\["), low)}
    for index in range(last[0] - 1, -1, -1):
        char = window[index]
        if index in display_ends and re.match(r"\s+[A-Z]", window[index : index + 3]):
            sentence_start = index
            break
        if any(low <= index < high for low, high in regions):
            continue
        if char in "\n。！？" or (char in ".!?" and index + 1 < len(window) and window[index + 1].isspace()):
            sentence_start = index + 1
            break
    # Sentences after the one holding the last expression: short plain remarks ("This matches the
    # check above.") are dropped; anything that doubts or corrects leaves no answer.
    sentence_end = _sentence_end(window, last[1], len(window))
    line_end = window.find("\n", last[1])
    if line_end != -1 and line_end < sentence_end:
        sentence_end = line_end
    if sentence_end < len(window):
        rest = window[sentence_end + 1 :]
        if len(rest.strip()) > 150 or _STRONG_DOUBT.search(rest):
            return None
    sentence = window[sentence_start:sentence_end]
    in_sentence = [(low - sentence_start, high - sentence_start) for low, high in candidates if low >= sentence_start]
    words_only = sentence
    for low, high in reversed([(low, high) for low, high in in_sentence]):
        words_only = words_only[:low] + " " * (high - low) + words_only[high:]
    if _DOUBT.search(words_only):
        return None
    # Words after the last expression: a short tail ("is the solution.", "square centimeters.") only.
    tail = sentence[in_sentence[-1][1] :]
    if len(tail.strip()) > 80:
        return None
    # "the reference angle is $\\pi/4$, so $\\arg z = -\\frac{3\\pi}{4}$": what follows the last "so" is the
    # conclusion, when it holds a value and not only a name ("..., so $x$ is even").
    concluded_from = 0
    for match in _CONCLUSION_WORD.finditer(words_only):
        concluded_from = match.end()
    if concluded_from:
        concluded = [chunk for chunk in in_sentence if chunk[0] >= concluded_from]
        if any(re.search(r"[\d=\\]", sentence[low:high]) for low, high in concluded):
            in_sentence = concluded
        else:
            concluded_from = 0
    between = words_only[in_sentence[0][1] : in_sentence[-1][0]] if len(in_sentence) > 1 else ""
    offset = window_start + sentence_start
    if re.search(r"\bor\b", between):
        # Several candidates: hand them all over so the caller sees the hedge.
        return offset + in_sentence[0][0], offset + in_sentence[-1][1]
    # Prefer the first expression after the sentence's last verb ("there are 12 ... in the 3 cases").
    verb = None
    for match in _COPULA.finditer(words_only, concluded_from):
        if match.group(0) == ":":
            continue
        verb = match.end()
    chosen = in_sentence[-1]
    if verb is not None:
        after = [chunk for chunk in in_sentence if chunk[0] >= verb]
        # "the intercept is $3$: $y = -2x + 3$": what follows a colon restates the answer in full.
        for index in range(len(after) - 1, 0, -1):
            if ":" in sentence[after[index - 1][1] : after[index][0]] and sentence[after[index][0]] in "$\\":
                after = after[index:]
                break
        if after:
            chosen = after[0]
            # "... is $12 $ and $13 $", "are $x=1$, $x=2$, and $x=3$": a list after the verb.
            if len(after) > 1 and _joined_list(sentence, after, ratio=True):
                chosen = (after[0][0], after[-1][1])
                # "the digits are 5, 6, 2, 0 and $2023_{10} = 5620_7$": an equation closing a list of
                # plain values is a clause of its own that states the result.
                if "=" in sentence[after[-1][0] : after[-1][1]] and "=" not in sentence[after[0][0] : after[0][1]]:
                    chosen = after[-1]
    elif (
        len(in_sentence) > 1
        and _joined_list(sentence, in_sentence)
        and re.search(r"\band\b", between)
        and _states_together(sentence, in_sentence)
    ):
        # "Both $3$ and $-3$ work.": a sentence with no verb of being that lists values states them all.
        chosen = (in_sentence[0][0], in_sentence[-1][1])
    if _EMPHASISED_MATH.match(sentence, in_sentence[-1][0]):
        # "10 pairs summing to 21, total $\\mathbf{210}$": the value set in bold is the one stated.
        chosen = in_sentence[-1]
    if chosen == in_sentence[-1]:
        # "So $x=-1$, $y=2$, $z=1$.": a run of values assigned to names, stated together.
        run = [chosen]
        for chunk in reversed(in_sentence[:-1]):
            if not (_ASSIGNMENT.match(sentence, chunk[0]) and _joined_list(sentence, [chunk, run[0]])):
                break
            run.insert(0, chunk)
        if len(run) > 1 and _ASSIGNMENT.match(sentence, chosen[0]):
            chosen = (run[0][0], chosen[1])
    # "the number is not 10 which is 1,000.99": a negated expression is not the answer.
    if _NEGATION.search(words_only[max(0, chosen[0] - 12) : chosen[0]]):
        return None
    return _trim_span(text, offset + chosen[0], offset + chosen[1])


_CONCLUSION_WORD = re.compile(r"\b(?:so|hence|thus|therefore|consequently)\b", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"\$?\s*(?:[A-Za-z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?\s*=(?!=)")
_EMPHASISED_MATH = re.compile(r"\$\s*\\(?:mathbf|textbf|boldsymbol|bm)\s*\{")
_ASSIGNMENT_NAME = re.compile(r"\$?\s*([A-Za-z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?\s*=(?!=)")
_LIST_GAP = re.compile(r"[\s,]*(?:and|&)?[\s,]*")
_RATIO_GAP = re.compile(r"\s*:\s*")


def _states_together(sentence: str, chunks: list[tuple[int, int]]) -> bool:
    """Whether listed chunks state one answer together: plain values ("$3$ and $-3$"), equations of one
    kind ("$3x - 2y = 0$ and $3x + 2y = 0$") or values of one name ("$x = 1$ and $x = 2$"); not a
    relation followed by the value it gives ("$\\cos\\theta = \\frac12$ and $\\theta = \\frac\\pi3$")."""
    texts = [sentence[low:high] for low, high in chunks]
    if not any("=" in text for text in texts):
        return True
    if not all("=" in text for text in texts):
        return False
    names = [match.group(1) if (match := _ASSIGNMENT_NAME.match(text)) else None for text in texts]
    return names[-1] is None or len(set(names)) == 1


def _joined_list(sentence: str, chunks: list[tuple[int, int]], *, ratio: bool = False) -> bool:
    """True when only commas and "and" (or, with `ratio`, a colon: "3 : 8") separate the consecutive
    `chunks` of `sentence`."""
    return all(
        _LIST_GAP.fullmatch(gap) or (ratio and _RATIO_GAP.fullmatch(gap))
        for gap in (sentence[previous[1] : following[0]] for previous, following in zip(chunks, chunks[1:]))
    )


def final_answer_span(text: str, *, fallback: bool = True) -> tuple[int, int] | None:
    """Character span [start, end) in `text` of its final answer, or None when none is found.

    Order of preference: the last `\\boxed{}`/`\\fbox{}` (contents, braces matched), then the last
    answer phrase ("Final answer: ...", "**Answer:** ...", "The answer is ..."), then the math of a
    concluding last sentence or a text that is only an answer (unless `fallback` is False), then a
    trailing choice letter ("(B)" on the last line, "option C"). A box left open (a truncated
    completion) gives no answer unless an answer phrase follows it. A passage after the last box
    that takes it back ("Hmm, wait ... redoing it") lets a later statement of the answer replace it.
    """
    if not text:
        return None
    text = mask_prices(text)
    spans, unclosed = _box_scan(text)
    spans = _outermost(spans)
    if spans:
        start, end = spans[-1]
        later = _phrase_span(text, _EXPLICIT_PHRASES, after=end + 1)
        if later is not None:
            return later
        corrected = _answer_after_correction(text, end + 1, fallback)
        if corrected is not None:
            return corrected
        trimmed = _trim_span(text, start, end)
        return trimmed if trimmed is not None else (start, end)
    phrase = _phrase_span(text)
    if phrase is not None:
        return phrase
    if unclosed:
        return None
    choice = _choice_span(text)
    if not fallback:
        return choice
    last_math = _last_math_span(text)
    if choice is not None and (last_math is None or choice[0] >= last_math[0]):
        return choice
    return last_math


def _answer_after_correction(text: str, after: int, fallback: bool) -> tuple[int, int] | None:
    """The answer stated after a passage that takes back the last box ("\\boxed{24}. Hmm, wait.
    Redoing it carefully: ... The answer is 30."), or None when nothing is stated after it."""
    correction = None
    for match in _CORRECTION.finditer(text, after):
        correction = match
    if correction is None:
        return None
    later = _phrase_span(text, _ANSWER_PHRASES, after=correction.end())
    if later is not None:
        return later
    candidates = [_choice_span(text)]
    if fallback:
        candidates.insert(0, _last_math_span(text))
    for span in candidates:
        if span is not None and span[0] >= correction.end():
            return span
    return None


def hedged_context(text: str, span: tuple[int, int]) -> str | None:
    """The sentence around the answer at `span` when it guesses between candidates ("The answer is
    probably 4, though it could also be 2."), else None."""
    start = max(text.rfind("\n", 0, span[0]), text.rfind(". ", max(0, span[0] - 300), span[0]), span[0] - 300, -1) + 1
    end = _sentence_end(text, span[1], min(len(text), span[1] + 300))
    sentence = text[start:end]
    if _HEDGE_WORDS.search(sentence):
        return sentence.strip()
    return None


def strip_closing_remarks(text: str) -> str:
    """`text` without the closing remarks and chat tokens that end it ("I hope it is correct.")."""
    return text[: _strip_closing(text, 0, len(text))]


def answer_phrase_span(text: str) -> tuple[int, int] | None:
    """The answer after the last answer phrase ("the final answer is ..."), ignoring boxes and fallbacks."""
    return _phrase_span(text)


def explicit_answer_span(text: str) -> tuple[int, int] | None:
    """The answer after the last explicit answer label ("Final answer: ...", "**Answer:** ...", a line
    starting "Answer:"), ignoring boxes and weaker phrases."""
    return _phrase_span(text, _EXPLICIT_PHRASES)


def all_boxed_answers(text: str) -> list[str]:
    """Contents of every outermost boxed answer in order (some solutions box each part)."""
    return [text[start:end].strip() for start, end in _outermost(boxed_spans(text))]


_BOX_GAP_CONNECTOR = re.compile(r"\\(?:quad|qquad|text|mathrm|,|;|:|!)|\b(?:and|or)\b|[$,;&.()\\\[\]{}\s]")


def boxed_group(text: str, *, max_words: int = 4) -> list[str]:
    """The contents of the last run of boxes separated only by punctuation, "and"/"or", spacing and at
    most `max_words` other words ("\\boxed{1} and \\boxed{-2}", "\\boxed{1} papers and \\boxed{2} bins")."""
    spans = _outermost(boxed_spans(text))
    if not spans:
        return []
    group = [spans[-1]]
    for previous in reversed(spans[:-1]):
        gap = text[previous[1] + 1 : group[0][0]]
        gap = re.sub(r"\\(?:boxed|fbox)\s*\{?$", "", gap.rstrip())
        if len(gap) > 80 or "\n\n" in gap:
            break
        words = [word for word in _BOX_GAP_CONNECTOR.sub(" ", gap).split() if word]
        if len(words) > max_words:
            break
        group.insert(0, previous)
    return [text[start:end].strip() for start, end in group]


def extract_final_answer(text: str, *, fallback: bool = True) -> str | None:
    """The final answer of `text` as a string, or None when no answer can be located."""
    span = final_answer_span(text, fallback=fallback)
    if span is None:
        return None
    answer = text[span[0] : span[1]].strip()
    return answer or None


_SENTENCE_BREAK = re.compile(r"[.!?;]\s+(?=\S)")
_CONCLUDING_WORD = re.compile(r"(?:^|,\s*|\s)(?:so|hence|therefore|thus|consequently)\b,?\s*", re.IGNORECASE)


def concluding_clause(text: str) -> str:
    """The statement a passage of words ends in: its last sentence, and there what follows the last
    "so"/"hence"/"therefore" ("$x^2 \\ge 0$, so the solution set is empty." -> "the solution set is empty.").
    Math is kept whole: a full stop inside it does not end a sentence."""
    masked = re.sub(r"\$[^$]*\$", lambda match: "x" * len(match.group(0)), text.strip())
    start = 0
    for match in _SENTENCE_BREAK.finditer(masked):
        start = match.end()
    sentence_masked = masked[start:]
    clause_start = 0
    for match in _CONCLUDING_WORD.finditer(sentence_masked):
        clause_start = match.end()
    clause = text.strip()[start + clause_start :].strip()
    return clause or text.strip()[start:].strip()
