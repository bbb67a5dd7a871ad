import json
import zipfile

import pytest
from django.core.management import CommandError, call_command

from reports.models import ExportJob


def test_export_command_writes_the_bundle_to_out(verifybench_data, export_root, tmp_path, capsys):
    out = tmp_path / "vb.zip"
    call_command(
        "export",
        "--project",
        str(verifybench_data.project.pk),
        "--format",
        "verifybench",
        "--file-types",
        "jsonl",
        "parquet",
        "--seed",
        "9",
        "--per-type",
        "1",
        "--out",
        str(out),
    )
    printed = capsys.readouterr().out
    assert "6 rows: 3 correct, 3 incorrect." in printed
    assert "shortfall D - String: 0 of 1 requested" in printed
    with zipfile.ZipFile(out) as bundle:
        manifest = json.loads(bundle.read("manifest.json"))
        assert set(bundle.namelist()) == {"verifybench.jsonl", "verifybench.parquet", "manifest.json", "README.md"}
    assert (manifest["seed"], manifest["parameters"]["per_type"]) == (9, 1)
    assert ExportJob.objects.get().status == "succeeded"
    assert not list(tmp_path.glob(".*.part"))


def test_export_command_mumath_models_option(mumath_data, export_root, tmp_path):
    out = tmp_path / "mu.zip"
    call_command(
        "export", "--project", str(mumath_data.project.pk), "--format", "mumath", "--models", "2", "--out", str(out)
    )
    with zipfile.ZipFile(out) as bundle:
        models = {json.loads(line)["model"] for line in bundle.read("mumath.jsonl").decode().splitlines()}
    assert models == {"m1", "m2"}


def test_export_command_refuses_bad_input(verifybench_data, export_root, tmp_path):
    with pytest.raises(CommandError, match="no annotation project"):
        call_command("export", "--project", "999999", "--format", "verifybench", "--out", str(tmp_path / "x.zip"))
    with pytest.raises(CommandError, match="unknown export format"):
        call_command(
            "export",
            "--project",
            str(verifybench_data.project.pk),
            "--format",
            "nope",
            "--out",
            str(tmp_path / "x.zip"),
        )
    with pytest.raises(CommandError, match="no such directory"):
        call_command(
            "export",
            "--project",
            str(verifybench_data.project.pk),
            "--format",
            "verifybench",
            "--out",
            str(tmp_path / "missing" / "x.zip"),
        )
    assert not (tmp_path / "x.zip").exists()
