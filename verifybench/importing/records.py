"""What one valid line of an import file becomes, before it touches the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class QuestionRecord:
    external_id: str
    text: str
    final_answer: str = ""
    solution: str = ""
    domain: str = ""
    source: str = ""
    subject: str = ""
    answer_type: str = ""
    answer_class: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    # The public fields as the file spelled them (an integer id, "A3 - Fraction"), so exports give them back as they
    # came in.
    origin: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CompletionRecord:
    external_id: str
    model_name: str
    text: str
    sampling: dict[str, Any] | str = field(default_factory=dict)
    sample_index: int = 0
    is_greedy: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str = ""
    origin: dict[str, Any] = field(default_factory=dict)
    id_generated: bool = False  # the file gave no id; one was made from the content


@dataclass(slots=True)
class PriorLabelRecord:
    is_correct: bool
    annotators: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class ParsedRecord:
    """A question, optionally one completion of it and the correctness label the file gives that completion.

    `extra` carries format-specific data (rubrics, judge scores...) for the format's own writer.
    """

    question: QuestionRecord
    completion: CompletionRecord | None = None
    prior_label: PriorLabelRecord | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, ...]:
        if self.completion is None:
            return (self.question.external_id,)
        return (self.question.external_id, self.completion.external_id)


class FieldError(ValueError):
    """A field of one line is missing or unusable."""

    def __init__(self, field_name: str, reason: str):
        super().__init__(f"{field_name}: {reason}")
        self.field = field_name
        self.reason = reason
