"""Short string answers (D1 specific wording) and semantic strings (D2)."""

from __future__ import annotations

import re

from grading.answercheck.normalize import normalize_words
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison

_NEGATIONS = {"not", "no", "never", "neither", "nor", "cannot", "non", "isn't", "doesn't", "without"}
_STOPWORDS = {
    "is",
    "are",
    "was",
    "be",
    "of",
    "in",
    "on",
    "to",
    "and",
    "or",
    "it",
    "its",
    "this",
    "that",
    "which",
    "for",
    "by",
    "with",
    "as",
    "at",
    "from",
    "so",
    "answer",
    "final",
    "therefore",
    "thus",
    "they",
    "we",
}


# Subjects and verbs that only frame a statement: "they are perpendicular" states "perpendicular".
_FRAMING_WORDS = {"it", "they", "is", "are", "this", "answer", "final", "therefore", "thus", "so"}


def _same_statement(predicted_words: str, reference_words: str) -> bool:
    """The same words once framing subjects and verbs are dropped ('perpendicular' / 'they are
    perpendicular', 'it diverges it oscillates' / 'it diverges oscillates')."""

    def core(text: str) -> list[str]:
        return [word for word in text.split() if word not in _FRAMING_WORDS]

    predicted_core = core(predicted_words)
    return bool(predicted_core) and predicted_core == core(reference_words)


def _content_words(text: str) -> set[str]:
    return {word for word in text.split() if word not in _STOPWORDS}


def _content_list(text: str) -> list[str]:
    return [word for word in text.split() if word not in _STOPWORDS]


_ROMAN_NUMERALS = {
    numeral: value
    for value, numeral in enumerate(("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii"), start=1)
}


def _same_word_form(first: str, second: str) -> bool:
    """Two forms of one word or name: 'pythagoras' / 'pythagorean', 'orthocenter' / 'orthocentre'
    (a shared stem of six letters or more, and endings of at most three), and a numeral written in
    Roman or Arabic digits ('type ii' / 'type 2')."""
    if first == second:
        return True
    for roman, arabic in ((first, second), (second, first)):
        if arabic.isdigit() and _ROMAN_NUMERALS.get(roman) == int(arabic):
            return True
    shared = 0
    for a, b in zip(first, second):
        if a != b:
            break
        shared += 1
    return shared >= 6 and len(first) - shared <= 3 and len(second) - shared <= 3


_GENERIC_HEADS = {"property", "law", "rule", "principle"}


def _without_generic_head(words: list[str]) -> list[str]:
    return words[:-1] if len(words) == 2 and words[-1] in _GENERIC_HEADS else words


def _same_name(predicted_words: str, reference_words: str) -> bool:
    """The same name in another word form or order: "pythagoras theorem", "the theorem of
    pythagoras" and "pythagorean theorem". Only the possessive inversion "B of A" = "A B" of two
    words is allowed as a change of order."""
    # A possessive "'s" is its own word once punctuation is gone ("euclid s algorithm").
    predicted_list = re.sub(r"(?<=\w) s\b", "", predicted_words).split()
    reference_list = re.sub(r"(?<=\w) s\b", "", reference_words).split()
    # "commutative property" names "commutativity": a generic head noun after the one word that matters.
    if len(predicted_list) != len(reference_list):
        predicted_list, reference_list = _without_generic_head(predicted_list), _without_generic_head(reference_list)
    if len(predicted_list) == len(reference_list) and all(
        _same_word_form(a, b) for a, b in zip(predicted_list, reference_list)
    ):
        return True
    for one, other in ((predicted_list, reference_list), (reference_list, predicted_list)):
        if len(one) == 3 and one[1] == "of" and len(other) == 2:
            if _same_word_form(one[0], other[1]) and _same_word_form(one[2], other[0]):
                return True
    return False


# A trailing aside that explains the answer; it must not take the answer back or hedge.
_ASIDE = re.compile(r"^(?P<head>[^()]+?)\s*\((?P<aside>[^()]+)\)\s*\.?\s*$")
_ASIDE_DOUBT = re.compile(
    r"\b(?:or|but|wait|actually|maybe|perhaps|probably|possibly|however|unless|sure|no\b\s*,)|\?", re.IGNORECASE
)
# First words that qualify the predicate rather than name a subject ("sometimes true", "both converge").
_QUALIFIERS = {
    "both",
    "neither",
    "only",
    "all",
    "none",
    "each",
    "every",
    "some",
    "either",
    "one",
    "two",
    "no",
    "sometimes",
    "always",
    "never",
    "usually",
    "often",
    "rarely",
    "also",
    "exactly",
    "almost",
}


def _without_aside(predicted: str, reference_words: str) -> str | None:
    """'the sequence diverges (it oscillates and has no limit)' -> 'the sequence diverges', when the
    aside names none of the reference's words and neither doubts nor corrects."""
    if len(predicted) > 300:
        return None
    match = _ASIDE.match(predicted.strip())
    if match is None or _ASIDE_DOUBT.search(match.group("aside")):
        return None
    aside_words = set(_content_list(normalize_words(match.group("aside"))))
    reference_content = _content_list(reference_words)
    if any(_same_word_form(word, reference) for word in aside_words for reference in reference_content):
        return None
    return normalize_words(match.group("head"))


def _states_the_predicate(predicted_words: str, reference_words: str) -> bool:
    """'diverges' against 'the sequence diverges': the reference names its subject and one
    predicate, and the answer gives that predicate alone."""
    predicted_list, reference_list = _content_list(predicted_words), _content_list(reference_words)
    return (
        len(predicted_list) == 1
        and len(reference_list) == 2
        and reference_list[0] not in _QUALIFIERS
        and not reference_list[0].endswith("ly")
        and _same_word_form(predicted_list[0], reference_list[1])
    )


# "the solution set is empty": the adjective names the empty set too.
_EMPTY = re.compile(r"\bempty\b(?!\s+set)", re.IGNORECASE)
_EMPTY_SET = re.compile(r"\\(?:emptyset|varnothing)(?![a-zA-Z])|∅|\\\{\s*\\\}")


_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X")
_ORDINAL_BEFORE_NOUN = re.compile(
    rf"\b(?:(10|[1-9])(?:st|nd|rd|th)|({'|'.join(_ORDINAL_WORDS)}))\s+([A-Za-z]{{3,}})\b", re.IGNORECASE
)
_NOUN_WITH_ROMAN = re.compile(r"\b([A-Z][a-z]{2,})\s+(X|IX|IV|V?I{1,3}|V)\b")


def _numbered_nouns(text: str) -> str:
    """'second quadrant', '2nd quadrant' and 'Quadrant II' -> 'quadrant 2': a noun numbered by an ordinal,
    as a numeral or a word before it or a Roman numeral after it, written one way."""

    def ordinal(match: re.Match[str]) -> str:
        number = int(match.group(1)) if match.group(1) else _ORDINAL_WORDS.index(match.group(2).lower()) + 1
        return f"{match.group(3).lower()} {number}"

    text = _ORDINAL_BEFORE_NOUN.sub(ordinal, text)
    return _NOUN_WITH_ROMAN.sub(lambda match: f"{match.group(1).lower()} {_ROMAN.index(match.group(2)) + 1}", text)


def compare_strings(predicted: str, reference: str, *, semantic: bool) -> Comparison:
    predicted, reference = _numbered_nouns(predicted), _numbered_nouns(reference)
    # "$\\emptyset$" and "the empty set" are one answer in symbols and in words.
    predicted, reference = (
        _EMPTY.sub("empty set", _EMPTY_SET.sub(" the empty set ", text)) for text in (predicted, reference)
    )
    predicted_words, reference_words = normalize_words(predicted), normalize_words(reference)
    if not reference_words:
        return Comparison(INCONCLUSIVE, "the reference has no words to compare")
    if not predicted_words:
        return Comparison(INCORRECT, "the answer is empty after normalization")
    if predicted_words == reference_words:
        return Comparison(CORRECT, f"same wording after normalization: {reference_words!r}")
    predicted_negated = bool(_NEGATIONS & set(predicted_words.split()))
    reference_negated = bool(_NEGATIONS & set(reference_words.split()))
    if predicted_negated == reference_negated and _same_name(predicted_words, reference_words):
        return Comparison(CORRECT, f"{predicted_words!r} is {reference_words!r} in another word form")
    if _same_statement(predicted_words, reference_words):
        return Comparison(CORRECT, f"{predicted_words!r} states {reference_words!r} without its framing words")
    head = _without_aside(predicted, reference_words)
    if head is not None and head == reference_words:
        return Comparison(CORRECT, f"the answer states {reference_words!r} and explains it in an aside")
    if (
        semantic
        and not predicted_negated
        and not reference_negated
        and _states_the_predicate(predicted_words, reference_words)
    ):
        return Comparison(CORRECT, f"{predicted_words!r} is the predicate of {reference_words!r}")
    # A hyphen joins a modifier to the word ('skew-symmetric', 'non-linear'): a different term.
    contains = re.search(rf"(?<![\w-]){re.escape(reference_words)}(?![\w-])", predicted_words) is not None
    if (
        contains
        and predicted_negated == reference_negated
        and len(predicted_words.split()) <= len(reference_words.split()) + 6
    ):
        return Comparison(CORRECT, f"the answer states the reference wording {reference_words!r}")
    # "It is called the centroid (its centre of mass)": the wording stated before an aside.
    if (
        head is not None
        and re.search(rf"(?<![\w-]){re.escape(reference_words)}(?![\w-])", head)
        and predicted_negated == reference_negated
        and len(head.split()) <= len(reference_words.split()) + 6
    ):
        return Comparison(CORRECT, f"the answer states the reference wording {reference_words!r} before an aside")
    shared = _content_words(predicted_words) & _content_words(reference_words)
    short = len(predicted_words.split()) <= 4 and len(reference_words.split()) <= 4
    # A paraphrase can share no word with the reference ("it blows up" / "diverges"), so a semantic
    # answer is only called different when it is a single word against a short reference.
    very_short = len(_content_words(predicted_words)) <= 1 and len(_content_words(reference_words)) <= 2
    if not shared and (very_short if semantic else short):
        return Comparison(INCORRECT, f"{predicted_words!r} and {reference_words!r} share no content word")
    if short and not semantic and not contains:
        return Comparison(INCORRECT, f"{predicted_words!r} does not contain the required wording {reference_words!r}")
    return Comparison(INCONCLUSIVE, f"{predicted_words!r} vs {reference_words!r} needs a semantic judgment")
