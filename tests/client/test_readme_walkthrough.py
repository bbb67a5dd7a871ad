"""The client README's walk-through, every code block in order, against the live app with a real Celery worker on
Redis doing the imports, runs, project setups, exports and webhook deliveries.

The blocks run as written but for two addresses: the server's (`http://127.0.0.1:8000`, the address `make run`
serves) becomes the live server's, and the lab's webhook receiver (`http://127.0.0.1:9000`) a local receiver. The
accounts the walk-through signs in with are the demo's (`annotator1`, ..., password `mathlabel-demo`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation.models import AnnotationProject
from core import roles
from tests.conftest import allow_judge_endpoint
from tests.waiting import wait_for
from webhooks.models import WebhookDelivery

from .conftest import people, token_of

README = Path(__file__).resolve().parents[2] / "client" / "README.md"


def walkthrough_blocks() -> list[str]:
    text = README.read_text()
    section = text[text.index("## A lab's job, step by step") :]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_walkthrough_has_its_steps():
    blocks = walkthrough_blocks()
    assert len(blocks) >= 8
    assert "import_dataframe" in blocks[1] and "to_dataset" in "".join(blocks)


@pytest.mark.worker
def test_the_readme_walkthrough_runs_against_a_live_server_with_a_worker(
    live_server, celery_worker_factory, server_settings, make_user, receiver, monkeypatch, tmp_path, capsys
):
    server_settings.WEBHOOK_RETRY_BASE_SECONDS = 0.5
    celery_worker_factory(
        {
            "IMPORT_UPLOAD_DIR": str(server_settings.IMPORT_UPLOAD_DIR),
            "EXPORT_ROOT": str(server_settings.EXPORT_ROOT),
            "WEBHOOK_RETRY_BASE_SECONDS": "0.5",
        }
    )
    users = people(make_user)
    assert users["annotator1"].groups.filter(name=roles.ANNOTATOR).exists()
    allow_judge_endpoint(receiver.url)  # an admin allowed the lab's receiver
    monkeypatch.setenv("MATHLABEL_TOKEN", token_of(users["rita"]))
    monkeypatch.chdir(tmp_path)

    namespace: dict = {}
    for number, block in enumerate(walkthrough_blocks(), start=1):
        code = block.replace("http://127.0.0.1:8000", live_server.url).replace("http://127.0.0.1:9000", receiver.url)
        exec(compile(code, f"client/README.md, block {number}", "exec"), namespace)
    shown = capsys.readouterr().out

    assert namespace["imported"]["report"]["completions_created"] == 12
    assert namespace["run"]["counts"] == {"correct": 6, "incorrect": 6, "inconclusive": 0, "failed": 0}
    project = AnnotationProject.objects.get(pk=namespace["project_id"])
    assert project.guidelines_version == 1 and project.items.count() == 12
    assert set(namespace["items"]["state"]) == {"resolved"}
    assert len(namespace["labeled"]) == namespace["hf"].num_rows == 6
    assert (tmp_path / "lab-run-7-verifybench.zip").is_file()
    assert list(namespace["models"]["model"]) == ["lab-model-a", "lab-model-b"]
    assert "12 completions imported" in shown and "lab-rules" in shown

    hook = namespace["hook"]["id"]
    delivered = wait_for(
        lambda: set(WebhookDelivery.objects.filter(webhook_id=hook, status="succeeded").values_list("event", flat=True))
        == {"project.completed", "export.ready"},
        what="the project.completed and export.ready deliveries",
    )
    assert delivered
    assert sorted(request.json()["event"] for request in receiver.requests) == ["export.ready", "project.completed"]
