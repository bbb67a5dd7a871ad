"""Verdicts against final human labels as tallies of correctness projects (see annotation.aggregates).

Per item of a correctness project: ``vv|<verifier>`` for each verifier with a verdict on its completion; and for
an item with a final human label (resolved, not excluded, not gold): ``vl``, then per verdict
``v|<verifier>|<answer class>|<answer type>|<human 1/0>|<status>|<model as JSON>`` (the confusion counts the meta-evaluation
reads) and per pair of verifiers (ids in order, a verifier with itself included) ``vp|<a>|<b>|<status a>|<status
b>`` (their agreement). A final value that is no correctness label counts as ``vb`` instead. A correctly labeled
sampled answer also counts towards its author model and question, ``q|n|[model, question id]`` and, when correct,
``q|c|...`` (kept as GroupTally rows: the n and c of Pass@k); a greedy one towards ``qg|n|<model as JSON>`` and
``qg|c|...`` (greedy accuracy).

For the bootstrap of the meta-evaluation each labeled item also adds to vectors per question (``w|`` keys, kept
as VectorTally rows with their series' moments, see core.metrics.tallies): the cell
(`core.metrics.judge_intervals.CELLS`) of its label and verdict in the series ``["v", verifier, answer class,
answer type, source]`` and ``["m", verifier, author model]``, and for each pair of verifiers that judged it, both
cells and whether only one of them was right in ``["p", first, second, answer class, answer type, source]``. For
the humans' own error: ``lb|<basis>|<human>`` per labeled item and ``vn|<verifier>|<human>|<status>|<basis>`` per
verdict, where the basis is ``posterior`` (the item has the annotator model's confidence), ``agreement`` or
``contested`` (a tie-break majority, an adjudication or an override); for items with a posterior, the confidence in
millionths summed per verdict cell (``vc|<verifier>|<human>|<status>``) and over the items (``lc``), and the items
counted per percent of confidence (``lq|<percent>``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence

from annotation import aggregates, workflow
from annotation.models import AnnotationProject, Item
from core.labels import InvalidValue
from core.metrics import judge_intervals
from core.metrics.tallies import vector_key
from core.rows import prepared_cursor
from verifybench.label_rules import CORRECTNESS, CorrectnessRules
from verifybench.models import Completion, Question

from .models import Verdict

_RULES = CorrectnessRules()
# fixed text but for the list of completions: on every label, the ORM's compiling of the join cost more than running it
_FACTS_SQL = (
    f"SELECT c.id, c.model_name, q.answer_class, q.answer_type, c.question_id, c.is_greedy, q.source, "
    f"v.verifier_id, v.status "
    f"FROM {Completion._meta.db_table} c JOIN {Question._meta.db_table} q ON q.id = c.question_id "
    f"LEFT JOIN {Verdict._meta.db_table} v ON v.completion_id = c.id WHERE c.id IN ({{subjects}})"
)


def has_final_label(item: Item) -> bool:
    return item.state == workflow.RESOLVED and not item.excluded and not item.is_gold


def series_name(*parts) -> str:
    return json.dumps(list(parts), separators=(",", ":"))


def label_basis(item: Item) -> str:
    """What the final label's chance of being right is estimated from: the annotator model's posterior, two
    agreeing labels, or a disagreement someone settled."""
    if item.confidence is not None:
        return "posterior"
    return "agreement" if item.resolution == workflow.BY_AGREEMENT else "contested"


def verdict_contribution(project: AnnotationProject, items: Sequence[Item], reads: aggregates.Reads) -> Counter:
    tally: Counter = Counter()
    subjects = tuple(item.subject_id for item in items if not item.is_gold)
    if not subjects:
        return tally

    def read_facts() -> tuple[dict[int, dict[int, str]], dict[int, tuple[str, str, str, int, bool, str]]]:
        """The verdicts on these completions and what each completion is (its model, answer class and type,
        question, greedy or sampled, the question's source), in one query."""
        verdicts: dict[int, dict[int, str]] = {}
        about: dict[int, tuple[str, str, str, int, bool, str]] = {}
        with prepared_cursor() as cursor:
            cursor.execute(_FACTS_SQL.format(subjects=", ".join(["%s"] * len(subjects))), list(subjects))
            rows = cursor.fetchall()
        for pk, model, answer_class, answer_type, question_id, is_greedy, source, verifier_id, status in rows:
            about[pk] = (model, answer_class or "", answer_type or "", question_id, bool(is_greedy), source or "")
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
        model, answer_class, answer_type, question_id, is_greedy, source = about[item.subject_id]
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
        _count_per_question(tally, item, human, ordered, (answer_class, answer_type, source), model, question_id)
    return tally


def _count_per_question(
    tally: Counter,
    item: Item,
    human: bool,
    ordered: list[tuple[int, str]],
    scope: tuple[str, str, str],
    model: str,
    question_id: int,
) -> None:
    """The item's share of the per-question vectors and of the label-noise counts (see the module's docstring)."""
    question = str(question_id)
    basis = label_basis(item)
    tally[f"lb|{basis}|{int(human)}"] += 1
    if basis == "posterior":
        tally[f"lq|{min(99, math.floor(100 * item.confidence))}"] += 1
        tally["lc"] += round(1_000_000 * item.confidence)
    cells = {verifier_id: judge_intervals.cell_of(human, status) for verifier_id, status in ordered}
    for index, (verifier_id, status) in enumerate(ordered):
        cell = cells[verifier_id]
        tally[vector_key(series_name("v", verifier_id, *scope), question, cell)] += 1
        tally[vector_key(series_name("m", verifier_id, model), question, cell)] += 1
        tally[f"vn|{verifier_id}|{int(human)}|{status}|{basis}"] += 1
        if basis == "posterior":
            tally[f"vc|{verifier_id}|{int(human)}|{status}"] += round(1_000_000 * item.confidence)
        first_right = judge_intervals.right(human, status)
        for other_id, other_status in ordered[index + 1 :]:
            pair = series_name("p", verifier_id, other_id, *scope)
            tally[vector_key(pair, question, cell)] += 1
            tally[vector_key(pair, question, judge_intervals.WIDTH + cells[other_id])] += 1
            second_right = judge_intervals.right(human, other_status)
            if first_right and not second_right:
                tally[vector_key(pair, question, judge_intervals.ONLY_FIRST_RIGHT)] += 1
            elif second_right and not first_right:
                tally[vector_key(pair, question, judge_intervals.ONLY_SECOND_RIGHT)] += 1


def register() -> None:
    aggregates.register_contributor(CORRECTNESS, verdict_contribution)
