"""Exported files name annotators by stable pseudonyms: the same person gets the same string in the exports of
different projects, no database id or username is written, and the Parquet files of two exports concatenate."""

from __future__ import annotations

import json
import re
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reports import services
from reports.exports import pseudonyms
from reports.exports.builders import pseudonym_key
from reports.models import ExportJob

from .conftest import LabelledData

PSEUDONYM = re.compile(r"annotator-[0-9a-f]{12}")


def test_a_pseudonym_is_the_prefix_and_twelve_hex_digits_of_a_keyed_hash_of_the_id():
    key = pseudonyms.derived_key("a secret")
    assert PSEUDONYM.fullmatch(pseudonyms.pseudonym(key, 7))
    assert pseudonyms.pseudonym(key, 7) == pseudonyms.pseudonym(key, 7)
    assert pseudonyms.pseudonym(key, 7) != pseudonyms.pseudonym(key, 8)
    assert pseudonyms.pseudonym(key, 7) != pseudonyms.pseudonym(pseudonyms.derived_key("another secret"), 7)
    assert key != b"a secret"


@pytest.fixture
def people(make_user):
    return [make_user("annotator", username=name) for name in ("ada.lovelace", "emmy.noether", "sofia.kovalevskaya")]


def two_projects(people) -> list:
    """Two projects of different datasets, labelled by overlapping people."""
    projects = []
    for name, labellers in (("first", people[:2]), ("second", people[1:])):
        data = LabelledData(name, labellers)
        for index in range(2):
            question = data.question(f"{name}-q{index}", answer_type="A1")
            data.labelled(question, f"{name}-q{index}-c", True)
            data.labelled(question, f"{name}-q{index}-w", False)
        projects.append(data.project)
    return projects


def export(project, fmt: str = "verifybench-hard") -> dict[str, bytes]:
    job = services.create_export(project=project, format=fmt, file_types=["jsonl", "csv", "parquet"], enqueue=False)
    job = services.run_export_now(job)
    assert job.status == ExportJob.Status.SUCCEEDED, job.error
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        return {name: bundle.read(name) for name in bundle.namelist()}


def annotators_of(files: dict[str, bytes], stem: str) -> list[list]:
    return [json.loads(line)["annotator"] for line in files[f"{stem}.jsonl"].decode().splitlines()]


@pytest.mark.parametrize(("fmt", "stem"), [("verifybench-hard", "verifybench_hard"), ("verifybench", "verifybench")])
def test_the_same_annotator_has_the_same_pseudonym_in_two_projects_exports_and_no_id_or_username_is_written(
    people, export_root, fmt, stem
):
    first, second = (export(project, fmt) for project in two_projects(people))
    in_first = {name for names in annotators_of(first, stem) for name in names}
    in_second = {name for names in annotators_of(second, stem) for name in names}
    expected = {user.pk: pseudonyms.pseudonym(pseudonym_key(), user.pk) for user in people}
    assert in_first == {expected[people[0].pk], expected[people[1].pk]}
    assert in_second == {expected[people[1].pk], expected[people[2].pk]}
    assert in_first & in_second == {expected[people[1].pk]}  # the one person on both projects
    for files in (first, second):
        for names in annotators_of(files, stem):
            assert names and all(isinstance(name, str) and PSEUDONYM.fullmatch(name) for name in names)
        everything = b"\n".join(files.values()).decode("utf-8", errors="replace")
        for user in people:
            assert user.username not in everything
        table = pq.read_table(pa.BufferReader(files[f"{stem}.parquet"]))
        assert table.schema.field("annotator").type == pa.list_(pa.string())

    combined = pa.concat_tables([pq.read_table(pa.BufferReader(files[f"{stem}.parquet"])) for files in (first, second)])
    assert combined.num_rows == len(annotators_of(first, stem)) + len(annotators_of(second, stem))


def test_the_dataset_card_and_the_manifest_say_how_annotators_are_named(people, export_root):
    files = export(two_projects(people)[0])
    card = files["README.md"].decode()
    assert "## Annotators" in card and "`annotator-` followed by the first 12 hex digits of HMAC-SHA256" in card
    assert "no database id or username is written" in card
    assert json.loads(files["manifest.json"])["annotator_pseudonyms"] == pseudonyms.SCHEME


def test_a_configured_key_names_the_same_person_differently_and_stably(people, export_root, settings):
    project = two_projects(people)[0]
    default = {name for names in annotators_of(export(project), "verifybench_hard") for name in names}
    settings.EXPORT_PSEUDONYM_KEY = "the lab's own pseudonym key"
    keyed = {name for names in annotators_of(export(project), "verifybench_hard") for name in names}
    assert keyed == {pseudonyms.pseudonym(b"the lab's own pseudonym key", user.pk) for user in people[:2]}
    assert not keyed & default
