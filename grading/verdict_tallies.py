"""Verdicts against final human labels as tallies of correctness projects (see annotation.aggregates).

Per item of a correctness project: ``vv|<verifier>`` for each verifier with a verdict on its completion; and for
an item with a final human label (resolved, not excluded, not gold): ``vl``, then per verdict
``v|<verifier>|<answer class>|<answer type>|<human 1/0>|<status>|<model as JSON>`` (the confusion counts the meta-evaluation
reads) and per pair of verifiers (ids in order, a verifier with itself included) ``vp|<a>|<b>|<status a>|<status
b>`` (their agreement). A final value that is no correctness label counts as ``vb`` instead. A correctly labeled
sampled answer also counts towards its author model and question, ``q|n|[model, question id]`` and, when correct,
``q|c|...`` (kept as GroupTally rows: the n and c of Pass@k); a greedy one towards ``qg|n|<model as JSON>`` and
``qg|c|...`` (greedy accuracy).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from annotation import aggregates, workflow
from annotation.models import AnnotationProject, Item
from core.labels import InvalidValue
from core.rows import prepared_cursor
from verifybench.label_rules import CORRECTNESS, CorrectnessRules
from verifybench.models import Completion, Question

from .models import Verdict

_RULES = CorrectnessRules()
# fixed text but for the list of completions: on every label, the ORM's compiling of the join cost more than running it
_FACTS_SQL = (
    f"SELECT c.id, c.model_name, q.answer_class, q.answer_type, c.question_id, c.is_greedy, v.verifier_id, v.status "
    f"FROM {Completion._meta.db_table} c JOIN {Question._meta.db_table} q ON q.id = c.question_id "
    f"LEFT JOIN {Verdict._meta.db_table} v ON v.completion_id = c.id WHERE c.id IN ({{subjects}})"
)


def has_final_label(item: Item) -> bool:
    return item.state == workflow.RESOLVED and not item.excluded and not item.is_gold


def verdict_contribution(project: AnnotationProject, items: Sequence[Item], reads: aggregates.Reads) -> Counter:
    tally: Counter = Counter()
    subjects = tuple(item.subject_id for item in items if not item.is_gold)
    if not subjects:
        return tally

    def read_facts() -> tuple[dict[int, dict[int, str]], dict[int, tuple[str, str, str, int, bool]]]:
        """The verdicts on these completions and what each completion is (its model, answer class and type,
        question, greedy or sampled), in one query."""
        verdicts: dict[int, dict[int, str]] = {}
        about: dict[int, tuple[str, str, str, int, bool]] = {}
        with prepared_cursor() as cursor:
            cursor.execute(_FACTS_SQL.format(subjects=", ".join(["%s"] * len(subjects))), list(subjects))
            rows = cursor.fetchall()
        for pk, model, answer_class, answer_type, question_id, is_greedy, verifier_id, status in rows:
            about[pk] = (model, answer_class or "", answer_type or "", question_id, bool(is_greedy))
            if verifier_id is not None:
                verdicts.setdefault(pk, {})[verifier_id] = status
        return verdicts, about

    by_subject, about = reads.once(("verdict facts", subjects), read_facts)
    for item in items:
        if item.is_gold:
            continue
        verdicts = by_subject.get(item.subject_id, {})
        for verifier_id in verdicts:
            tally[f"vv|{verifier_id}"] += 1
        if not has_final_label(item) or item.subject_id not in about:
            continue
        tally["vl"] += 1
        try:
            human = _RULES.clean(item.final_value)
        except InvalidValue:
            tally["vb"] += 1
            continue
        model, answer_class, answer_type, question_id, is_greedy = about[item.subject_id]
        if is_greedy:
            tally[f"qg|n|{json.dumps(model)}"] += 1
            tally[f"qg|c|{json.dumps(model)}"] += int(human)
        else:
            tally[aggregates.group_key("n", model, str(question_id))] += 1
            tally[aggregates.group_key("c", model, str(question_id))] += int(human)
        ordered = sorted(verdicts.items())
        for index, (verifier_id, status) in enumerate(ordered):
            tally[f"v|{verifier_id}|{answer_class}|{answer_type}|{int(human)}|{status}|{json.dumps(model)}"] += 1
            for other_id, other_status in ordered[index:]:
                tally[f"vp|{verifier_id}|{other_id}|{status}|{other_status}"] += 1
    return tally


def register() -> None:
    aggregates.register_contributor(CORRECTNESS, verdict_contribution)
