"""Import messages say plainly what is wrong and where: the column of the offending character within the line, a
truncated last line called truncated, no doubled words, and never the server's path of a file."""

from __future__ import annotations

import io
import json

import pytest

from tests.verifybench.test_api import jsonl_upload, upload_and_import, verifybench_line
from verifybench import services
from verifybench.importing.sources import decode_json_line


@pytest.mark.parametrize(
    "line, expected",
    [
        ('{"a" 1}', "not valid JSON: expecting ':' delimiter at column 6"),
        ('{"a": 1,, "b": 2}', "at column 9"),
        ('{"a": 1}\n', ""),
        ('{"a": 1}\r\n', ""),
        ('{"a": 1', "the line ends before the value is complete"),
        ('{"a": "cut sho', "the line ends before the value is complete"),
        ('{"question": "x"\n', "the line ends before the value is complete"),
        ('{"question": "x"', "the line ends before the value is complete"),
        ('{"é": "ü" x}', "at column 11"),  # columns count characters, not bytes
    ],
)
def test_json_errors_name_the_column_within_the_line(line, expected):
    _, error = decode_json_line(line)
    assert (expected in error) if expected else error == ""
    assert " at at " not in error and "line 2" not in error


@pytest.mark.django_db
def test_a_truncated_last_line_is_reported_as_truncated():
    source = io.BytesIO((verifybench_line("q1", "c1") + "\n" + verifybench_line("q2", "c2")[:-5]).encode())
    with pytest.raises(services.ImportRejected) as rejected:
        services.import_jsonl(dataset_name="cut", source=source, fmt="verifybench")
    (error,) = rejected.value.report.errors
    assert error.line == 2 and "is it truncated?" in error.reason
    assert " at at " not in str(error)


def test_an_upload_never_shows_the_servers_paths(
    researcher, api_client_for, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    client = api_client_for(researcher)
    job, report = upload_and_import(
        client,
        django_capture_on_commit_callbacks,
        file=jsonl_upload(verifybench_line("u1", "u1-a"), '{"broken" 1}'),
        dataset="paths",
        format="verifybench",
        skip_invalid="true",
    )
    assert report["rejected_lines"] == 1
    everything = json.dumps(job) + json.dumps(client.get("/api/imports/").json())
    assert str(tmp_path) not in everything and str(settings.VAR_DIR) not in everything
    assert report["rejects_path"].endswith(".rejects.jsonl") and "/" not in report["rejects_path"]
