"""The final answer each side states, and whether a completion hedges between several.

A reference is read whole, from its boxes, or through the completion extraction when it is a worked solution;
a completion is read according to the answer type (lists one per line, several boxes, option letters named
together, the last stating line for words and states).
"""

from __future__ import annotations

import re

from core.taxonomy import UnknownAnswerType, parse_answer_type
from grading.answercheck import choices
from grading.answercheck.extract import (
    answer_phrase_span,
    boxed_group,
    concluding_clause,
    explicit_answer_span,
    extract_final_answer,
    final_answer_span,
    hedged_context,
    strip_closing_remarks,
)
from grading.answercheck.normalize import unescape_commands

MULTI_PART_TYPES = {"A8", "B4", "C2"}
WORD_TYPES = {"C1", "C2", "C3", "D1", "D2"}


_SOLUTION_SENTENCES = re.compile(r"[.!?](?:\s|$)")


def reference_final_answer(
    reference: str, *, reference_is_solution: bool, answer_type: str | None = None
) -> str | None:
    """The answer a reference states. A bare answer is read whole; boxes give their contents (a
    run of boxes, "\\boxed{1}, \\boxed{2}", gives them all); a worked solution or a sentence
    ending in the answer ("... so the final answer is (B) 1.") goes through the same extraction
    as a completion."""
    text = unescape_commands(reference or "").strip()
    if not text:
        return None
    if reference_is_solution:
        return extract_final_answer(text)
    group = boxed_group(text)
    if len(group) > 1:
        return ", ".join(group)
    if group:
        return group[0]
    # "... = 20$ m/s.\n\n**Answer:** $20$ m/s": a labelled answer is the answer, however short the working.
    explicit = explicit_answer_span(text)
    if explicit is not None and explicit[0] > 0:
        return text[explicit[0] : explicit[1]].strip()
    if _given_code(answer_type) in WORD_TYPES and answer_phrase_span(text) is None:
        concluding = _concluding_paragraph(text)
        if concluding is not None:
            return concluding
        if _given_code(answer_type) == "D1" and len(_SOLUTION_SENTENCES.findall(text.rstrip() + " ")) >= 3:
            # A worked solution whose words are the answer: its last sentence concludes it, not the
            # last piece of math in it ("... Hence the condition holds exactly when $n$ is prime.").
            return concluding_clause(text)
    words = re.findall(r"[A-Za-z]{2,}", re.sub(r"\\[a-zA-Z]+|\$[^$]*\$", " ", text))
    long_solution = len(text) > 150 and len(_SOLUTION_SENTENCES.findall(text)) >= 3
    if (len(words) >= 5 and long_solution) or (len(words) >= 3 and answer_phrase_span(text) is not None):
        extracted = extract_final_answer(text, fallback=long_solution)
        if extracted:
            return extracted
    # A sentence that ends in the answer ("Since $34^2 < 1200 < 35^2$, the largest $n$ is $34$."),
    # for answers that are math rather than words.
    # A few words suffice when the reference runs over several sentences of math ("$\\cos 2x = 0$ iff ... .
    # In $[0, 2\\pi)$: $\\{...\\}$.").
    several_sentences = len(_SOLUTION_SENTENCES.findall(re.sub(r"\$[^$]*\$", "x", text))) >= 2
    if (
        (len(words) >= 4 or (len(words) >= 2 and several_sentences))
        and "$" in text
        and re.search(r"[.!]\s*$", text)
        and _given_code(answer_type) not in WORD_TYPES
    ):
        extracted = extract_final_answer(text, fallback=True)
        if extracted:
            return extracted
    opener = re.match(r"\s*\\(?:boxed|fbox)\s*\{", text)
    if opener and text.count("{") > text.count("}"):
        # A box left open in a short reference: its contents run to the end.
        return text[opener.end() :].strip().rstrip("$").strip() or None
    return text


def _concluding_paragraph(text: str) -> str | None:
    """A worked solution followed by a short last paragraph of one sentence ("... so the graph moves
    right.\n\nThe graph shifts 3 units to the right."): that last paragraph states the answer."""
    body, separator, last = text.rstrip().rpartition("\n\n")
    last = last.strip()
    if not separator or not body.strip() or not last or len(last) > 150 or "\n" in last:
        return None
    if len(_SOLUTION_SENTENCES.findall(last.rstrip(".!").rstrip())) or not _SOLUTION_SENTENCES.search(body + " "):
        return None
    if re.match(r"\s*(?:note|remark|hint|check)\b", last, re.IGNORECASE):
        return None
    return last


def _given_code(answer_type: str | None) -> str | None:
    if not answer_type:
        return None
    try:
        parsed = parse_answer_type(answer_type)
    except UnknownAnswerType:
        return None
    return parsed.code if parsed else None


# "(A), (C) and (E)", "A and C", "A, C & D": several option letters named together in a sentence.
_LETTER_LIST = re.compile(
    r"(?<![A-Za-z])\(?[A-J]\)?(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)\(?[A-J]\)?)+(?![A-Za-z])"
)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _widen_to_letter_list(answer: str, completion: str) -> str:
    """For multi-select answers: 'C' read from "... i.e. options (A), (C) and (E)." becomes that whole list."""
    lists = _LETTER_LIST.findall(_last_line(completion))
    if not lists:
        return answer
    named = set(re.findall(r"[A-J]", lists[-1]))
    chosen = set(re.findall(r"(?<![A-Za-z])[A-J](?![A-Za-z])", answer))
    if chosen and chosen < named:
        return lists[-1]
    return answer


_LIST_LINE = re.compile(r"[-*\u2022]?\s*(?:\d+[.)]\s+)?\$?\s*([-+]?[^\s$:]{1,30})\s*\$?[.,;]?")


def _trailing_line_list(completion: str) -> str | None:
    """'The primes are:\n23\n29\n31': values one per line after a line ending in a colon, at the end."""
    lines = [line.strip() for line in strip_closing_remarks(completion[-2000:]).rstrip().splitlines()]
    values: list[str] = []
    for line in reversed(lines):
        match = _LIST_LINE.fullmatch(line)
        if not line or match is None or not re.search(r"\d", line):
            break
        values.insert(0, match.group(1))
    start = len(lines) - len(values) - 1
    if len(values) < 2 or start < 0 or not lines[start].endswith(":"):
        return None
    return ", ".join(values)


def completion_final_answer(completion: str, answer_type: str | None) -> str | None:
    if answer_type in MULTI_PART_TYPES:
        listed = _trailing_line_list(completion)
        if listed is not None:
            return listed
    if answer_type in MULTI_PART_TYPES or answer_type == "A5":
        # Complex answers are often the several roots of one equation, each in its own box.
        group = boxed_group(completion)
        if len(group) > 1:
            return ", ".join(group)
    # Choices, states and words are not read off the last expression of the text.
    span = final_answer_span(completion, fallback=answer_type not in WORD_TYPES)
    answer = completion[span[0] : span[1]].strip() or None if span is not None else None
    if span is not None:
        # "The answer is probably 4, though it could also be 2.": the whole guess is the answer.
        guess = hedged_context(completion, span)
        if guess is not None:
            return guess
    if answer is None and answer_type in ("C1", "C2"):
        answer = choices.letter_in_short_text(completion)
    if answer is None and answer_type == "C2":
        # "ACD": a reply that is nothing but the option letters, run together in order.
        compact = re.fullmatch(r"\s*\(?([A-J]{2,10})\)?\.?\s*", completion)
        if compact and list(compact.group(1)) == sorted(set(compact.group(1))):
            answer = ", ".join(compact.group(1))
    if answer is None and answer_type == "C1":
        # "The largest is $3^{20}$.": the value a reply ends in, to be matched with an option's text,
        # when the reply names no option letter and does not guess.
        tail = completion[-400:]
        if not _HEDGE_WORDS.search(tail) and not re.search(r"(?<![A-Za-z$\\])\(?[B-HJ]\)?(?![A-Za-z])", tail):
            answer = extract_final_answer(completion)
    if answer_type == "C2":
        if answer is None:
            lists = _LETTER_LIST.findall(_last_line(completion))
            answer = lists[-1] if lists else None
        else:
            answer = _widen_to_letter_list(answer, completion)
    if answer is None and answer_type in ("C3", "D1", "D2"):
        lines = [line.strip() for line in strip_closing_remarks(completion).strip().splitlines() if line.strip()]
        answer = lines[-1] if lines else None
        if answer_type == "C3":
            # The last of the closing lines that states something ("Hence the statement is true."),
            # past remarks that state nothing ("This matches the check above.").
            stating = [line for line in lines[-3:] if choices.states_something(line)]
            if stating:
                answer = stating[-1]
        if answer is not None and answer_type == "C3":
            answer = _emphasised_term(answer) or answer
        if answer is not None and answer_type == "D1":
            answer = _emphasised_term(answer) or concluding_clause(answer)
    return answer


_NEGATED = re.compile(r"\b(?:not|no|never|neither|nor|isn't|aren't|cannot|can't)\b", re.IGNORECASE)
_BOLD = re.compile(r"\*\*([^*\n]{1,60}?)\*\*")


def _emphasised_term(line: str) -> str | None:
    """The one bold phrase of a concluding sentence ("It's called the **sample space** of the
    experiment.", "The statement is **false**."): the term the sentence states."""
    bold = _BOLD.findall(line)
    if len(bold) != 1 or not bold[0].strip():
        return None
    # "It is **not** symmetric", "The matrix is not **singular**": the negation belongs to the answer.
    if _NEGATED.search(line):
        return None
    return bold[0].strip()


# Two pieces of math joined by "or" ("$5\\pi$, or possibly $10\\pi$") or an explicit hedge word.
_HEDGE = re.compile(r"\$[^$]*\bor\b[^$]*\$|\bor\s+(?:possibly|perhaps|maybe)\b", re.IGNORECASE)


_HEDGE_WORDS = re.compile(
    r"\b(?:probably|possibly|perhaps|maybe|(?:might|could|may)\s+also\s+be|either|not\s+(?:sure|certain)|unsure|cannot\s+decide)\b",
    re.IGNORECASE,
)
_INEQUALITY = re.compile(r"<|>|\\(?:lt|gt|leq?|geq?|leqslant|geqslant)(?![a-zA-Z])")


def hedged(extracted: str, answer_type: str | None = None) -> bool:
    """True when the extracted final answer names more than one candidate. For an interval answer,
    inequalities joined by "or" ("$x<-2$ or $x \\ge 3$") are a union, not a guess."""
    if _HEDGE_WORDS.search(extracted):
        return True
    if _HEDGE.search(extracted) is None:
        return False
    if answer_type == "B3":
        parts = re.split(r"\bor\b", extracted)
        return not all(_INEQUALITY.search(part) for part in parts)
    if answer_type in MULTI_PART_TYPES or answer_type == "A5":
        # "$x = 2$ or $x = 3$": the solutions of one equation, each assigned to the same unknown.
        names = {_assigned_name(part) for part in re.split(r"\bor\b", extracted)}
        return len(names) != 1 or None in names
    return True


_ASSIGNED = re.compile(r"^[\s$,]*([A-Za-z]|\\[a-zA-Z]+)\s*=(?!=)[^=<>]*?[\s$,.]*$")


def _assigned_name(part: str) -> str | None:
    match = _ASSIGNED.match(part)
    return match.group(1) if match else None
