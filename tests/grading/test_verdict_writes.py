"""Verdicts written in bulk (a run's chunk): one row per completion and verifier, replaced in place, failed calls
counted, and the projects' tallies moved exactly as a rebuild from scratch counts them."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from types import SimpleNamespace

import pytest

from annotation import aggregates
from annotation import services as annotation_services
from annotation.models import ProjectMember
from grading.judges.caching import CachedResponse
from grading.models import JudgeResponseCache, Verdict, VerifierConfig
from grading.verdict_writes import cache_judge_answers, cached_judge_answers, write_verdicts
from tests.annotation.conftest import build_dataset, label_item

pytestmark = pytest.mark.django_db


def outcome(status: str, **fields):
    return SimpleNamespace(
        status=status, extracted_answer="42", explanation="why", reason="how", raw_output="{}", **fields
    )


def test_a_chunk_is_written_at_once_and_a_second_write_replaces_it_in_place():
    dataset = build_dataset(questions=3, completions_per_question=4, name="bulk-verdicts")
    config = VerifierConfig.objects.create(name="bulk-rules", kind=VerifierConfig.Kind.RULE)
    ids = sorted(dataset.questions.values_list("completions__pk", flat=True))
    written = write_verdicts(config, [(pk, outcome("correct" if pk % 2 else "incorrect")) for pk in ids])
    assert written.usable == 12 and written.newly_failed == 0
    first = {v.completion_id: (v.pk, v.created_at) for v in Verdict.objects.filter(verifier=config)}
    assert sorted(first) == ids

    again = write_verdicts(config, [(pk, outcome("inconclusive", failed=True, attempts=3)) for pk in ids[:5]])
    assert (again.usable, again.newly_failed, again.no_longer_failed) == (0, 5, 0)
    stored = {v.completion_id: v for v in Verdict.objects.filter(verifier=config)}
    assert {pk: (v.pk, v.created_at) for pk, v in stored.items()} == first  # replaced in place, creation kept
    assert all(stored[pk].failed and stored[pk].attempts == 3 for pk in ids[:5])
    assert all(stored[pk].updated_at > stored[pk].created_at for pk in ids[:5])

    healed = write_verdicts(config, [(pk, outcome("correct", cost=Decimal("0.25"))) for pk in ids[:5]])
    assert (healed.usable, healed.newly_failed, healed.no_longer_failed) == (5, 0, 5)
    assert Verdict.objects.get(verifier=config, completion_id=ids[0]).cost == Decimal("0.25")
    assert Verdict.objects.filter(verifier=config).count() == 12


def test_an_unknown_status_writes_nothing():
    dataset = build_dataset(questions=1, completions_per_question=2, name="bad-status")
    config = VerifierConfig.objects.create(name="bad-rules", kind=VerifierConfig.Kind.RULE)
    ids = list(dataset.questions.values_list("completions__pk", flat=True))
    with pytest.raises(Exception, match="Unknown verdict status"):
        write_verdicts(config, [(ids[0], outcome("correct")), (ids[1], outcome("maybe"))])
    assert not Verdict.objects.filter(verifier=config).exists()


def test_the_projects_tallies_move_with_a_bulk_write_as_a_rebuild_counts_them(make_user):
    dataset = build_dataset(questions=4, completions_per_question=3, name="bulk-tallies")
    project = annotation_services.create_project(dataset=dataset, kind="correctness", seed=3, labels_per_item=1)
    annotator = make_user("annotator")
    annotation_services.add_member(project, annotator, ProjectMember.Role.ANNOTATOR)
    for index, item in enumerate(project.items.order_by("random_key")[:8]):
        label_item(item, [annotator], [index % 3 != 0])
    config = VerifierConfig.objects.create(name="tally-rules", kind=VerifierConfig.Kind.RULE)
    ids = list(project.items.values_list("subject_id", flat=True))
    write_verdicts(config, [(pk, outcome("correct" if pk % 3 else "incorrect")) for pk in ids])
    write_verdicts(config, [(pk, outcome("inconclusive")) for pk in ids[::2]])
    kept = aggregates.all_kept_tallies(project)
    aggregates.rebuild(project)
    assert kept == aggregates.all_kept_tallies(project)
    assert kept[f"vv|{config.pk}"] == 12 and any(key.startswith(f"v|{config.pk}|") for key in kept)


def test_judge_answers_are_kept_once_by_their_prompt_key():
    answer = CachedResponse("Final Judgment: Yes", "", "correct", "42", "", 100, 5)
    cache_judge_answers([("k1", answer), ("k2", answer)], template_name="t", template_version=1, model="m")
    cache_judge_answers([("k1", replace(answer, status="incorrect"))], template_name="t", template_version=1, model="m")
    assert JudgeResponseCache.objects.count() == 2
    assert cached_judge_answers(["k1", "k3"]) == {"k1": answer}


def test_a_first_write_copied_straight_in_gives_way_to_the_upsert_when_a_verdict_appeared_meanwhile():
    from django.db import connection
    from django.utils import timezone

    from grading import verdict_writes

    dataset = build_dataset(questions=2, completions_per_question=3, name="copy-race")
    config = VerifierConfig.objects.create(name="race-rules", kind=VerifierConfig.Kind.RULE)
    ids = sorted(dataset.questions.values_list("completions__pk", flat=True))
    write_verdicts(config, [(ids[0], outcome("incorrect"))])  # another writer was first for one completion
    now = timezone.now()
    rows = [verdict_writes._row(pk, config, outcome("correct"), now) for pk in ids]
    if connection.vendor == "postgresql":
        assert verdict_writes._insert_by_copy(rows) is False
        assert Verdict.objects.filter(verifier=config).count() == 1  # the failed COPY left nothing behind

    written = write_verdicts(config, [(pk, outcome("correct")) for pk in ids])
    assert written.usable == 6
    assert set(Verdict.objects.filter(verifier=config).values_list("status", flat=True)) == {"correct"}
