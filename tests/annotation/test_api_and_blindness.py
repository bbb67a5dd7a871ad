"""The annotation REST API: routes and status codes, what each role may see, and blindness until resolution."""

import json

import pytest
from django.contrib.auth.models import User

from annotation import services, workflow
from annotation.models import AnnotationProject, Item, ItemEvent, Label
from verifybench.models import PriorLabel

from .conftest import build_dataset


def claim(client, project):
    response = client.post(f"/api/projects/{project.pk}/next-task/")
    assert response.status_code == 200, response.content
    return response.json()


def submit(client, task_id, value, **extra):
    return client.post(f"/api/tasks/{task_id}/submit/", {"value": value, **extra}, format="json")


def walk(value):
    """Every key and scalar in a JSON document, as strings."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from walk(inner)
    else:
        yield str(value)


@pytest.fixture
def team(make_project, api_client_for, make_user, researcher, admin_role_user):
    project, people, judges = make_project(annotators=3, adjudicators=1)
    clients = [api_client_for(user) for user in people]
    return {
        "project": project,
        "people": people,
        "clients": clients,
        "judge": judges[0],
        "judge_client": api_client_for(judges[0]),
        "researcher": api_client_for(researcher),
        "admin": api_client_for(admin_role_user),
        "outsider": api_client_for(make_user("annotator")),
    }


class TestAuthAndProjects:
    def test_token_endpoint(self, make_user, client):
        make_user("annotator", username="tokenuser", password="pass-word-123")
        response = client.post("/api/auth/token/", {"username": "tokenuser", "password": "pass-word-123"})
        assert response.status_code == 200 and len(response.json()["token"]) == 40

    def test_anonymous_is_refused(self, team, api_client_for):
        assert api_client_for(None).get("/api/projects/").status_code in (401, 403)

    def test_researcher_creates_and_patches_a_project(
        self, api_client_for, researcher, corpus, django_capture_on_commit_callbacks
    ):
        client = api_client_for(researcher)
        with django_capture_on_commit_callbacks(execute=True):  # the setup job runs (eagerly) once committed
            response = client.post(
                "/api/projects/",
                {"dataset": corpus.name, "kind": "answer_type", "name": "types", "labels_per_item": 3},
                format="json",
            )
        assert response.status_code == 202, response.content
        body = response.json()["project"]
        assert (
            body["labels_per_item"],
            body["tiebreak_annotators"],
            body["show_model_names"],
            body["verdict_visibility"],
            body["lease_minutes"],
        ) == (3, 1, False, "adjudicators", 30)
        project = AnnotationProject.objects.get(pk=body["id"])
        assert project.items.count() == 3
        patched = client.patch(f"/api/projects/{project.pk}/", {"lease_minutes": 5, "gold_rate": 0.1}, format="json")
        assert patched.status_code == 200 and patched.json()["lease_minutes"] == 5
        assert client.get(f"/api/projects/{project.pk}/").json()["gold_rate"] == 0.1

    @pytest.mark.parametrize("change", [{"kind": "correctness"}, {"gold_rate": 2}, {"labels_per_item": 0}])
    def test_bad_project_settings_are_a_400(self, api_client_for, researcher, make_project, change):
        project, _, _ = make_project(annotators=0, kind="answer_type")
        response = api_client_for(researcher).patch(f"/api/projects/{project.pk}/", change, format="json")
        assert response.status_code == 400, response.content

    def test_proof_grade_projects_are_not_created_here(self, api_client_for, researcher, corpus):
        response = api_client_for(researcher).post(
            "/api/projects/", {"dataset": corpus.name, "kind": "proof_grade"}, format="json"
        )
        assert response.status_code == 400

    def test_annotators_see_their_projects_only_and_cannot_create(self, team, corpus):
        client = team["clients"][0]
        listed = client.get("/api/projects/").json()["results"]
        assert [p["id"] for p in listed] == [team["project"].pk]
        assert "show_model_names" not in listed[0] and "gold_rate" not in listed[0]
        assert team["outsider"].get("/api/projects/").json()["results"] == []
        assert (
            client.post("/api/projects/", {"dataset": corpus.name, "kind": "correctness"}, format="json").status_code
            == 403
        )

    def test_members(self, team, make_user):
        project, researcher = team["project"], team["researcher"]
        newcomer = make_user("annotator")
        response = researcher.post(
            f"/api/projects/{project.pk}/members/", {"username": newcomer.username, "role": "annotator"}, format="json"
        )
        assert response.status_code == 200
        assert newcomer.username in [m["username"] for m in response.json()]
        assert team["clients"][0].get(f"/api/projects/{project.pk}/members/").status_code == 403
        assert (
            researcher.post(
                f"/api/projects/{project.pk}/members/", {"username": "ghost", "role": "annotator"}, format="json"
            ).status_code
            == 400
        )


class TestTaskFlow:
    def test_full_cycle_with_adjudication_and_override(self, team):
        project, (a, b, c) = team["project"], team["clients"]
        first = claim(a, project)
        assert submit(a, first["task_id"], True, note="looks right", seconds_spent=12).status_code == 201
        assert submit(a, first["task_id"], True, note="looks right", seconds_spent=12).status_code == 200
        second = claim(b, project)
        assert second["item_id"] == first["item_id"]
        assert submit(b, second["task_id"], False).status_code == 201
        third = claim(c, project)
        assert third["item_id"] == first["item_id"]
        response = c.post(
            f"/api/tasks/{third['task_id']}/submit/",
            {"unsuitable": True, "unsuitable_reason": "the completion is cut off"},
            format="json",
        )
        assert response.status_code == 201
        item_id = first["item_id"]
        assert Item.objects.get(pk=item_id).state == workflow.NEEDS_ADJUDICATION

        conflicts = team["judge_client"].get(f"/api/projects/{project.pk}/conflicts/").json()["results"]
        assert [row["id"] for row in conflicts] == [item_id]
        review = team["judge_client"].get(f"/api/items/{item_id}/").json()
        assert [label["value"] for label in review["labels"]] == [True, False, None]
        assert review["completion"]["model_name"].startswith("secret-model")

        missing_rationale = team["judge_client"].post(
            f"/api/items/{item_id}/adjudicate/", {"value": True}, format="json"
        )
        assert missing_rationale.status_code == 400
        decided = team["judge_client"].post(
            f"/api/items/{item_id}/adjudicate/", {"value": True, "rationale": "the boxed answer matches"}, format="json"
        )
        assert decided.status_code == 200
        assert (decided.json()["state"], decided.json()["resolution"]) == ("resolved", "adjudication")
        again = team["judge_client"].post(
            f"/api/items/{item_id}/adjudicate/", {"value": False, "rationale": "second thoughts"}, format="json"
        )
        assert again.status_code == 409 and "only items that need adjudication" in again.json()["detail"]

        assert (
            team["researcher"]
            .post(f"/api/items/{item_id}/override/", {"value": False, "rationale": "r"}, format="json")
            .status_code
            == 403
        )
        overridden = team["admin"].post(
            f"/api/items/{item_id}/override/",
            {"unsuitable": True, "rationale": "duplicate of another item"},
            format="json",
        )
        assert overridden.status_code == 200 and overridden.json()["excluded"] is True

        history = team["researcher"].get(f"/api/items/{item_id}/history/").json()
        assert [event["event"] for event in history] == [
            "labeled",
            "labeled",
            "tiebreak_requested",
            "labeled",
            "adjudication_requested",
            "adjudicated",
            "overridden",
        ]
        assert history[-1]["rationale"] == "duplicate of another item"
        assert Label.objects.filter(item_id=item_id).count() == 3

    def test_submitting_to_a_resolved_item_is_409(self, team):
        project, (a, b, _) = team["project"], team["clients"]
        first = claim(a, project)
        submit(a, first["task_id"], True)
        second = claim(b, project)
        submit(b, second["task_id"], True)
        changed = submit(a, first["task_id"], False)
        assert changed.status_code == 409
        assert changed.json()["detail"] == "this item is already resolved; your label can no longer change"

    def test_overriding_an_unresolved_item_is_409(self, team):
        project, (a, _, _) = team["project"], team["clients"]
        task = claim(a, project)
        response = team["admin"].post(
            f"/api/items/{task['item_id']}/override/", {"value": True, "rationale": "r"}, format="json"
        )
        assert response.status_code == 409 and response.json()["detail"] == "only resolved items can be overridden"

    def test_adjudicating_an_unresolved_item_is_409(self, team):
        task = claim(team["clients"][0], team["project"])
        response = team["judge_client"].post(
            f"/api/items/{task['item_id']}/adjudicate/", {"value": True, "rationale": "r"}, format="json"
        )
        assert response.status_code == 409
        assert (
            response.json()["detail"]
            == "only items that need adjudication can be adjudicated (this one is in progress)"
        )

    def test_bad_submissions_are_400_and_store_nothing(self, team):
        task = claim(team["clients"][0], team["project"])
        url = f"/api/tasks/{task['task_id']}/submit/"
        client = team["clients"][0]
        assert client.post(url, {}, format="json").status_code == 400
        assert client.post(url, {"value": "perhaps"}, format="json").status_code == 400
        assert client.post(url, {"value": [True]}, format="json").status_code == 400
        assert client.post(url, {"unsuitable": True}, format="json").status_code == 400
        assert not Label.objects.exists()

    def test_submit_with_next_returns_the_next_task_in_the_same_request(self, make_project, api_client_for):
        dataset = build_dataset(questions=1, completions_per_question=2)
        project, (alice, _), _ = make_project(dataset=dataset)
        client = api_client_for(alice)
        first = claim(client, project)
        answer = submit(client, first["task_id"], True, next=True)
        assert answer.status_code == 201, answer.content
        following = answer.json()["next_task"]
        assert following["item_id"] != first["item_id"] and following["status"] == "leased"
        assert following["completion"]["text"] and "model_name" not in following["completion"]
        # the task handed out is the one a claim would give: the lease just taken, not a second one
        assert claim(client, project)["task_id"] == following["task_id"]
        last = submit(client, following["task_id"], False, next=True)
        assert last.status_code == 201 and last.json()["next_task"] is None
        assert Label.objects.filter(annotator=alice).count() == 2

    def test_submit_without_next_claims_nothing(self, make_project, api_client_for):
        dataset = build_dataset(questions=1, completions_per_question=2)
        project, (alice, _), _ = make_project(dataset=dataset)
        client = api_client_for(alice)
        answer = submit(client, claim(client, project)["task_id"], True)
        assert answer.status_code == 201 and "next_task" not in answer.json()
        assert project.items.filter(tasks__annotator=alice).count() == 1

    def test_a_refused_next_claim_keeps_the_label_and_says_why(self, make_project, api_client_for):
        dataset = build_dataset(questions=1, completions_per_question=2)
        project, (alice, _), _ = make_project(dataset=dataset)
        client = api_client_for(alice)
        task = claim(client, project)
        AnnotationProject.objects.filter(pk=project.pk).update(is_active=False)
        answer = submit(client, task["task_id"], True, next=True)
        assert answer.status_code == 201
        assert answer.json()["next_task"] is None and "closed" in answer.json()["next_task_detail"]
        assert Label.objects.filter(annotator=alice).count() == 1

    def test_skip_then_nothing_left_is_204(self, make_project, api_client_for):
        dataset = build_dataset(questions=1, completions_per_question=1)
        project, (alice, _), _ = make_project(dataset=dataset)
        client = api_client_for(alice)
        task = claim(client, project)
        skipped = client.post(f"/api/tasks/{task['task_id']}/skip/")
        assert skipped.status_code == 200 and skipped.json()["status"] == "skipped"
        assert client.post(f"/api/projects/{project.pk}/next-task/").status_code == 204

    def test_progress_for_annotators_and_reviewers(self, team):
        project, (a, b, _) = team["project"], team["clients"]
        for client, value in ((a, True), (b, True)):
            task = claim(client, project)
            submit(client, task["task_id"], value, seconds_spent=10)
        mine = a.get(f"/api/projects/{project.pk}/progress/").json()
        assert (mine["done_total"], mine["left_in_project"]) == (1, 5)
        assert "agreement" not in mine and "annotators" not in mine
        full = team["researcher"].get(f"/api/projects/{project.pk}/progress/").json()
        assert full["by_state"]["resolved"] == 1 and full["by_resolution"]["agreement"] == 1
        assert {row["annotator"]: row["median_seconds"] for row in full["annotators"]} == {
            team["people"][0].username: 10.0,
            team["people"][1].username: 10.0,
        }


class TestQualityFigures:
    def test_agreement_kappa_alpha_and_per_annotator_table(self, make_project, api_client_for, researcher):
        project, (alice, bob, carol), _ = make_project(annotators=3)
        answers = {}  # completion text -> (alice, bob)
        for user in (alice, bob):
            while (task := services.next_task(project, user)) is not None:
                index = task.item.subject.question.external_id + task.item.subject.external_id
                pattern = {
                    "q0c0": (True, True),
                    "q0c1": (False, False),
                    "q1c0": (True, False),
                    "q1c1": (False, False),
                    "q2c0": (True, True),
                    "q2c1": (False, True),
                }[index]
                answers[task.item_id] = pattern
                services.submit_label(
                    task,
                    user,
                    value=pattern[0] if user == alice else pattern[1],
                    seconds_spent=5.0 if user == alice else 9.0,
                )
        while (task := services.next_task(project, carol)) is not None:
            services.submit_label(task, carol, value=False, seconds_spent=7.0)
        body = api_client_for(researcher).get(f"/api/projects/{project.pk}/progress/").json()
        assert body["by_state"]["resolved"] == 6
        assert body["by_resolution"] == {"agreement": 4, "majority": 2, "adjudication": 0, "override": 0}
        agreement = body["agreement"]
        assert agreement["items_compared"] == 6
        assert agreement["raw_agreement"] == pytest.approx(4 / 6)
        # first labels: alice T F T F T F ; bob T F F F T T  -> p_o = 4/6, p_e = 0.5
        assert agreement["cohens_kappa"] == pytest.approx((4 / 6 - 0.5) / 0.5)
        assert agreement["alpha_level"] == "nominal" and agreement["krippendorff_alpha"] is not None
        table = {row["annotator"]: row for row in body["annotators"]}
        assert table[alice.username]["labels"] == 6 and table[carol.username]["labels"] == 2
        assert table[alice.username]["agreement_with_final"] == pytest.approx(5 / 6)
        assert table[carol.username]["agreement_with_final"] == 1.0
        assert table[bob.username]["median_seconds"] == 9.0


class TestGoldApi:
    def test_gold_marking_and_accuracy(self, team):
        project, researcher = team["project"], team["researcher"]
        item = project.items.order_by("id").first()
        refused = team["clients"][0].post(
            f"/api/projects/{project.pk}/gold/", {"item_id": item.pk, "value": True}, format="json"
        )
        assert refused.status_code == 403
        bad = researcher.post(
            f"/api/projects/{project.pk}/gold/", {"item_id": item.pk, "value": "perhaps"}, format="json"
        )
        assert bad.status_code == 400
        response = researcher.post(
            f"/api/projects/{project.pk}/gold/", {"item_id": item.pk, "value": True}, format="json"
        )
        assert response.status_code == 200 and response.json() == {
            "item_id": item.pk,
            "is_gold": True,
            "gold_value": True,
        }
        researcher.patch(f"/api/projects/{project.pk}/", {"gold_rate": 1.0}, format="json")
        task = claim(team["clients"][0], project)
        assert task["item_id"] == item.pk
        assert not any("gold" in token for token in walk(task))
        assert submit(team["clients"][0], task["task_id"], False).status_code == 201
        progress = researcher.get(f"/api/projects/{project.pk}/progress/").json()
        assert progress["items"] == 5 and progress["gold_items"] == 1 and progress["labels"] == 0
        row = {r["annotator"]: r for r in progress["annotators"]}[team["people"][0].username]
        assert (row["gold_accuracy"], row["labels"]) == (0.0, 0)


class TestBlindness:
    def test_annotator_never_sees_others_labels_prior_labels_model_names_or_gold(self, team):
        project, (a, b, c) = team["project"], team["clients"]
        for item in project.items.all():
            PriorLabel.objects.create(
                completion=item.subject,
                is_correct=True,
                source_format="verifybench",
                annotators=["prior-annotator-xyz"],
                source_file="prior-file-xyz.jsonl",
            )
        gold = project.items.order_by("-id").first()
        services.mark_gold(project, gold, True, actor=User.objects.get(pk=team["people"][0].pk))
        first = claim(a, project)
        submit(a, first["task_id"], True, note="ALICE-PRIVATE-NOTE")
        second = claim(b, project)
        assert second["item_id"] == first["item_id"]
        responses = [
            second,
            b.get(f"/api/tasks/{second['task_id']}/").json(),
            b.get(f"/api/projects/{project.pk}/progress/").json(),
            b.get(f"/api/projects/{project.pk}/").json(),
            b.get("/api/projects/").json(),
        ]
        submitted = submit(b, second["task_id"], False, note="BOB-NOTE").json()
        responses.append(submitted)
        responses.append(b.get(f"/api/tasks/{second['task_id']}/").json())  # after resolution too
        for value in (True, False, "x"):
            task = c.post(f"/api/projects/{project.pk}/next-task/")
            if task.status_code == 200:
                responses.append(task.json())
                responses.append(submit(c, task.json()["task_id"], value).json())
        text = json.dumps(responses)
        assert "ALICE-PRIVATE-NOTE" not in text
        assert "secret-model" not in text and "model_name" not in text
        assert "prior-annotator-xyz" not in text and "prior-file-xyz" not in text and "prior" not in text
        assert "gold" not in text and "is_gold" not in text
        assert team["people"][0].username not in text
        own_task = b.get(f"/api/tasks/{second['task_id']}/").json()
        assert own_task["my_label"]["note"] == "BOB-NOTE" and "annotator" not in own_task["my_label"]
        assert own_task["verdicts"] == []

    def test_model_names_when_the_project_shows_them(self, make_project, api_client_for):
        project, (alice, _), _ = make_project(show_model_names=True)
        task = claim(api_client_for(alice), project)
        assert task["completion"]["model_name"].startswith("secret-model")

    def test_answer_type_projects_hide_the_imported_type(self, make_project, api_client_for):
        project, (alice, _), _ = make_project(kind="answer_type")
        task = claim(api_client_for(alice), project)
        assert task["question"]["answer_type"] == "" and task["completion"] is None

    def test_someone_elses_task_is_404(self, team):
        project, (a, b, _) = team["project"], team["clients"]
        task = claim(a, project)
        assert b.get(f"/api/tasks/{task['task_id']}/").status_code == 404
        assert b.post(f"/api/tasks/{task['task_id']}/submit/", {"value": True}, format="json").status_code == 404
        assert b.post(f"/api/tasks/{task['task_id']}/skip/").status_code == 404
        assert team["judge_client"].get(f"/api/tasks/{task['task_id']}/").status_code == 404
        assert not Label.objects.exists()

    def test_non_members_get_404_on_the_project(self, team):
        project, outsider = team["project"], team["outsider"]
        assert outsider.get(f"/api/projects/{project.pk}/").status_code == 404
        assert outsider.get(f"/api/projects/{project.pk}/progress/").status_code == 404
        assert outsider.post(f"/api/projects/{project.pk}/next-task/").status_code == 404
        assert outsider.get(f"/api/projects/{project.pk}/conflicts/").status_code == 404

    def test_annotators_cannot_review_decide_or_see_conflicts(self, team):
        project, (a, _, _) = team["project"], team["clients"]
        task = claim(a, project)
        item_id = task["item_id"]
        assert a.get(f"/api/items/{item_id}/").status_code == 404
        assert a.get(f"/api/items/{item_id}/history/").status_code == 404
        assert (
            a.post(f"/api/items/{item_id}/adjudicate/", {"value": True, "rationale": "r"}, format="json").status_code
            == 404
        )
        assert (
            a.post(f"/api/items/{item_id}/override/", {"value": True, "rationale": "r"}, format="json").status_code
            == 404
        )
        assert a.get(f"/api/projects/{project.pk}/conflicts/").status_code == 403
        assert not ItemEvent.objects.filter(kind__in=["adjudicated", "overridden"]).exists()

    def test_adjudicator_of_another_project_sees_nothing(self, team, make_user, api_client_for, make_project):
        other_judge = api_client_for(make_user("adjudicator"))
        task = claim(team["clients"][0], team["project"])
        assert other_judge.get(f"/api/items/{task['item_id']}/").status_code == 404
        assert (
            other_judge.post(
                f"/api/items/{task['item_id']}/adjudicate/", {"value": True, "rationale": "r"}, format="json"
            ).status_code
            == 404
        )
        assert other_judge.get(f"/api/projects/{team['project'].pk}/conflicts/").status_code == 404

    def test_researcher_without_adjudicator_role_cannot_decide(self, team):
        task = claim(team["clients"][0], team["project"])
        response = team["researcher"].post(
            f"/api/items/{task['item_id']}/adjudicate/", {"value": True, "rationale": "r"}, format="json"
        )
        assert response.status_code == 403
