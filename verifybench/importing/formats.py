"""The registry of import formats and the built-in ones: VerifyBench, mu-MATH, MathArena final answers, and the
app's own minimal format for a lab's model outputs.

Labels are optional in every format: a row without one imports as an unlabeled completion (producing labels is what
the app is for); a row with one keeps it as a prior label. The public fields are also kept as the file spelled them
(`origin`), so that exports give back integer ids as integers and the file's own answer-type strings.

A format names its required fields with their kinds, a detection rule and a parser that turns one JSON object
into a ParsedRecord. The reading, validation, all-or-nothing writing and reporting are shared by every format.
Other apps register their formats from their AppConfig.ready():

    from verifybench.importing import FieldKind, RecordFormat, register_format
    register_format(RecordFormat(name="matharena-proofs", required={...}, parse=..., write_extra=...))
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core import taxonomy

from .records import CompletionRecord, FieldError, ParsedRecord, PriorLabelRecord, QuestionRecord


@dataclass(frozen=True)
class FieldKind:
    expected: str  # how the error message names the expected type
    check: Callable[[Any], bool]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


TEXT = FieldKind("a string", lambda v: isinstance(v, str))
IDENTIFIER = FieldKind("a string or an integer", lambda v: isinstance(v, str) or _is_int(v))
BOOLEAN = FieldKind("true or false", lambda v: isinstance(v, bool))
INTEGER = FieldKind("an integer", _is_int)
NON_NEGATIVE_INTEGER = FieldKind("a non-negative integer", lambda v: _is_int(v) and v >= 0)
LIST = FieldKind("a list", lambda v: isinstance(v, list))
OBJECT = FieldKind("an object", lambda v: isinstance(v, dict))
TEXT_OR_NUMBER = FieldKind(
    "a string or a number", lambda v: isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))
)
TEXT_OR_OBJECT = FieldKind("a string or an object", lambda v: isinstance(v, (str, dict)))
ANY = FieldKind("any value", lambda v: True)


@dataclass(frozen=True)
class WrittenRecord:
    """A record once its rows exist in the database, handed to a format's `write_extra` hook."""

    line: int
    record: ParsedRecord
    dataset_id: int
    question_id: int
    completion_id: int | None
    question_created: bool
    completion_created: bool


@dataclass(frozen=True)
class RecordFormat:
    name: str
    required: Mapping[str, FieldKind]
    parse: Callable[[Mapping[str, Any]], ParsedRecord]
    # None: the format matches an object that has every required field.
    detect: Callable[[Mapping[str, Any]], bool] | None = None
    # PriorLabel.source_format for the labels this format carries; None when it carries none.
    prior_label_source: str | None = None
    # Called inside the import transaction with each batch of written records (created or unchanged);
    # an exception rolls the whole import back.
    write_extra: Callable[[Sequence[WrittenRecord]], None] | None = None
    description: str = ""
    optional: Mapping[str, FieldKind] = field(default_factory=dict)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        if self.detect is not None:
            return self.detect(obj)
        return all(name in obj for name in self.required)


class UnknownFormat(KeyError):
    pass


_REGISTRY: dict[str, RecordFormat] = {}


def register_format(record_format: RecordFormat, *, replace: bool = False) -> RecordFormat:
    if record_format.name in _REGISTRY and not replace and _REGISTRY[record_format.name] is not record_format:
        raise ValueError(f"an import format named {record_format.name!r} is already registered")
    _REGISTRY[record_format.name] = record_format
    return record_format


def unregister_format(name: str) -> None:
    _REGISTRY.pop(name, None)


def get_format(name: str) -> RecordFormat:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownFormat(f"unknown import format {name!r}; known formats: {', '.join(format_names())}") from None


def format_names() -> list[str]:
    return list(_REGISTRY)


def detect_format(obj: Mapping[str, Any]) -> RecordFormat | None:
    """The registered format whose rule matches; when several do, the one that requires the most fields."""
    candidates = [fmt for fmt in _REGISTRY.values() if fmt.matches(obj)]
    if not candidates:
        return None
    return max(candidates, key=lambda fmt: len(fmt.required))


# -- helpers shared by the parsers ------------------------------------------------------------------------------

DOMAINS = ("general_reasoning", "logic_reasoning", "math_reasoning")


def json_type(value: Any) -> str:
    """How an error message names the JSON type of a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def optional_value(obj: Mapping[str, Any], name: str, kind: FieldKind, default: Any = None) -> Any:
    value = obj.get(name)
    if value is None:
        return default
    if not kind.check(value):
        raise FieldError(name, f"must be {kind.expected}, got {json_type(value)}")
    return value


def domain_of(obj: Mapping[str, Any], source: str) -> str:
    domain = optional_value(obj, "domain", TEXT, "")
    if domain:
        if domain not in DOMAINS:
            raise FieldError("domain", f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
        return domain
    prefix = source.split("/", 1)[0]
    return prefix if prefix in DOMAINS else ""


def answer_type_of(obj: Mapping[str, Any], type_field: str = "answer_type", class_field: str = "answer_subtype"):
    try:
        answer_type = taxonomy.parse_answer_type(obj.get(type_field))
    except taxonomy.UnknownAnswerType as exc:
        raise FieldError(type_field, str(exc)) from None
    try:
        answer_class = taxonomy.parse_coarse_class(obj.get(class_field))
    except taxonomy.UnknownAnswerType as exc:
        raise FieldError(class_field, str(exc)) from None
    if answer_type is not None and answer_class is not None and answer_type.coarse != answer_class:
        raise FieldError(
            class_field,
            f"{obj.get(class_field)!r} disagrees with {type_field} {obj.get(type_field)!r} "
            f"(class {answer_type.coarse})",
        )
    code = answer_type.code if answer_type else ""
    return code, (answer_type.coarse if answer_type else answer_class or "")


def leftover(obj: Mapping[str, Any], used: set[str]) -> dict[str, Any]:
    return {key: value for key, value in obj.items() if key not in used}


# -- VerifyBench / VerifyBench-Hard ------------------------------------------------------------------------------

VERIFYBENCH_FIELDS = {
    "question_id": IDENTIFIER,
    "question": TEXT,
    "answer": TEXT_OR_NUMBER,
    "completion_id": IDENTIFIER,
    "completion": TEXT,
    "completion_model": TEXT,
}
VERIFYBENCH_OPTIONAL = {
    "gold_correct": BOOLEAN,
    "answer_type": TEXT,
    "answer_subtype": TEXT,
    "source": TEXT,
    "annotator": LIST,
    "domain": TEXT,
    "subject": TEXT,
    "reference_solution": TEXT,
    "sampling": TEXT_OR_OBJECT,
    "sample_index": NON_NEGATIVE_INTEGER,
    "greedy": BOOLEAN,
}
# Extra fields that describe the question rather than the completion.
_QUESTION_LEVEL_EXTRAS = {"has_image", "image", "difficulty", "level", "competition", "year", "points", "tags"}


def _split_extras(extras: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    question_meta = {k: v for k, v in extras.items() if k in _QUESTION_LEVEL_EXTRAS}
    completion_meta = {k: v for k, v in extras.items() if k not in _QUESTION_LEVEL_EXTRAS}
    return question_meta, completion_meta


def _origin(obj: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {name: obj[name] for name in names if name in obj}


def _prior_label(obj: Mapping[str, Any], field_name: str, annotators: Any = ()) -> PriorLabelRecord | None:
    value = optional_value(obj, field_name, BOOLEAN)
    return None if value is None else PriorLabelRecord(is_correct=value, annotators=list(annotators))


def parse_verifybench(obj: Mapping[str, Any]) -> ParsedRecord:
    source = optional_value(obj, "source", TEXT, "")
    answer_type, answer_class = answer_type_of(obj)
    extras = leftover(obj, set(VERIFYBENCH_FIELDS) | set(VERIFYBENCH_OPTIONAL))
    question_meta, completion_meta = _split_extras(extras)
    sampling = optional_value(obj, "sampling", TEXT_OR_OBJECT, {})
    return ParsedRecord(
        question=QuestionRecord(
            external_id=as_text(obj["question_id"]),
            text=obj["question"],
            final_answer=as_text(obj["answer"]),
            solution=optional_value(obj, "reference_solution", TEXT, ""),
            domain=domain_of(obj, source),
            source=source,
            subject=optional_value(obj, "subject", TEXT, ""),
            answer_type=answer_type,
            answer_class=answer_class,
            metadata=question_meta,
            origin=_origin(obj, "question_id", "answer", "answer_type", "answer_subtype"),
        ),
        completion=CompletionRecord(
            external_id=as_text(obj["completion_id"]),
            model_name=obj["completion_model"],
            text=obj["completion"],
            sampling=sampling,
            sample_index=optional_value(obj, "sample_index", NON_NEGATIVE_INTEGER, 0),
            is_greedy=optional_value(obj, "greedy", BOOLEAN, False),
            metadata=completion_meta,
            origin=_origin(obj, "completion_id"),
        ),
        prior_label=_prior_label(obj, "gold_correct", optional_value(obj, "annotator", LIST, [])),
    )


# -- mu-MATH (with the optional U-MATH problem fields) -----------------------------------------------------------

MUMATH_FIELDS = {
    "uuid": IDENTIFIER,
    "problem_statement": TEXT,
    "golden_answer": TEXT_OR_NUMBER,
    "model": TEXT,
    "model_output": TEXT,
}
MUMATH_OPTIONAL = {"label": BOOLEAN, "subject": TEXT, "has_image": BOOLEAN}


def parse_mumath(obj: Mapping[str, Any]) -> ParsedRecord:
    has_image = optional_value(obj, "has_image", BOOLEAN, None)
    question_meta = {"has_image": has_image} if has_image is not None else {}
    if isinstance(obj.get("image"), str) and obj["image"]:
        question_meta["image"] = obj["image"]
    model = obj["model"]
    return ParsedRecord(
        question=QuestionRecord(
            external_id=as_text(obj["uuid"]),
            text=obj["problem_statement"],
            final_answer=as_text(obj["golden_answer"]),
            domain="math_reasoning",
            subject=optional_value(obj, "subject", TEXT, ""),
            metadata=question_meta,
            origin=_origin(obj, "uuid", "golden_answer"),
        ),
        completion=CompletionRecord(
            external_id=model,
            model_name=model,
            text=obj["model_output"],
            metadata=leftover(obj, set(MUMATH_FIELDS) | set(MUMATH_OPTIONAL) | {"image"}),
        ),
        prior_label=_prior_label(obj, "label"),
    )


# -- MathArena final-answer outputs ------------------------------------------------------------------------------

MATHARENA_FIELDS = {
    "problem_idx": IDENTIFIER,
    "problem": TEXT,
    "model_name": TEXT,
    "model_config": TEXT_OR_OBJECT,
    "idx_answer": NON_NEGATIVE_INTEGER,
    "answer": TEXT,
    "gold_answer": TEXT_OR_NUMBER,
}
MATHARENA_OPTIONAL = {"parsed_answer": ANY, "correct": BOOLEAN}


def parse_matharena(obj: Mapping[str, Any]) -> ParsedRecord:
    model_name = obj["model_name"]
    sample_index = obj["idx_answer"]
    metadata = leftover(obj, set(MATHARENA_FIELDS) | set(MATHARENA_OPTIONAL))
    if "parsed_answer" in obj:
        metadata["parsed_answer"] = obj["parsed_answer"]
    return ParsedRecord(
        question=QuestionRecord(
            external_id=as_text(obj["problem_idx"]),
            text=obj["problem"],
            final_answer=as_text(obj["gold_answer"]),
            domain="math_reasoning",
            origin=_origin(obj, "problem_idx", "gold_answer"),
        ),
        completion=CompletionRecord(
            external_id=f"{model_name}#{sample_index}",
            model_name=model_name,
            text=obj["answer"],
            sampling=obj["model_config"],
            sample_index=sample_index,
            metadata=metadata,
        ),
        prior_label=_prior_label(obj, "correct"),
    )


VERIFYBENCH = register_format(
    RecordFormat(
        name="verifybench",
        required=VERIFYBENCH_FIELDS,
        optional=VERIFYBENCH_OPTIONAL,
        parse=parse_verifybench,
        prior_label_source="verifybench",
        description="VerifyBench and VerifyBench-Hard: one completion per line",
    )
)
MUMATH = register_format(
    RecordFormat(
        name="mumath",
        required=MUMATH_FIELDS,
        optional=MUMATH_OPTIONAL,
        parse=parse_mumath,
        prior_label_source="mumath",
        description="mu-MATH: one judged solution per line",
    )
)
MATHARENA = register_format(
    RecordFormat(
        name="matharena",
        required=MATHARENA_FIELDS,
        optional=MATHARENA_OPTIONAL,
        parse=parse_matharena,
        prior_label_source="matharena",
        description="MathArena final-answer outputs: one model answer per line",
    )
)


# -- the app's own minimal format ----------------------------------------------------------------------------------

NATIVE_FIELDS = {
    "question_id": IDENTIFIER,
    "reference_answer": TEXT_OR_NUMBER,
    "completion": TEXT,
    "model": TEXT,
}
NATIVE_OPTIONAL = {
    "question": TEXT,
    "messages": LIST,
    "completion_id": IDENTIFIER,
    "answer_type": TEXT,
    "subject": TEXT,
    "source": TEXT,
    "domain": TEXT,
    "sample_index": NON_NEGATIVE_INTEGER,
    "metadata": OBJECT,
    "reference_solution": TEXT,
    "sampling": TEXT_OR_OBJECT,
    "greedy": BOOLEAN,
    "correct": BOOLEAN,
}
_ROLE_TITLES = {"system": "System", "user": "User", "assistant": "Assistant", "developer": "Developer"}


def question_from_messages(messages: list[Any]) -> str:
    """The question an OpenAI-style `messages` list asks: a single user message as it is; otherwise every message
    under its role, in order (a system prompt and few-shot turns included)."""
    parts: list[tuple[str, str]] = []
    for position, message in enumerate(messages, start=1):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise FieldError("messages", f"message {position} must be an object with a role and a content")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "\n\n".join(
                part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
            )
        if not isinstance(content, str):
            raise FieldError("messages", f"message {position} has no text content")
        parts.append((message["role"], content))
    if not parts:
        raise FieldError("messages", "the list is empty")
    if len(parts) == 1 and parts[0][0] == "user":
        return parts[0][1]
    return "\n\n".join(f"**{_ROLE_TITLES.get(role, role.capitalize())}:** {text}" for role, text in parts)


def generated_completion_id(question_id: str, model: str, sample_index: int, text: str) -> str:
    """A stable id for a completion the file did not name: the same content always gets the same id, so a
    re-import changes nothing."""
    digest = hashlib.sha256("\x1f".join((question_id, model, str(sample_index), text)).encode("utf-8")).hexdigest()
    return f"{model}#{sample_index}#{digest[:12]}"


def parse_native(obj: Mapping[str, Any]) -> ParsedRecord:
    question_id = as_text(obj["question_id"])
    text = optional_value(obj, "question", TEXT)
    messages = optional_value(obj, "messages", LIST)
    if text is None and messages is None:
        raise FieldError("question", "give the question as question (text) or messages (a chat list)")
    if text is None:
        text = question_from_messages(messages)
    source = optional_value(obj, "source", TEXT, "")
    answer_type, answer_class = answer_type_of(obj)
    model = obj["model"]
    sample_index = optional_value(obj, "sample_index", NON_NEGATIVE_INTEGER, 0)
    completion_id = optional_value(obj, "completion_id", IDENTIFIER)
    question_meta = {"messages": messages} if messages is not None else {}
    return ParsedRecord(
        question=QuestionRecord(
            external_id=question_id,
            text=text,
            final_answer=as_text(obj["reference_answer"]),
            solution=optional_value(obj, "reference_solution", TEXT, ""),
            domain=domain_of(obj, source),
            source=source,
            subject=optional_value(obj, "subject", TEXT, ""),
            answer_type=answer_type,
            answer_class=answer_class,
            metadata=question_meta,
            origin=_origin(obj, "question_id", "reference_answer", "answer_type"),
        ),
        completion=CompletionRecord(
            external_id=as_text(completion_id)
            if completion_id is not None
            else generated_completion_id(question_id, model, sample_index, obj["completion"]),
            model_name=model,
            text=obj["completion"],
            sampling=optional_value(obj, "sampling", TEXT_OR_OBJECT, {}),
            sample_index=sample_index,
            is_greedy=optional_value(obj, "greedy", BOOLEAN, False),
            metadata=optional_value(obj, "metadata", OBJECT, {}),
            origin=_origin(obj, "completion_id"),
            id_generated=completion_id is None,
        ),
        prior_label=_prior_label(obj, "correct"),
    )


NATIVE = register_format(
    RecordFormat(
        name="mathlabel",
        required=NATIVE_FIELDS,
        optional=NATIVE_OPTIONAL,
        parse=parse_native,
        prior_label_source="mathlabel",
        description="mathlabel's own minimal format for a lab's model outputs: question_id, question (or messages), "
        "reference_answer, completion, model",
    )
)
