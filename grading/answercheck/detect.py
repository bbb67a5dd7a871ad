"""Guess the VerifyBench answer type of a reference answer when none is given."""

from __future__ import annotations

import re

from grading.answercheck.choices import choice_letters, finite_state
from grading.answercheck.compare.splitting import delimited, split_values
from grading.answercheck.normalize import clean_latex, normalize_words, plain_text, strip_assignment
from grading.answercheck.parsing import TooExpensive, Unparseable, is_plain_number, parse_latex

_CHOICE_REFERENCE = re.compile(
    r"^\s*\(?[A-J]\)?\s*(?:[,;&/]|\band\b|\s)?\s*(?:\(?[A-J]\)?\s*(?:[,;&/]|\band\b|\s)?\s*)*$"
)


_DECIMAL_COMMA_REFERENCE = re.compile(r"^-?\d+,(?:\d{2}|\d{4,})$|^-?0,\d+$")


def detect_answer_type(reference: str, question: str | None = None) -> str:
    text = clean_latex(reference)
    if _DECIMAL_COMMA_REFERENCE.match(text.replace(" ", "")) and " " not in text:
        return "A3"  # "1,22", "0,111": a decimal comma, not a list
    bare = plain_text(reference)
    if _CHOICE_REFERENCE.match(bare) and choice_letters(bare) is not None:
        return "C2" if len(choice_letters(bare)) > 1 else "C1"
    if finite_state(bare) in ("positive", "negative") and len(bare.split()) <= 2:
        return "C3"
    if re.search(r"_\s*\{?\s*\(?\d+\)?\s*\}?\s*$", text) and re.match(r"^\(?\s*(?:\\text\{)?[0-9A-Za-z]+", text):
        return "A7"
    if re.search(r"\\begin\{[pbvBV]?matrix\}", text):
        return "B5"
    if (
        re.search(r"\\cup|\\cap|\\infty|\\mathbb\{R\}", text)
        or re.fullmatch(r"[\[(].*,.*[\])]", text)
        and (text[0] != text[-1] and (text[0], text[-1]) not in (("(", ")"), ("[", "]")))
    ):
        return "B3"
    if re.search(r"\\le|\\ge|<|>", text) and not re.search(r"\\left|\\right", text):
        return "B3"
    if text.startswith("\\{") or text.startswith("\\langle"):
        return "B4"
    if re.search(r"\^\s*\{?\s*\\circ|°|\\degree", text):
        return "A6"
    stripped = strip_assignment(text)
    single_assignment = "=" not in stripped and len(split_values(text)) == 1 and _all_numbers([stripped])
    if "=" in text and not single_assignment and not re.search(r"\\le|\\ge|<|>", text):
        return "A8" if _all_numbers(split_values(text)) else "B2"
    shape = delimited(text)
    if shape and shape[0] in ("tuple", "list") and "," in shape[1]:
        return "B4"
    if "," in stripped or re.search(r"\b(?:and|or)\b|\\pm", stripped):
        values = split_values(stripped)
        if len(values) > 1:
            return "A8" if _all_numbers(values) else "B4"
    if re.fullmatch(r"-?\d+\s*:\s*-?\d+(?:\s*:\s*-?\d+)*", stripped):
        return "A3"
    try:
        value = parse_latex(stripped)
    except (Unparseable, TooExpensive):
        words = normalize_words(reference).split()
        return "D1" if len(words) <= 4 else "D2"
    if is_plain_number(value):
        if re.fullmatch(r"-?\d+", stripped.replace(",", "").replace(" ", "")):
            return "A1"
        if re.search(r"(?<![a-zA-Z])i(?![a-zA-Z])", stripped):
            return "A5"
        if "\\sqrt" in stripped or "\\root" in stripped:
            return "A4"
        if re.search(r"\\pi|\\e\b|e\^|\\ln|\\log|\\sin|\\cos|\\tan", stripped):
            return "A2"
        return "A3"
    free = {str(symbol) for symbol in getattr(value, "free_symbols", ())}
    if free == {"i"}:
        return "A5"
    words = normalize_words(reference).split()
    if re.fullmatch(r"[A-Za-z ]+", plain_text(reference)) and (len(words) > 1 or len(words[0]) > 2 if words else False):
        return "D1" if len(words) <= 4 else "D2"
    return "B1"


def _all_numbers(values: list[str]) -> bool:
    for value in values:
        try:
            parsed = parse_latex(value, imaginary_unit=True)
        except (Unparseable, TooExpensive):
            return False
        if not is_plain_number(parsed):
            return False
    return bool(values)
