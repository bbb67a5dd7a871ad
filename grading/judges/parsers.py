"""Turn a judge's raw output into correct / incorrect / inconclusive, one parser per output contract.

Pure: no Django imports. Matching is tolerant of case, Markdown emphasis, LaTeX text wrappers and
trailing punctuation; anything that does not follow the contract is inconclusive, with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .templates import BOXED_YES_NO, COT_EXTRACT, FINAL_JUDGMENT

CORRECT = "correct"
INCORRECT = "incorrect"
INCONCLUSIVE = "inconclusive"

THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
MARKDOWN_NOISE = re.compile(r"[*_`~]+")
LEADING_NOISE = re.compile(r"^[\s#>\-+•]+")
TRAILING_PUNCTUATION = " \t.,;:!?。\"'()[]"
LATEX_TEXT_COMMAND = re.compile(r"\\(?:textbf|textit|text|mathrm|mathbf|mbox|operatorname)\s*(?=\{)")
FINAL_JUDGMENT_LINE = re.compile(r"final\s+judg(?:e)?ment\s*[:：=-]?\s*(.*)$")
HARD_TO_JUDGE = ("hard to judge", "hard-to-judge", "difficult to judge", "cannot judge", "can't judge", "unsure")


@dataclass(frozen=True)
class ParsedVerdict:
    status: str
    answer: str = ""
    explanation: str = ""
    reason: str = ""


def strip_thinking(text: str) -> str:
    """Drop `<think>` blocks, whose drafts must not be mistaken for the final verdict."""
    return THINK_BLOCK.sub("", text).strip()


def normalize(fragment: str) -> str:
    text = LATEX_TEXT_COMMAND.sub("", fragment)
    text = MARKDOWN_NOISE.sub("", text).replace("{", "").replace("}", "")
    text = LEADING_NOISE.sub("", text)
    text = " ".join(text.split()).lower()
    return text.strip(TRAILING_PUNCTUATION)


def first_word(text: str) -> str:
    words = re.findall(r"[a-z]+", text)
    return words[0] if words else ""


def parse_final_judgment(raw: str) -> ParsedVerdict:
    """VerifyBench contract: the reply ends with `Final Judgment: Yes` or `Final Judgment: No`."""
    text = strip_thinking(raw)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ParsedVerdict(INCONCLUSIVE, reason="The judge returned an empty reply.")
    for index in range(len(lines) - 1, -1, -1):
        match = FINAL_JUDGMENT_LINE.search(normalize(lines[index]))
        if not match:
            continue
        value = first_word(match.group(1))
        explanation = "\n".join(lines[:index]).strip()
        if value == "yes":
            return ParsedVerdict(CORRECT, answer="Yes", explanation=explanation)
        if value == "no":
            return ParsedVerdict(INCORRECT, answer="No", explanation=explanation)
        return ParsedVerdict(
            INCONCLUSIVE,
            answer=match.group(1)[:200],
            explanation=explanation,
            reason=f"The final judgment line says {match.group(1)[:80]!r}, neither Yes nor No.",
        )
    return ParsedVerdict(INCONCLUSIVE, explanation=text, reason="The reply has no 'Final Judgment: Yes/No' line.")


def boxed_contents(text: str) -> list[str]:
    """The contents of every `\\boxed{...}` (and `\\fbox{...}`), with nested braces balanced."""
    contents = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, start = 1, match.end()
        for position in range(start, len(text)):
            if text[position] == "{":
                depth += 1
            elif text[position] == "}":
                depth -= 1
                if depth == 0:
                    contents.append(text[start:position])
                    break
    return contents


def parse_boxed_yes_no(raw: str) -> ParsedVerdict:
    """LiveMathBench contract: `\\boxed{yes}` or `\\boxed{no}`; "hard to judge" counts as no."""
    text = strip_thinking(raw)
    boxes = boxed_contents(text)
    if not boxes:
        return ParsedVerdict(INCONCLUSIVE, explanation=text, reason="The reply has no \\boxed{yes} or \\boxed{no}.")
    content = normalize(boxes[-1])
    if content == "yes":
        return ParsedVerdict(CORRECT, answer="yes", explanation=text)
    if content == "no":
        return ParsedVerdict(INCORRECT, answer="no", explanation=text)
    if any(phrase in content for phrase in HARD_TO_JUDGE):
        return ParsedVerdict(INCORRECT, answer=content, explanation=text, reason="Hard to judge counts as no.")
    return ParsedVerdict(
        INCONCLUSIVE,
        answer=boxes[-1][:200],
        explanation=text,
        reason=f"The last box holds {boxes[-1][:80]!r}, neither yes nor no.",
    )


EXTRACTION_LABELS = {"yes": CORRECT, "no": INCORRECT, "inconclusive": INCONCLUSIVE}


def parse_extraction(raw: str, *, judgment: str = "") -> ParsedVerdict:
    """U-MATH contract, second call: one word, Yes / No / Inconclusive. Inconclusive is never correct."""
    text = strip_thinking(raw)
    candidates = [normalize(text)]
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        candidates.append(normalize(lines[-1]))
    label = None
    for candidate in candidates:
        if candidate in EXTRACTION_LABELS:
            label = candidate
            break
        if first_word(candidate) in EXTRACTION_LABELS:
            label = first_word(candidate)
            break
        words = {word for word in re.findall(r"[a-z]+", candidate) if word in EXTRACTION_LABELS}
        if len(words) == 1 and len(candidate.split()) <= 6:
            label = words.pop()
            break
    if label is None:
        return ParsedVerdict(
            INCONCLUSIVE,
            explanation=judgment,
            reason=f"The extraction reply {text[:80]!r} is not one of Yes, No or Inconclusive.",
        )
    status = EXTRACTION_LABELS[label]
    reason = "The judge's assessment was extracted as Inconclusive." if status == INCONCLUSIVE else ""
    return ParsedVerdict(status, answer=label.capitalize(), explanation=judgment, reason=reason)


def parse_output(contract: str, raw: str, *, extraction_raw: str = "") -> ParsedVerdict:
    """Parse the output of one judgement; for cot_extract, `raw` is the free judgement and
    `extraction_raw` the reply of the extraction call."""
    if contract == FINAL_JUDGMENT:
        return parse_final_judgment(raw)
    if contract == BOXED_YES_NO:
        return parse_boxed_yes_no(raw)
    if contract == COT_EXTRACT:
        return parse_extraction(extraction_raw, judgment=strip_thinking(raw))
    raise ValueError(f"Unknown judge output contract {contract!r}.")
