"""The label rules of the benchmark data's subjects: a completion's correctness and a question's answer type.

Pure module, no Django imports.
"""

from __future__ import annotations

from core import taxonomy
from core.labels import InvalidValue, LabelRules

CORRECTNESS = "correctness"
ANSWER_TYPE = "answer_type"


class CorrectnessRules(LabelRules):
    name = CORRECTNESS
    ALIASES = {
        True: True,
        False: False,
        "correct": True,
        "incorrect": False,
        "true": True,
        "false": False,
        "yes": True,
        "no": False,
        "1": True,
        "0": False,  # 1 and 0 hash like True and False
    }

    def clean(self, raw):
        key = raw.strip().lower() if isinstance(raw, str) else raw
        try:
            return self.ALIASES[key]
        except (KeyError, TypeError):  # TypeError: lists and objects are unhashable
            pass
        raise InvalidValue("value must be true (correct) or false (incorrect)")

    def display(self, value):
        return "Correct" if value else "Incorrect"


class AnswerTypeRules(LabelRules):
    name = ANSWER_TYPE

    def clean(self, raw):
        if not isinstance(raw, str):
            raise InvalidValue("value must be an answer-type code such as 'A1'")
        try:
            parsed = taxonomy.parse_answer_type(raw)
        except taxonomy.UnknownAnswerType as exc:
            raise InvalidValue(str(exc)) from exc
        if parsed is None:
            raise InvalidValue("value must be an answer-type code such as 'A1'")
        return parsed.code

    def display(self, value):
        answer_type = taxonomy.BY_CODE.get(value)
        return f"{value} - {answer_type.name}" if answer_type else str(value)
