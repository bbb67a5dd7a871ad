"""The pure parts of the judges: output parsers, prompt rendering, cache keys, retry timing."""

from datetime import UTC, datetime

import pytest

from grading.judges.caching import judge_cache_key
from grading.judges.client import MAX_RETRY_AFTER_SECONDS, backoff_seconds, retry_after_seconds
from grading.judges.parsers import (
    CORRECT,
    INCONCLUSIVE,
    INCORRECT,
    parse_boxed_yes_no,
    parse_extraction,
    parse_final_judgment,
    parse_output,
)
from grading.judges.templates import (
    BOXED_YES_NO,
    COT_EXTRACT,
    DEFAULT_TEMPLATES,
    FINAL_JUDGMENT,
    NO_REFERENCE_TEXT,
    TemplateError,
    TemplateText,
    render_extraction_messages,
    render_messages,
    validate_template_text,
)


@pytest.mark.parametrize(
    "raw, status",
    [
        ("The answers agree.\nFinal Judgment: Yes", CORRECT),
        ("Reasoning.\nFinal Judgment: No", INCORRECT),
        ("Reasoning.\n**Final Judgment: Yes**", CORRECT),
        ("Reasoning.\n**Final Judgment:** no.", INCORRECT),
        ("final judgement: YES!", CORRECT),
        ("## Final Judgment: `Yes`\n\n", CORRECT),
        ("<think>Final Judgment: No</think>\nThey match.\nFinal Judgment: Yes", CORRECT),
        ("Final Judgment: Yes\nOn reflection the units differ.\nFinal Judgment: No", INCORRECT),
    ],
)
def test_final_judgment_is_read_tolerantly(raw, status):
    assert parse_final_judgment(raw).status == status


@pytest.mark.parametrize(
    "raw, reason_part",
    [
        ("", "empty"),
        ("The response looks right to me.", "no 'Final Judgment"),
        ("Final Judgment: Maybe", "neither Yes nor No"),
        ("<think>Final Judgment: Yes", "empty"),
    ],
)
def test_malformed_final_judgment_is_inconclusive_with_a_reason(raw, reason_part):
    parsed = parse_final_judgment(raw)
    assert parsed.status == INCONCLUSIVE
    assert reason_part in parsed.reason


def test_final_judgment_keeps_the_reasoning_as_explanation():
    parsed = parse_final_judgment("Both equal 1/2.\nFinal Judgment: Yes")
    assert (parsed.answer, parsed.explanation) == ("Yes", "Both equal 1/2.")


@pytest.mark.parametrize(
    "raw, status",
    [
        ("They agree. \\boxed{yes}", CORRECT),
        ("\\boxed{No}", INCORRECT),
        ("\\boxed{\\text{Yes}}.", CORRECT),
        ("\\boxed{ **no** }", INCORRECT),
        ("First \\boxed{yes}, but then \\boxed{no}", INCORRECT),
        ("\\boxed{hard to judge}", INCORRECT),
        ("\\boxed{\\text{{yes}}}", CORRECT),
    ],
)
def test_boxed_yes_no_is_read_tolerantly(raw, status):
    assert parse_boxed_yes_no(raw).status == status


@pytest.mark.parametrize(
    "raw", ["Yes, they match.", "\\boxed{maybe}", "\\boxed{yes", "<think>\\boxed{yes}</think> unsure"]
)
def test_malformed_boxed_output_is_inconclusive(raw):
    parsed = parse_boxed_yes_no(raw)
    assert parsed.status == INCONCLUSIVE
    assert parsed.reason


@pytest.mark.parametrize(
    "raw, status",
    [
        ("Yes", CORRECT),
        ("no.", INCORRECT),
        ("**Inconclusive**", INCONCLUSIVE),
        ("No, the assessment finds a different value.", INCORRECT),
        ("The conclusion is:\nYes", CORRECT),
    ],
)
def test_extraction_reply_is_read_tolerantly(raw, status):
    assert parse_extraction(raw).status == status


def test_inconclusive_extraction_says_so_and_an_unreadable_one_is_inconclusive_too():
    assert "Inconclusive" in parse_extraction("Inconclusive").reason
    unreadable = parse_extraction("It is hard to say whether yes or no applies here at all.")
    assert unreadable.status == INCONCLUSIVE
    assert "not one of Yes, No or Inconclusive" in unreadable.reason


def test_cot_contract_uses_the_extraction_reply_and_keeps_the_judgement():
    parsed = parse_output(COT_EXTRACT, "Long reasoning: correct.", extraction_raw="Yes")
    assert (parsed.status, parsed.explanation) == (CORRECT, "Long reasoning: correct.")
    with pytest.raises(ValueError):
        parse_output("unknown", "Yes")


def test_rendering_substitutes_once_and_leaves_latex_braces_alone():
    template = next(t for t in DEFAULT_TEMPLATES if t.contract == BOXED_YES_NO)
    messages = render_messages(template, question="Find x^{2} {reference}", reference="4", completion="x = 4")
    user = messages[-1]["content"]
    assert messages[0]["role"] == "system"
    assert "Find x^{2} {reference}" in user
    assert "\\boxed{yes}" in user and "x = 4" in user


def test_rendering_without_reference_says_so():
    template = DEFAULT_TEMPLATES[0]
    user = render_messages(template, question="Q", reference="4", completion="C", use_reference=False)[-1]["content"]
    assert NO_REFERENCE_TEXT in user and "\n4\n" not in user


def test_extraction_messages_only_exist_for_cot_templates():
    cot = next(t for t in DEFAULT_TEMPLATES if t.contract == COT_EXTRACT)
    assert "MY JUDGEMENT" in render_extraction_messages(cot, judgment="MY JUDGEMENT")[0]["content"]
    with pytest.raises(TemplateError):
        render_extraction_messages(DEFAULT_TEMPLATES[0], judgment="x")


@pytest.mark.parametrize(
    "contract, user, extraction, message",
    [
        ("nonsense", "{question} {completion}", "", "Unknown contract"),
        (FINAL_JUDGMENT, "{question} only", "", "{completion}"),
        (COT_EXTRACT, "{question} {completion}", "no placeholder", "{judgment}"),
        (BOXED_YES_NO, "{question} {completion}", "{judgment}", "Only cot_extract"),
    ],
)
def test_unusable_templates_are_rejected(contract, user, extraction, message):
    with pytest.raises(TemplateError, match=message.replace("{", r"\{").replace("}", r"\}")):
        validate_template_text(
            contract=contract, system_template="", user_template=user, extraction_template=extraction
        )


def test_cache_key_covers_every_input():
    base = dict(
        template_name="t",
        template_version=1,
        model="m",
        base_url="http://h/v1",
        messages=[{"role": "user", "content": "x"}],
        temperature=0,
        max_tokens=100,
    )
    key = judge_cache_key(**base)
    assert len(key) == 64
    assert judge_cache_key(**{**base, "base_url": "http://h/v1/"}) == key
    variants = [
        {"template_version": 2},
        {"template_name": "u"},
        {"model": "n"},
        {"base_url": "http://other/v1"},
        {"messages": [{"role": "user", "content": "y"}]},
        {"temperature": 0.5},
        {"max_tokens": 200},
    ]
    assert len({judge_cache_key(**{**base, **variant}) for variant in variants} | {key}) == len(variants) + 1


def test_retry_after_headers():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "100000"}) == MAX_RETRY_AFTER_SECONDS
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds({"retry-after": "Wed, 01 Jan 2025 12:00:05 GMT"}, now=now) == 5.0


def test_backoff_doubles_with_jitter_within_bounds():
    assert backoff_seconds(1, 1.0, 0.0) == 0.5
    assert backoff_seconds(1, 1.0, 0.999) < 1.0
    assert backoff_seconds(3, 1.0, 0.0) == 2.0
    assert backoff_seconds(30, 1.0, 0.0) == 30.0


def test_default_templates_cover_the_three_contracts():
    assert sorted(t.contract for t in DEFAULT_TEMPLATES) == sorted([FINAL_JUDGMENT, COT_EXTRACT, BOXED_YES_NO])
    assert all(isinstance(t, TemplateText) and t.version == 1 for t in DEFAULT_TEMPLATES)
