"""Multiple-choice letters, option texts and finite-state answers (true/false, yes/no, ...)."""

from __future__ import annotations

import re

from grading.answercheck.extract import final_answer_span
from grading.answercheck.normalize import clean_latex, normalize_words, plain_text, strip_assignment
from grading.answercheck.verdict import CORRECT, INCONCLUSIVE, INCORRECT, Comparison

_LETTERS = "ABCDEFGHIJ"
_OPTION_LINE = re.compile(r"(?:^|\n|\s)\(?([A-J])[\).:]\s+(.+?)(?=(?:\s\(?[A-J][\).:]\s)|\n|$)", re.DOTALL)
# "(B) 42", "B. Paris", "B) 2x", "option D" -- but not the article in "A triangle".
_LEADING_LETTER = re.compile(
    r"^(?:(?:options?|choices?|answer)\s*[:\-]?\s*)?(?:\(\s*([A-J])\s*\)|([A-J])(?:[.):]|$))", re.IGNORECASE
)
_SEPARATORS = re.compile(r"\s*(?:,|;|&|/|\band\b|\bor\b|\s)\s*", re.IGNORECASE)
_FILLER = re.compile(r"\b(?:options?|choices?|both|answers?|are|is|correct|the)\b", re.IGNORECASE)


def question_options(question: str | None) -> dict[str, str]:
    """Option letter -> normalized option text for a question that lists '(A) ...' / 'B. ...' options."""
    if not question:
        return {}
    options: dict[str, str] = {}
    for match in _OPTION_LINE.finditer(question):
        letter, text = match.group(1), match.group(2).strip()
        if letter not in options and text:
            options[letter] = normalize_words(text)
    letters = "".join(sorted(options))
    # Only a run starting at A counts as an option list; stray "B." inside prose does not.
    return options if letters and _LETTERS.startswith(letters[: len(letters)]) and len(options) >= 2 else {}


def choice_letters(answer: str, options: dict[str, str] | None = None) -> set[str] | None:
    """Letters an answer selects: 'B', '(B)', 'B. 42', 'A and C', 'AC', '\\text{(B)}', or an option's text."""
    text = plain_text(answer).strip().strip("*").strip()
    text = re.sub(r"[{}]", "", text)
    bare = _FILLER.sub(" ", text).strip(" .:")
    tokens = [token.strip("().[]* ") for token in _SEPARATORS.split(bare) if token.strip("().[]* ")]
    if tokens and all(len(token) == 1 and token.upper() in _LETTERS and token.isupper() for token in tokens):
        return set(tokens)
    if re.fullmatch(r"[A-J]{2,6}", bare) and len(set(bare)) == len(bare):
        return set(bare)
    leading = _LEADING_LETTER.match(text)
    letter = leading and (leading.group(1) or leading.group(2))
    if letter and letter.isupper():
        return {letter}
    named = re.match(r"^(?:options?|choices?)\s+([A-J])\b", text, re.IGNORECASE)
    if named:
        return {named.group(1).upper()}
    if options:
        # Braces matter to the option's words ("\\frac{1}{x}" reads "1 x"); an answer that matches
        # several options once normalized ("x" and "\\ln x") names none of them.
        normalized = normalize_words(plain_text(answer).strip().strip("*").strip())
        matches = {letter for letter, option in options.items() if option and option == normalized}
        if len(matches) == 1:
            return matches
    return None


def _math_key(text: str) -> str:
    return re.sub(r"\s+|\$|\\left|\\right|\\[,;!]|\\[dt](?=frac)", "", text).rstrip(".")


def option_by_value(answer: str, question: str | None) -> str | None:
    """The one option whose text, as written, is the answer ("\\frac{1}{x}" for "(B) $\\frac{1}{x}$")."""
    key = _math_key(answer)
    if not key:
        return None
    options = _raw_options(question)
    matches = [letter for letter, text in options.items() if _math_key(text) == key]
    if not matches:
        # "x = 12" for "(C) $x = 12$", and "12" for it too when no other option has that value.
        value = _math_key(strip_assignment(clean_latex(answer)))
        matches = [
            letter for letter, text in options.items() if _math_key(strip_assignment(clean_latex(text))) == value
        ]
    if not matches and re.search(r"(?<![<>!])=(?!=)", answer) and not re.search(r"[<>]|\\[lg]e", answer):
        # "\\log_2 32 = 5" for "(B) 5": the value a computation ends in.
        value = _math_key(clean_latex(answer).rsplit("=", 1)[-1])
        matches = [letter for letter, text in options.items() if value and _math_key(clean_latex(text)) == value]
    return matches[0] if len(matches) == 1 else None


_BARE_LETTER = re.compile(r"^\s*(?:(?:options?|choices?)\s*)?\(?\s*([A-J])\s*\)?\s*[.:]?\s*$", re.IGNORECASE)


def bare_letter(answer: str) -> str | None:
    """'B', '(B)', 'Option B', '\\text{(B)}' -> 'B'; None for anything else."""
    text = plain_text(answer).strip().strip("*").strip()
    text = re.sub(r"[{}]", "", text)
    match = _BARE_LETTER.match(text)
    if not match:
        return None
    letter = match.group(1)
    # A lone lowercase letter is a variable, not an option; "Option b" is still an option.
    if letter.islower() and not re.match(r"\s*(?:options?|choices?)", text, re.IGNORECASE):
        return None
    return letter.upper()


def _raw_options(question: str | None) -> dict[str, str]:
    """Option letter -> option text as written (not normalized), for options listed in the question."""
    if not question:
        return {}
    options: dict[str, str] = {}
    for match in _OPTION_LINE.finditer(question):
        letter, text = match.group(1), match.group(2).strip()
        if letter not in options and text:
            options[letter] = text.strip().rstrip(";,")
    return options if len(options) >= 2 and set(options) == set(_LETTERS[: len(options)]) else {}


def map_option_letters(
    predicted: str, reference: str, answer_type: str, question: str | None
) -> tuple[str, str] | None:
    """For a question that lists options but whose answer type is not a choice: an option letter on
    either side stands for that option's text ("(B)" against "42" when option B reads 42)."""
    if answer_type in ("C1", "C2") or not question:
        return None
    predicted_letter, reference_letter = bare_letter(predicted), bare_letter(reference)
    if predicted_letter is None and reference_letter is None:
        return None
    options = _raw_options(question)
    if not options:
        return None
    if predicted_letter and reference_letter:
        return options.get(predicted_letter, predicted), options.get(reference_letter, reference)
    if reference_letter:
        return (predicted, options[reference_letter]) if reference_letter in options else None
    return (options[predicted_letter], reference) if predicted_letter in options else None


# "(C) 12", "C) 32", "B. 2", "Option B (the remainder is 2)", "**Option C**: 12": a letter with its option's value.
_OPTION_LABEL = re.compile(
    r"^(?:(?:options?|choices?)\s+\(?\s*([A-J])\s*\)?|\(\s*([A-J])\s*\)|([A-J])\s*[.):])\s*[:\-]?\s*(\S.*)$",
    re.IGNORECASE,
)


def split_option_label(answer: str) -> tuple[str, str] | None:
    """'(C) 12' -> ('C', '12'); None when the answer does not open with an option letter and a value."""
    text = re.sub(r"\*+", "", plain_text(answer)).strip()
    match = _OPTION_LABEL.match(text)
    if not match:
        return None
    letter = next(group for group in match.groups()[:3] if group)
    if letter.islower() and not re.match(r"(?:options?|choices?)\b", text, re.IGNORECASE):
        return None
    value = match.group(4).strip().strip(".").strip()
    if value.startswith("(") and value.endswith(")"):
        value = value[1:-1].strip()
    return letter.upper(), value


def resolve_option_labels(predicted: str, reference: str) -> Comparison | tuple[str, str] | None:
    """An answer or reference written as an option letter with its value ("(C) 12"): letters on both
    sides decide by letter; otherwise the value stands for the answer. None when neither side has
    one (a bare letter against a value is left to the question's options)."""
    predicted_label, reference_label = split_option_label(predicted), split_option_label(reference)
    if predicted_label is None and reference_label is None:
        return None
    predicted_letter = predicted_label[0] if predicted_label else bare_letter(predicted)
    reference_letter = reference_label[0] if reference_label else bare_letter(reference)
    if predicted_letter and reference_letter:
        if predicted_letter == reference_letter:
            return Comparison(CORRECT, f"both name option {reference_letter}")
        return Comparison(INCORRECT, f"option {predicted_letter} named, option {reference_letter} expected")
    # One side names a letter and its value, the other only a value: the values decide.
    return (predicted_label[1] if predicted_label else predicted), (
        reference_label[1] if reference_label else reference
    )


_LETTER_TOKEN = re.compile(r"(?<![A-Za-z'])\(?([A-J])\)?(?![A-Za-z'])")


def letter_in_short_text(text: str) -> str | None:
    """The option a short reply names without an answer phrase: 'A. Because ...' (a letter opening
    the reply), or the only standalone option letter in it ('Because B is valid')."""
    text = (text or "").strip()
    if not text or len(text) > 300:
        return None
    opening = re.match(r"^\**\(?([A-J])\)?[.):]\s", text + " ")
    if opening:
        return opening.group(1)
    letters = set()
    for match in _LETTER_TOKEN.finditer(text):
        letter = match.group(1)
        following = text[match.end() : match.end() + 2]
        if letter == "A" and re.match(r"\s[a-z]", following):
            continue  # the article
        if letter == "I":
            continue
        letters.add(letter)
    return letters.pop() if len(letters) == 1 else None


def compare_choices(predicted: str, reference: str, *, multiple: bool, question: str | None) -> Comparison:
    options = question_options(question)
    reference_letters = choice_letters(reference, options)
    if reference_letters is None:
        # "f'(2) = 4, which is choice (C).": the option a worked reference names at its end.
        named = final_answer_span(reference, fallback=False)
        if named is not None:
            reference_letters = choice_letters(reference[named[0] : named[1]], options)
    if reference_letters is None:
        return Comparison(INCONCLUSIVE, f"cannot read option letters in the reference {reference!r}")
    predicted_letters = choice_letters(predicted, options)
    if predicted_letters is None and not multiple:
        by_value = option_by_value(predicted, question)
        predicted_letters = {by_value} if by_value else None
    if predicted_letters is None:
        return Comparison(INCONCLUSIVE, f"cannot read option letters in the answer {predicted!r}")
    shown = lambda letters: ", ".join(sorted(letters))  # noqa: E731
    if predicted_letters == reference_letters:
        return Comparison(CORRECT, f"selected {shown(predicted_letters)}, expected {shown(reference_letters)}")
    kind = "options" if multiple else "option"
    return Comparison(INCORRECT, f"selected {kind} {shown(predicted_letters)}, expected {shown(reference_letters)}")


_POSITIVE = {"true", "yes", "correct", "valid", "right", "t", "y", "possible", "exists", "holds", "always"}
_NEGATIVE = {"false", "no", "incorrect", "invalid", "wrong", "f", "n", "impossible", "not", "never", "none", "cannot"}
# Proof outcomes and the truth values they amount to: a proved claim is true, a disproved one false.
_PROOF_POLARITY = {"prov": "positive", "disprov": "negative"}


def finite_state(answer: str) -> str | None:
    """'positive' / 'negative' for yes-no style answers ("not valid" is negative), else the normalized words."""
    words = normalize_words(answer).split()
    if not words:
        return None
    if len(words) == 1 and words[0] in ("t", "y"):
        return "positive"
    if len(words) == 1 and words[0] in ("f", "n"):
        return "negative"
    polarities = set()
    for index, word in enumerate(words):
        prefix_negated = word.startswith(("in", "non", "un")) and word[2:].lstrip("n") in _POSITIVE
        if word in _POSITIVE and len(word) > 1:
            negated = index > 0 and words[index - 1] in ("not", "non", "isn't", "never")
            # "no such tour exists"
            negated = negated or (word == "exists" and "no" in words[max(0, index - 3) : index])
            polarities.add("negative" if negated else "positive")
        elif (word in _NEGATIVE and len(word) > 1 and word != "not") or prefix_negated:
            polarities.add("negative")
    if len(polarities) == 1:
        return polarities.pop()
    return " ".join(words)


def states_something(line: str) -> bool:
    """True when a line names a state (yes/no, true/false, valid, proved, ...), not only remarks."""
    words = normalize_words(line).split()
    return any(
        word in _POSITIVE or word in _NEGATIVE or _stem(word) in _PROOF_POLARITY for word in words if len(word) > 1
    )


def _stem(word: str) -> str:
    """'disproven', 'disproved', 'disproves' -> 'disprov'; 'converges', 'convergent' -> 'converg'."""
    for suffix in ("ence", "ent", "ing", "en", "ed", "es", "s", "e", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


_OPPOSITE_PREFIXES = ("dis", "in", "un", "non", "im", "ir", "il")


def _opposite(first: str, second: str) -> bool:
    return any(first == prefix + second or second == prefix + first for prefix in _OPPOSITE_PREFIXES)


_LEADING_POLAR = re.compile(r"^\W*(yes|no|true|false)\b", re.IGNORECASE)


_NEGATING_PREFIXES = ("in", "un", "non", "non-", "im", "ir", "il", "dis")
_QUESTION_NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b", re.IGNORECASE)


def polarity_in_question(answer: str, question: str | None) -> str | None:
    """'positive' / 'negative' for a one-word answer to a yes-no question that names the property
    asked about or its negated form: 'independent' answers "Is the set linearly independent?" with
    yes, 'dependent' with no. None otherwise, or when the question itself negates."""
    words = normalize_words(answer).split()
    if not words or not question:
        return None
    question = re.sub(r"\b(?:yes\s+or\s+no|true\s+or\s+false)\b", " ", question, flags=re.IGNORECASE)
    # "Is it even or odd?" offers alternatives; "Is it not bounded?" turns the answer round.
    if _QUESTION_NEGATION.search(question) or re.search(r"\bor\b", question, re.IGNORECASE):
        return None
    if len(words) > 1:
        return _restated_property(words, set(normalize_words(question).split()))
    word = words[0]
    if len(word) < 4 or word in _POSITIVE or word in _NEGATIVE:
        return None
    question_words = set(normalize_words(question).split())
    if word in question_words:
        return "positive"
    for prefix in _NEGATING_PREFIXES:
        if prefix + word in question_words or (word.startswith(prefix) and word[len(prefix) :] in question_words):
            return "negative"
    return None


_STATEMENT_FILLER = {
    "it",
    "they",
    "this",
    "is",
    "are",
    "be",
    "does",
    "do",
    "indeed",
    "therefore",
    "so",
    "hence",
    "thus",
}
_STATEMENT_NEGATIONS = {"not", "isn't", "aren't", "doesn't", "don't", "never"}


def _restated_property(words: list[str], question_words: set[str]) -> str | None:
    """'the matrix is positive definite' answers "Is the matrix positive definite?" with yes, 'they are
    not linearly independent' answers "Are the vectors linearly independent?" with no: a short statement
    whose every word comes from the question, negated once or not at all."""
    if len(words) > 8:
        return None
    negations = [word for word in words if word in _STATEMENT_NEGATIONS]
    content = [word for word in words if word not in _STATEMENT_FILLER and word not in _STATEMENT_NEGATIONS]
    if len(negations) > 1 or len(content) < 1 or any(word in _POSITIVE or word in _NEGATIVE for word in content):
        return None
    if not all(word in question_words for word in content):
        return None
    # The property itself, not only the subject: at least one word after the verb comes from the question.
    return "negative" if negations else "positive"


def compare_finite_states(predicted: str, reference: str, question: str | None = None) -> Comparison:
    """Same state, or the same stem ('disproven' / 'disproved'); a yes/no reference answered by a
    sentence reads the sentence's first word ('Yes, because ...'), and a conclusion sentence is
    read for the reference's state word ('**Conclusion:** the claim is **proved**.'). A one-word
    answer naming the property a yes-no question asks about, or its negation, answers it."""
    reference_polarity = finite_state(reference)
    answered = polarity_in_question(predicted, question)
    if reference_polarity in ("positive", "negative") and answered is not None:
        if answered == reference_polarity:
            return Comparison(CORRECT, f"{predicted!r} answers the question with {answered}")
        return Comparison(
            INCORRECT, f"{predicted!r} answers the question with {answered}, the reference {reference_polarity}"
        )
    leading = _LEADING_POLAR.match(plain_text(predicted))
    if leading and finite_state(reference) in ("positive", "negative") and len(predicted.split()) > 1:
        predicted = leading.group(1)
    reference_state, predicted_state = finite_state(reference), finite_state(predicted)
    if reference_state is not None and predicted_state is not None and reference_state not in ("positive", "negative"):
        reference_words = reference_state.split()
        predicted_words = normalize_words(predicted).split()
        predicted_stems = [_stem(word) for word in predicted_words]
        if len(reference_words) == 1:
            target = _stem(reference_words[0])
            negated = bool({"not", "neither", "nor", "no", "never"} & set(predicted_words))
            if any(_opposite(stem, target) for stem in predicted_stems):
                return Comparison(INCORRECT, f"the answer states the opposite of {reference_state!r}")
            if target in predicted_stems and not negated and len(predicted_stems) <= 12:
                return Comparison(CORRECT, f"the answer states {reference_state!r} (same word stem)")
        elif len(reference_words) <= 3 and len(predicted_stems) <= 12:
            # "converges conditionally" / "the series is conditionally convergent": every word of a
            # short reference state, in any word form and order, and no negation.
            negated = bool({"not", "neither", "nor", "no", "never"} & set(predicted_words))
            if not negated and all(_stem(word) in predicted_stems for word in reference_words):
                return Comparison(CORRECT, f"the answer states {reference_state!r} (same word stems)")
    if reference_state is None or predicted_state is None:
        return Comparison(INCONCLUSIVE, "empty state")
    # "Disproved" against "The claim is false", "Proved" against "the statement is true" (and back).
    polar = {"positive", "negative"}
    for first, second in ((reference_state, predicted_state), (predicted_state, reference_state)):
        first_words = first.split()
        if len(first_words) == 1 and _stem(first_words[0]) in _PROOF_POLARITY and second in polar:
            if _PROOF_POLARITY[_stem(first_words[0])] == second:
                return Comparison(CORRECT, f"{predicted_state!r} amounts to {reference_state!r}")
            return Comparison(INCORRECT, f"{predicted_state!r} is the opposite of {reference_state!r}")
    if reference_state == predicted_state:
        return Comparison(CORRECT, f"both say {reference_state}")
    polar = {"positive", "negative"}
    if reference_state in polar and predicted_state in polar:
        return Comparison(INCORRECT, f"answer says {predicted_state}, reference says {reference_state}")
    contains = re.search(rf"(?<!\\w){re.escape(reference_state)}(?!\\w)", predicted_state) is not None
    negated = bool({"not", "neither", "nor", "no"} & set(predicted_state.split()))
    if contains and not negated and len(predicted_state.split()) <= 6:
        return Comparison(CORRECT, f"the answer states {reference_state!r}")
    if len(predicted_state.split()) <= 3 and len(reference_state.split()) <= 3:
        return Comparison(INCORRECT, f"state {predicted_state!r} differs from {reference_state!r}")
    return Comparison(INCONCLUSIVE, f"cannot map {predicted_state!r} onto {reference_state!r}")
