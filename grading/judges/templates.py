"""Prompt templates for the three published judge output contracts, and their rendering.

Pure: no Django imports. Placeholders are `{question}`, `{reference}` and `{completion}` in the
system and user templates, and `{judgment}` in the extraction template. Any other braces (LaTeX,
`\\boxed{yes}`) are left alone, so templates never need escaping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FINAL_JUDGMENT = "final_judgment"
COT_EXTRACT = "cot_extract"
BOXED_YES_NO = "boxed_yes_no"
CONTRACTS = (FINAL_JUDGMENT, COT_EXTRACT, BOXED_YES_NO)

PLACEHOLDER_PATTERN = re.compile(r"\{(question|reference|completion|judgment)\}")
NO_REFERENCE_TEXT = "(No reference answer is given. Judge the response on its own merits.)"


class TemplateError(ValueError):
    """A prompt template that cannot be used for its contract."""


@dataclass(frozen=True)
class TemplateText:
    name: str
    version: int
    contract: str
    system_template: str
    user_template: str
    extraction_template: str = ""

    @classmethod
    def from_model(cls, template) -> TemplateText:
        return cls(
            name=template.name,
            version=template.version,
            contract=template.contract,
            system_template=template.system_template,
            user_template=template.user_template,
            extraction_template=template.extraction_template,
        )


def validate_template_text(
    *, contract: str, system_template: str, user_template: str, extraction_template: str
) -> None:
    """Raise TemplateError when a template could not produce a usable prompt for its contract."""
    if contract not in CONTRACTS:
        raise TemplateError(f"Unknown contract {contract!r}; expected one of {', '.join(CONTRACTS)}.")
    combined = f"{system_template}\n{user_template}"
    for placeholder in ("{question}", "{completion}"):
        if placeholder not in combined:
            raise TemplateError(f"The system or user template must contain the placeholder {placeholder}.")
    if "{judgment}" in combined:
        raise TemplateError("{judgment} belongs in the extraction template only.")
    if contract == COT_EXTRACT:
        if "{judgment}" not in extraction_template:
            raise TemplateError("A cot_extract template needs an extraction template containing {judgment}.")
    elif extraction_template.strip():
        raise TemplateError(f"Only cot_extract templates take an extraction template, not {contract}.")


def fill(text: str, values: dict[str, str]) -> str:
    """Substitute placeholders in one pass, so braces inside the inserted values are never reinterpreted."""
    return PLACEHOLDER_PATTERN.sub(lambda match: values.get(match.group(1), match.group(0)), text)


def render_messages(
    template: TemplateText, *, question: str, reference: str, completion: str, use_reference: bool = True
) -> list[dict[str, str]]:
    """The chat messages of the first (or only) judge call."""
    values = {
        "question": question,
        "reference": reference if use_reference and reference.strip() else NO_REFERENCE_TEXT,
        "completion": completion,
    }
    messages = []
    if template.system_template.strip():
        messages.append({"role": "system", "content": fill(template.system_template, values)})
    messages.append({"role": "user", "content": fill(template.user_template, values)})
    return messages


def render_extraction_messages(template: TemplateText, *, judgment: str) -> list[dict[str, str]]:
    """The chat messages of the second call of a cot_extract judge: map a free judgement to a label."""
    if template.contract != COT_EXTRACT:
        raise TemplateError(f"Template {template.name} v{template.version} has no extraction step.")
    return [{"role": "user", "content": fill(template.extraction_template, {"judgment": judgment})}]


JUDGE_SYSTEM = (
    "You grade responses to math and reasoning problems. You compare the final answer of a response "
    "with a reference answer and decide whether the response is correct. You are strict about the "
    "value of the answer and lenient about its form."
)

EQUIVALENCE_RULES = """Rules:
- Judge the final answer only; the quality of the reasoning does not matter.
- Different forms of the same answer are correct: unsimplified but equal expressions, fractions and decimals of the same value, the same values listed in another order when order does not matter, equivalent intervals, sets or equations, a choice given by its letter or by its content.
- A response with no final answer, with several conflicting final answers, or with only part of a multi-part answer is incorrect.
- When the reference asks for specific wording, the response must state the same thing."""

FINAL_JUDGMENT_USER = f"""Decide whether the response below answers the question correctly, using the reference answer.

{EQUIVALENCE_RULES}

Question:
{{question}}

Reference answer:
{{reference}}

Response:
{{completion}}

Explain your comparison in a few sentences. Then end your reply with a last line that is exactly `Final Judgment: Yes` if the final answer of the response is correct, or exactly `Final Judgment: No` if it is not."""

COT_USER = f"""Assess whether the response below answers the question correctly, using the reference answer.

{EQUIVALENCE_RULES}

Question:
{{question}}

Reference answer:
{{reference}}

Response:
{{completion}}

Think it through step by step: find the final answer of the response, compare it with the reference answer, and explain whether they agree. Finish with your conclusion in plain words."""

COT_EXTRACTION = """Below is an assessment of whether a response to a problem is correct. Report the conclusion of the assessment as exactly one word:
- Yes: the assessment concludes that the response is correct.
- No: the assessment concludes that the response is incorrect.
- Inconclusive: the assessment reaches no clear conclusion.

Assessment:
{judgment}

Reply with one word: Yes, No or Inconclusive."""

BOXED_USER = f"""Decide whether the response below answers the question correctly, using the reference answer.

{EQUIVALENCE_RULES}

Question:
{{question}}

Reference answer:
{{reference}}

Response:
{{completion}}

If the final answer of the response is equivalent to the reference answer, end your reply with \\boxed{{yes}}. If it is not equivalent, or if it is hard to judge, end your reply with \\boxed{{no}}."""

DEFAULT_TEMPLATES: tuple[TemplateText, ...] = (
    TemplateText(
        name="verifybench-final-judgment",
        version=1,
        contract=FINAL_JUDGMENT,
        system_template=JUDGE_SYSTEM,
        user_template=FINAL_JUDGMENT_USER,
    ),
    TemplateText(
        name="umath-cot-extract",
        version=1,
        contract=COT_EXTRACT,
        system_template=JUDGE_SYSTEM,
        user_template=COT_USER,
        extraction_template=COT_EXTRACTION,
    ),
    TemplateText(
        name="livemathbench-boxed",
        version=1,
        contract=BOXED_YES_NO,
        system_template=JUDGE_SYSTEM,
        user_template=BOXED_USER,
    ),
)

for _template in DEFAULT_TEMPLATES:
    validate_template_text(
        contract=_template.contract,
        system_template=_template.system_template,
        user_template=_template.user_template,
        extraction_template=_template.extraction_template,
    )
