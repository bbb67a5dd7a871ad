"""Every method of mathlabel_client against the live app: a lab imports, verifies, selects, labels, adjudicates,
exports, evaluates and registers webhooks, all through the client. `test_client_surface` checks that each public
method is called here or in the README's walk-through."""

from __future__ import annotations

import json
import zipfile

import pandas as pd
import pytest

from annotation.models import Item
from mathlabel_client import (
    BadRequest,
    Client,
    Conflict,
    JobFailed,
    NotFound,
    PermissionDenied,
    verify_webhook,
)

from .conftest import Lab, lab_rows

pytestmark = [pytest.mark.django_db(transaction=True)]


def import_lab(lab: Lab, tmp_path, name: str = "lab-run") -> dict:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in lab_rows()))
    lab.client.datasets.import_file(path, name, progress=False)
    return lab.client.datasets.get_by_name(name)


def project_with_labels(lab: Lab, tmp_path) -> tuple[dict, int]:
    """The walk-through's project: rules verdicts, a VerifyBench selection of all 12 completions, two annotators
    who disagree on q0's wrong answers, and those two items adjudicated. Returns (dataset, project id)."""
    client = lab.client
    dataset = import_lab(lab, tmp_path)
    client.verifiers.create("rules", kind="rule")
    client.runs.start("rules", dataset=dataset["id"], chunk_size=4, follow=True, progress=False)
    selection = client.selections.create("lab-run", "verifybench", ["rules"], seed=1, name="review", progress=False)
    project_id = selection["project_id"]
    client.projects.update(project_id, tiebreak_annotators=0)
    for person in ("annotator1", "annotator2"):
        client.projects.add_member(project_id, person, "annotator")
    client.projects.add_member(project_id, "adjudicator1", "adjudicator")
    label_everything(lab, project_id)
    for item in client.items.filter(project_id, state="needs_adjudication"):
        lab.adjudicator.items.adjudicate(item["id"], False, rationale="6 is not 5")
    return dataset, project_id


def label_everything(lab: Lab, project_id: int) -> None:
    for index, annotator in enumerate(lab.annotators):
        task = annotator.tasks.next(project_id)
        while task is not None:
            text = task["completion"]["text"]
            value = any(f"\\boxed{{{answer}}}" in text for answer in (5, 12, 19))
            if index == 1 and "\\boxed{6}" in text:
                value = not value
            task = annotator.tasks.submit(task["task_id"], value, claim_next=True)["next_task"]


def test_datasets_and_imports(lab, tmp_path):
    client = lab.client
    assert client.datasets.list() == []
    dataset = import_lab(lab, tmp_path)
    assert (dataset["question_count"], dataset["completion_count"], dataset["model_count"]) == (3, 12, 2)
    assert client.datasets.get(dataset["id"])["name"] == "lab-run"
    assert client.datasets.update(dataset["id"], description="run 7")["description"] == "run 7"
    assert len(client.datasets.questions(dataset["id"])) == 3
    lean = client.datasets.completions(dataset["id"], model_name="lab-model-a", include_text=False)
    assert len(lean) == 6 and "text" not in lean[0]
    assert "boxed" in client.datasets.completions(dataset["id"])[0]["text"]

    records = [{**row, "completion_id": row["completion_id"] + "-r"} for row in lab_rows(1)]
    from_records = client.datasets.import_records(records, "records", progress=False)
    assert from_records["status"] == "succeeded" and from_records["report"]["completions_created"] == 4
    frame = pd.DataFrame(lab_rows(2))
    from_frame = client.datasets.import_dataframe(frame, "frame", progress=True)
    assert from_frame["report"]["completions_created"] == 8 and from_frame["job"]["progress"]["fraction"] == 1.0

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "x"}\n{broken\n')
    with pytest.raises(JobFailed) as failed:
        client.datasets.import_file(bad, "lab-run", progress=False)
    assert failed.value.status == "failed" and "Rejected bad.jsonl" in failed.value.error
    failed_id = failed.value.job["id"]
    with pytest.raises(JobFailed):  # restarted from the stored upload: rejected again
        client.datasets.restart_import(failed_id, wait=True, progress=False)

    mixed = tmp_path / "mixed.jsonl"
    good = {**lab_rows(1)[0], "completion_id": "extra-1"}
    mixed.write_text(json.dumps(good) + "\n" + '{"question_id": "x"}\n')
    with open(mixed, "rb") as handle:
        kept = client.datasets.import_file(handle, "lab-run", skip_invalid=True, progress=False)
    assert kept["report"]["rejected_lines"] == 1
    [reject] = client.datasets.import_rejects(kept["id"])
    assert reject["line"] == 2 and reject["errors"]

    queued = client.datasets.import_file(mixed, "lab-run", skip_invalid=True, wait=False)
    assert queued["status"] in ("queued", "running", "succeeded")
    assert client.datasets.wait_import(queued["id"], progress=False)["status"] == "succeeded"
    assert client.datasets.get_import(kept["id"])["source_name"] == "mixed.jsonl"
    assert {job["id"] for job in client.datasets.imports(status="failed")} == {failed_id}
    with pytest.raises(Conflict, match="has already ended"):
        client.datasets.cancel_import(kept["id"])

    scratch = client.datasets.create("scratch", description="to delete")
    client.datasets.delete(scratch["id"])
    with pytest.raises(NotFound):
        client.datasets.get(scratch["id"])
    with pytest.raises(NotFound, match="no dataset is named 'scratch'"):
        client.datasets.get_by_name("scratch")
    with pytest.raises(BadRequest, match="name: dataset with this name already exists"):
        client.datasets.create("lab-run")


def test_verifiers_runs_selections_projects_tasks_and_items(lab, tmp_path):
    client = lab.client
    dataset = import_lab(lab, tmp_path)
    rules = client.verifiers.create("rules", kind="rule")
    spare = client.verifiers.create("spare", kind="rule")
    assert client.verifiers.get("rules")["id"] == rules["id"] == client.verifiers.id_of("rules")
    assert client.verifiers.update(spare["id"], timeout_seconds=5)["timeout_seconds"] == 5
    client.verifiers.delete(spare["id"])
    assert [config["name"] for config in client.verifiers.list()] == ["rules"]
    with pytest.raises(BadRequest, match="Never send a key"):
        client.verifiers.create("judge", kind="judge", api_key="sk-secret")

    run = client.runs.start(rules["id"], dataset=dataset["id"], chunk_size=4, follow=True, progress=True)
    assert run["status"] == "succeeded" and run["counts"]["correct"] == 6 and run["counts"]["incorrect"] == 6
    assert [listed["id"] for listed in client.runs.list(dataset=dataset["id"])] == [run["id"]]
    assert client.runs.get(run["id"])["done"] == 12
    assert client.runs.follow(run["id"], progress=False)["counts"] == run["counts"]
    with pytest.raises(Conflict, match="has already ended"):
        client.runs.cancel(run["id"])
    assert client.runs.resume(run["id"], follow=True, progress=False)["attempt"] == 2
    assert client.runs.restart(run["id"], follow=True, progress=False)["status"] == "succeeded"
    with pytest.raises(Conflict, match="has verdicts or runs"):
        client.verifiers.delete(rules["id"])

    selection = client.selections.create("lab-run", "verifybench", ["rules"], seed=1, name="review", progress=False)
    project_id = selection["project_id"]
    assert selection["preparing"] is False and client.selections.get(selection["id"])["report"]
    assert [listed["id"] for listed in client.selections.list()] == [selection["id"]]

    project = client.projects.update(project_id, guidelines="Compare the boxed answer.", tiebreak_annotators=0)
    assert project["guidelines_version"] == 1 and client.projects.get(project_id)["tiebreak_annotators"] == 0
    for person in ("annotator1", "annotator2"):
        client.projects.add_member(project_id, person, "annotator")
    members = client.projects.add_member(project_id, "adjudicator1", "adjudicator")
    assert sorted(member["username"] for member in members) == ["adjudicator1", "annotator1", "annotator2"]
    with pytest.raises(BadRequest, match="does not have the adjudicator role"):
        client.projects.add_member(project_id, "annotator1", "adjudicator")
    invitation = client.projects.invite(project_id, "annotator", days=2)
    assert invitation["url"].startswith(lab.url) and invitation["status"] == "open"
    assert client.projects.revoke_invitation(project_id, invitation["id"])["status"] == "revoked"
    assert [row["status"] for row in client.projects.invitations(project_id)] == ["revoked"]

    first = lab.annotators[0].tasks.next(project_id)
    assert lab.annotators[0].tasks.get(first["task_id"])["item_id"] == first["item_id"]
    assert "model_name" not in first["completion"]  # blind to the model
    label_everything(lab, project_id)
    progress = client.projects.progress(project_id)
    assert progress["by_state"]["needs_adjudication"] == 2 and progress["by_state"]["resolved"] == 10
    conflicts = lab.adjudicator.projects.conflicts(project_id)
    assert len(conflicts) == 2

    rows = list(client.items.filter(project_id, page_size=5))  # three keyset pages
    assert len(rows) == 12 and len({row["id"] for row in rows}) == 12
    waiting = list(client.items.filter(project_id, state="needs_adjudication", disagreement=True))
    assert {row["id"] for row in waiting} == {conflict["id"] for conflict in conflicts}
    frame = client.items.to_pandas(project_id, model="lab-model-a")
    assert len(frame) == 6 and "summary_question_external_id" in frame.columns
    decided = lab.adjudicator.items.adjudicate(waiting[0]["id"], False, rationale="6 is not 5")
    assert decided["state"] == "resolved" and decided["resolution"] == "adjudication"
    lab.adjudicator.items.adjudicate(waiting[1]["id"], False, rationale="6 is not 5")
    history = client.items.history(waiting[0]["id"])
    assert [event["event"] for event in history][-1] == "adjudicated"
    assert client.items.get(waiting[0]["id"])["labels"]
    overridden = lab.admin.items.override(waiting[0]["id"], True, rationale="on second look")
    assert overridden["resolution"] == "override"
    with pytest.raises(BadRequest, match="rationale"):
        client.items.override(waiting[0]["id"], True, rationale="")

    resolved = [row["id"] for row in rows[:3]]
    assert client.items.reopen(project_id, resolved[:1], rationale="check again")["applied"] == 1
    assert client.items.exclude(project_id, resolved[1:2], rationale="off topic")["applied"] == 1
    assert client.items.reprioritise(project_id, 5, resolved[:1])["applied"] == 1
    moved = client.items.reprioritise(project_id, -1, filters={"state": "excluded"})
    assert moved == {"action": "priority", "applied": 1, "skipped": {}}
    refused = client.items.bulk(project_id, "reopen", filters={"state": "excluded"}, rationale="again")
    assert refused["applied"] == 0 and refused["skipped"] == {"only resolved items can be re-opened": 1}
    with pytest.raises(BadRequest, match="a written rationale is required"):
        client.items.exclude(project_id, resolved[2:], rationale="")

    small = client.projects.create(
        "pairs", "lab-run", completion_ids=[row["subject_id"] for row in rows[:4]], labels_per_item=1, progress=True
    )
    assert small["preparing"] is False and len(list(client.items.filter(small["id"]))) == 4
    assert {project["name"] for project in client.projects.list()} == {"review", "pairs"}
    client.projects.add_member(small["id"], "annotator1", "annotator")
    task = lab.annotators[0].tasks.next(small["id"])
    assert lab.annotators[0].tasks.skip(task["task_id"])["status"] == "skipped"
    small_items = [row["id"] for row in client.items.filter(small["id"]) if row["id"] != task["item_id"]]
    assert client.projects.mark_gold(small["id"], small_items[0], True)["is_gold"] is True
    assert client.items.mark_gold(small["id"], small_items[1:2], value=False)["applied"] == 1
    assert Item.objects.filter(project_id=small["id"], is_gold=True).count() == 2
    assert client.projects.update(small["id"], aggregation="model")["aggregation"] == "model"
    assert client.projects.annotator_model(project_id)["fit"] is None
    fitted = client.projects.refit_annotator_model(project_id, progress=False)
    assert fitted["fit"]["job"]["status"] == "succeeded" and fitted["fit"]["labels_seen"] == 24

    annotator2 = next(member for member in client.projects.members(project_id) if member["username"] == "annotator2")
    client.projects.remove_member(project_id, annotator2["id"])
    assert "annotator2" not in [member["username"] for member in client.projects.members(project_id)]
    removed = client.projects.members(project_id, include_removed=True)
    assert [member["labels"] for member in removed if member["username"] == "annotator2"] == [12]


def test_exports_evaluation_and_jobs(lab, tmp_path):
    client = lab.client
    dataset, project_id = project_with_labels(lab, tmp_path)

    export = client.exports.start(project_id, "verifybench", file_types=["jsonl", "csv", "parquet"], wait=True)
    assert export["status"] == "succeeded" and export["download_url"]
    assert client.exports.wait(export["id"], progress=False)["bundle_sha256"] == export["bundle_sha256"]
    assert [listed["id"] for listed in client.exports.list(project=project_id)] == [export["id"]]
    assert client.exports.get(export["id"])["manifest"]["counts"]["rows"] == 6  # one right, one wrong per question
    assert client.exports.manifest(export["id"])["files"].keys() == {
        "verifybench.jsonl",
        "verifybench.csv",
        "verifybench.parquet",
    }
    path = client.exports.download(export["id"], tmp_path)
    assert path.parent == tmp_path and zipfile.ZipFile(path).testzip() is None
    with client.exports.bundle(export["id"]) as bundle:
        assert "README.md" in bundle.namelist()
    frame = client.exports.to_pandas(export["id"])
    assert len(frame) == 6 and frame["gold_correct"].sum() == 3
    assert len(client.exports.to_pandas(export["id"], file_type="jsonl")) == 6
    assert list(client.exports.to_pandas(export["id"], file_type="csv").columns) == list(frame.columns)
    hf = client.exports.to_dataset(export["id"])
    assert hf.num_rows == 6 and set(hf.column_names) == set(frame.columns)
    with pytest.raises(Conflict, match="has already ended"):
        client.exports.cancel(export["id"])
    with pytest.raises(Conflict, match="has succeeded; start a new one instead"):
        client.exports.restart(export["id"])
    with pytest.raises(BadRequest, match="format: unknown format"):
        client.exports.start(project_id, "no-such-format")

    meta = client.evaluation.meta_eval(project_id)
    [report] = meta["verifiers"]
    assert report["verifier"]["name"] == "rules" and report["labeled_items"] == 12
    table = client.evaluation.meta_eval_frame(project_id, ["rules"])
    overall = table[table["scope"] == "overall"].iloc[0]
    assert overall["verifier"] == "rules" and overall["n"] == 12 and overall["macro_f1"] > 0.5
    figures = client.evaluation.model_eval(
        dataset["id"], f"project:{project_id}", k=[1, 2], tau=[0.5, 1.0], bootstrap=20, seed=1
    )
    assert set(figures["models"]) == {"lab-model-a", "lab-model-b"} and figures["ks"] == [1, 2]
    models = client.evaluation.model_eval_frame(dataset["id"], "verifier:rules", k=[1, 2], bootstrap=20)
    assert list(models["model"]) == ["lab-model-a", "lab-model-b"]
    assert {"accuracy", "pass@2", "pass@2 low", "pass@2 high", "pass@2 questions"} <= set(models.columns)
    assert models["accuracy"].tolist() == [0.5, 0.5] and isinstance(models.attrs["warnings"], list)
    with pytest.raises(BadRequest, match="source"):
        client.evaluation.model_eval(dataset["id"], "nothing:1")

    jobs = client.jobs.list(kind="export")
    assert [job["id"] for job in jobs] == [export["id"]]
    assert client.jobs.get(export)["kind"] == "export"
    assert client.jobs.wait(f"export-{export['id']}", progress=False)["status"] == "succeeded"
    with pytest.raises(Conflict):
        client.jobs.cancel(export)
    run = client.runs.list()[0]
    resumed = client.jobs.resume(run)
    assert resumed["attempt"] == run["attempt"] + 1
    client.jobs.wait(resumed, progress=False)
    assert client.jobs.restart(f"verification-run-{run['id']}")["kind"] == "verification-run"


def test_webhooks(lab, tmp_path, receiver):
    client = lab.client
    dataset, project_id = project_with_labels(lab, tmp_path)
    events = client.webhooks.events()
    assert "project.completed" in events and "webhook.ping" not in events
    hook = client.webhooks.create(project_id, receiver.url + "/hook", ["export.ready"], description="ci")
    secret = hook["secret"]
    assert [listed["id"] for listed in client.webhooks.list(project=project_id)] == [hook["id"]]
    assert "secret" not in client.webhooks.get(hook["id"])
    assert client.webhooks.update(hook["id"], events=["export.ready", "item.adjudicated"])["events"] == [
        "item.adjudicated",
        "export.ready",
    ]
    with pytest.raises(BadRequest, match="url: .*not on the list of allowed"):
        client.webhooks.create(project_id, "https://elsewhere.example.com/", ["export.ready"])

    export = client.exports.start(project_id, "verifybench", wait=True, progress=False)
    [request] = receiver.requests
    verify_webhook(secret, request.headers, request.body)
    assert request.json()["data"]["export"]["id"] == export["id"]

    ping = client.webhooks.ping(hook["id"])
    assert ping["event"] == "webhook.ping"
    deliveries = client.webhooks.deliveries(hook["id"])
    assert [(row["event"], row["status"]) for row in deliveries] == [
        ("webhook.ping", "succeeded"),
        ("export.ready", "succeeded"),
    ]
    assert [row["id"] for row in client.webhooks.deliveries(project=project_id, event="export.ready")] == [
        deliveries[1]["id"]
    ]
    again = client.webhooks.send_again(deliveries[1]["id"])
    assert again["id"] == deliveries[1]["id"]
    detail = client.webhooks.delivery(deliveries[1]["id"])
    assert [(attempt["trigger"], attempt["status_code"]) for attempt in detail["attempt_log"]] == [
        ("event", 200),
        ("manual", 200),
    ]
    assert detail["body"]["event"] == "export.ready"

    rotated = client.webhooks.rotate_secret(hook["id"])
    assert rotated["secret"] != secret
    client.webhooks.ping(hook["id"])
    verify_webhook(rotated["secret"], receiver.requests[-1].headers, receiver.requests[-1].body)
    client.webhooks.delete(hook["id"])
    assert client.webhooks.list() == []

    for_workspace = client.webhooks.create_for_workspace(
        dataset["workspace"], receiver.url + "/team", ["export.ready"], description="team"
    )
    assert for_workspace["workspace"] == dataset["workspace"] and for_workspace["secret"]
    assert [listed["id"] for listed in client.webhooks.list(workspace=dataset["workspace"])] == [for_workspace["id"]]
    client.webhooks.delete(for_workspace["id"])


def test_imported_verdicts(lab, tmp_path):
    client = lab.client
    dataset = import_lab(lab, tmp_path)
    rows = [
        {"completion_id": row["completion_id"], "verifier": judge, "verdict": index % 3 != 0}
        for index, row in enumerate(lab_rows())
        for judge in ("harness-a", "harness-b")
    ]
    imported = client.datasets.import_verdict_records(rows, "lab-run", progress=False)
    assert imported["status"] == "succeeded" and imported["report"]["verdicts_created"] == 24
    assert sorted(imported["report"]["verifiers_created"]) == ["harness-a", "harness-b"]
    kinds = {config["name"]: config["kind"] for config in client.verifiers.list()}
    assert kinds["harness-a"] == "external"

    path = tmp_path / "again.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    again = client.datasets.import_verdicts(path, "lab-run", progress=False)
    assert again["report"]["verdicts_created"] == 0 and again["report"]["verdicts_unchanged"] == 24
    flipped = [{**rows[0], "verdict": not rows[0]["verdict"]}]
    with pytest.raises(JobFailed) as failed:
        client.datasets.import_verdict_records(flipped, "lab-run", progress=False)
    assert "1 conflict" in failed.value.error
    assert dataset["completion_count"] == 12


def test_signing_in_tokens_and_refusals(lab, monkeypatch):
    monkeypatch.setenv("MATHLABEL_TOKEN", lab.token)
    with Client(lab.url) as from_environment:
        assert from_environment.token == lab.token and from_environment.datasets.list() == []
    with pytest.raises(PermissionDenied, match="Only researchers and admins"):
        lab.annotators[0].datasets.list()
    with pytest.raises(NotFound):
        lab.client.projects.get(987654)
    with pytest.raises(PermissionDenied, match="credentials were not provided"), Client(lab.url, "") as anonymous:
        anonymous.projects.list()
    with pytest.raises(BadRequest, match="Unable to log in"):
        Client.login(lab.url, "rita", "wrong password")

    signed_in = Client.login(lab.url, "rita", "mathlabel-demo")
    assert signed_in.datasets.list() == [] and signed_in.token
    signed_in.logout()  # the account's token is revoked: every client holding it is refused
    with pytest.raises(PermissionDenied, match="Invalid token") as refused:  # DRF answers 403 when sessions come first
        signed_in.datasets.list()
    assert refused.value.status_code == 403 and refused.value.url.endswith("/api/datasets/")
    signed_in.close()
