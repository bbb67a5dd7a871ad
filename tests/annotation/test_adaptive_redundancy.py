"""Model-based aggregation and adaptive redundancy on the real label path: the final label records its rule and
confidence, adaptive items stop when confident, go on when not, respect the label cap, and the refit job fits the
project's labels."""

from __future__ import annotations

import pytest
from django.utils import timezone

from annotation import aggregation, label_model, services, workflow
from annotation.models import AnnotatorModelFit, Item, ItemEvent, Label, Task
from core.jobs import runner
from grading.models import Verdict, VerifierConfig

from .conftest import build_dataset, label_item

CAREFUL = [[0.97, 0.03], [0.03, 0.97]]  # rows: true False, true True (classes in sorted order: False, True)
CARELESS = [[0.5, 0.5], [0.5, 0.5]]
SLOPPY = [[0.8, 0.2], [0.2, 0.8]]


def fitted(project, confusion: dict, weak: dict | None = None, class_prior=(0.5, 0.5)) -> AnnotatorModelFit:
    """A succeeded fit with the given parameters: what the refit job stores, set by hand to known values."""
    parameters = label_model.FittedParameters(
        classes=[False, True],
        class_prior=list(class_prior),
        confusion={str(user.pk): m for user, m in confusion.items()},
        weak=weak or {},
    )
    return AnnotatorModelFit.objects.create(
        project=project, status=AnnotatorModelFit.Status.SUCCEEDED, parameters=parameters.as_json()
    )


@pytest.fixture
def adaptive_project(make_project):
    def build(annotators=4, **settings):
        dataset = build_dataset(questions=1, completions_per_question=1)
        options = {
            "aggregation": "model",
            "adaptive_redundancy": True,
            "confidence_target": 0.98,
            "max_labels": 3,
            "refit_every": 0,
            **settings,
        }
        project, people, judges = make_project(annotators=annotators, adjudicators=1, dataset=dataset, **options)
        return project, people, judges[0], Item.objects.get(project=project)

    return build


def test_adaptive_items_ask_for_one_label_at_a_time(adaptive_project):
    project, people, _, item = adaptive_project()
    assert item.required_labels == 1
    task = services.next_task(project, people[0])
    assert task.item_id == item.pk
    assert services.next_task(project, people[1]) is None  # the one slot is leased: nobody else gets the item


def test_stops_early_when_confident(adaptive_project):
    project, people, _, item = adaptive_project()
    fitted(project, {people[0]: CAREFUL, people[1]: CAREFUL})
    label_item(item, people[:2], [True, True])
    assert item.state == workflow.RESOLVED and item.resolution == workflow.BY_MODEL
    assert item.final_value is True and item.label_count == 2
    assert item.confidence == pytest.approx(0.97**2 / (0.97**2 + 0.03**2))
    event = ItemEvent.objects.get(item=item, kind=ItemEvent.Kind.RESOLVED)
    assert event.value["resolution"] == "model" and event.value["confidence"] == pytest.approx(item.confidence)
    assert services.next_task(project, people[2]) is None


def test_one_careful_label_is_not_enough_and_one_more_is_asked(adaptive_project):
    project, people, _, item = adaptive_project()
    fitted(project, {people[0]: CAREFUL})
    label_item(item, people[:1], [True])
    assert item.state == workflow.IN_PROGRESS and item.required_labels == 2
    assert item.confidence == pytest.approx(0.97)
    assert services.next_task(project, people[1]).item_id == item.pk


def test_goes_on_when_labels_disagree_and_respects_the_cap(adaptive_project):
    project, people, judge, item = adaptive_project(max_labels=3)
    fitted(project, {people[0]: CAREFUL, people[1]: CAREFUL, people[2]: SLOPPY})
    label_item(item, people[:2], [True, False])
    assert item.state == workflow.IN_PROGRESS and item.required_labels == 3
    label_item(item, people[2:3], [True])
    # 0.8 against 0.2 is not 0.98: with the cap reached the item goes to an adjudicator, not to a fourth label
    assert item.state == workflow.NEEDS_ADJUDICATION and item.label_count == 3
    assert item.confidence == pytest.approx(0.8)
    assert services.next_task(project, people[3]) is None
    services.adjudicate(item, judge, value=True, rationale="checked the reference")
    item.refresh_from_db()
    assert item.resolution == workflow.BY_ADJUDICATION and item.confidence is None


def test_a_careless_annotator_counts_for_nothing(adaptive_project):
    project, people, _, item = adaptive_project(max_labels=3)
    fitted(project, {people[0]: CAREFUL, people[1]: CARELESS, people[2]: CAREFUL})
    label_item(item, people[:2], [True, True])
    assert item.state == workflow.IN_PROGRESS and item.confidence == pytest.approx(0.97)
    label_item(item, people[2:3], [True])
    assert item.state == workflow.RESOLVED and item.resolution == workflow.BY_MODEL


def test_a_verifier_vote_is_weak_and_never_the_final_label_alone(adaptive_project):
    project, people, _, item = adaptive_project()
    verifier = VerifierConfig.objects.create(name="rule-check", kind="rule")
    Verdict.objects.create(completion_id=item.subject_id, verifier=verifier, status="correct")
    # a verifier that is right 95% of the time on the project's known answers
    weak = {"rule-check": {"correct": [0.05, 0.95], "incorrect": [0.95, 0.05]}}
    fitted(project, {people[0]: CAREFUL, people[1]: CAREFUL}, weak=weak)
    label_item(item, people[:1], [True])
    # one careful label (odds 97:3) and the verifier (measured odds 19, counted at most 9): enough for the target
    assert item.state == workflow.RESOLVED and item.label_count == 1
    assert item.confidence == pytest.approx(97 * 9 / (97 * 9 + 3))

    dataset = build_dataset(questions=1, completions_per_question=1)
    other = services.create_project(
        dataset=dataset, kind="correctness", aggregation="model", adaptive_redundancy=True, refit_every=0, max_labels=3
    )
    services.add_member(other, people[0])
    other_item = Item.objects.get(project=other)
    Verdict.objects.create(completion_id=other_item.subject_id, verifier=verifier, status="correct")
    fitted(other, {people[0]: CAREFUL}, weak=weak)
    label_item(other_item, people[:1], [False])
    # the human says False, the verifier True: the verifier never overrules the human on its own
    assert other_item.state == workflow.IN_PROGRESS and other_item.required_labels == 2


def test_without_a_fitted_model_the_fixed_protocol_decides(adaptive_project):
    project, people, _, item = adaptive_project()
    label_item(item, people[:1], [True])
    assert item.state == workflow.IN_PROGRESS and item.required_labels == project.labels_per_item
    label_item(item, people[1:2], [True])
    assert item.state == workflow.RESOLVED and item.resolution == workflow.BY_AGREEMENT
    assert item.confidence is None


def test_model_aggregation_without_adaptive_picks_the_most_probable_value(make_project):
    dataset = build_dataset(questions=1, completions_per_question=1)
    project, people, _ = make_project(annotators=3, dataset=dataset, aggregation="model", refit_every=0)
    item = Item.objects.get(project=project)
    assert item.required_labels == 2
    # two annotators who are usually wrong on purpose, one careful one
    adversarial = [[0.1, 0.9], [0.9, 0.1]]
    fitted(project, {people[0]: adversarial, people[1]: CAREFUL, people[2]: adversarial})
    label_item(item, people, [True, False, True])
    assert item.state == workflow.RESOLVED and item.resolution == workflow.BY_MODEL
    assert item.final_value is False  # a plain majority would have said True
    assert item.confidence > 0.99


def test_majority_projects_record_no_confidence(make_project):
    dataset = build_dataset(questions=1, completions_per_question=1)
    project, people, _ = make_project(annotators=2, dataset=dataset)
    item = Item.objects.get(project=project)
    fitted(project, {people[0]: CAREFUL, people[1]: CAREFUL})
    label_item(item, people, [True, True])
    assert item.resolution == workflow.BY_AGREEMENT and item.confidence is None


def test_settings_refuse_adaptive_without_the_model_and_switching_mid_labeling(make_project, researcher):
    dataset = build_dataset(questions=1, completions_per_question=2)
    project, people, _ = make_project(annotators=2, dataset=dataset)
    with pytest.raises(services.InvalidSubmission, match="needs model aggregation"):
        services.update_project(project, actor=researcher, adaptive_redundancy=True)
    task = services.next_task(project, people[0])
    services.submit_label(task, people[0], value=True)
    with pytest.raises(services.SettingRefused, match="being labeled"):
        services.update_project(project, actor=researcher, aggregation="model", adaptive_redundancy=True)
    project.refresh_from_db()
    assert project.aggregation == "majority" and not project.adaptive_redundancy
    services.update_project(project, actor=researcher, aggregation="model")
    project.refresh_from_db()
    assert project.aggregation == "model"


def test_switching_adaptive_on_before_labeling_asks_for_one_label(make_project, researcher):
    dataset = build_dataset(questions=1, completions_per_question=2)
    project, _, _ = make_project(annotators=2, dataset=dataset)
    services.update_project(project, actor=researcher, aggregation="model", adaptive_redundancy=True)
    assert set(Item.objects.filter(project=project).values_list("required_labels", flat=True)) == {1}
    services.update_project(project, actor=researcher, adaptive_redundancy=False)
    assert set(Item.objects.filter(project=project).values_list("required_labels", flat=True)) == {2}


def test_the_refit_job_fits_labels_with_gold_anchors(make_project, researcher):
    dataset = build_dataset(questions=6, completions_per_question=5)  # 30 items
    project, people, _ = make_project(annotators=3, dataset=dataset, aggregation="model", refit_every=0)
    items = list(Item.objects.filter(project=project).order_by("pk"))
    gold_items, work = items[:10], items[10:]
    for n, item in enumerate(gold_items):
        services.mark_gold(project, item, n % 2 == 0, actor=researcher)
    truth = {item.pk: item.pk % 2 == 0 for item in work}
    for item in gold_items:
        item.refresh_from_db()
        truth[item.pk] = item.gold_value
    # people[2] always says the opposite of the truth
    now = timezone.now()
    for item in items:
        for n, user in enumerate(people):
            value = truth[item.pk] if n < 2 else not truth[item.pk]
            task = Task.objects.create(
                item=item, annotator=user, status=Task.Status.SUBMITTED, leased_at=now, expires_at=now
            )
            Label.objects.create(item=item, task=task, annotator=user, value=value)
    fit = aggregation.request_refit(project, actor=researcher)
    fit = runner.run("annotator-model", fit.pk)
    assert fit.status == AnnotatorModelFit.Status.SUCCEEDED, fit.error
    assert fit.labels_seen == 90 and fit.parameters["classes"] == [False, True]
    summary = fit.summary["annotators"]
    assert summary[str(people[0].pk)]["accuracy"] > 0.8
    assert summary[str(people[2].pk)]["accuracy"] < 0.2
    assert set(summary[str(people[0].pk)]["by_type"]) == {"A1"}
    parameters = label_model.FittedParameters.from_json(fit.parameters)
    # the adversarial annotator's True reads as evidence for False
    assert parameters.posterior([(people[2].pk, True)]).label is False
    assert aggregation.latest_fit(project) == fit


def test_a_refit_is_queued_after_enough_new_labels(make_project):
    dataset = build_dataset(questions=2, completions_per_question=2)
    project, people, _ = make_project(annotators=2, dataset=dataset, aggregation="model", refit_every=3)
    item_ids = list(Item.objects.filter(project=project).values_list("pk", flat=True))
    for user in people:
        task = services.next_task(project, user)
        services.submit_label(task, user, value=True)
    assert not AnnotatorModelFit.objects.filter(project=project).exists()
    task = services.next_task(project, people[0])
    services.submit_label(task, people[0], value=False)
    fits = AnnotatorModelFit.objects.filter(project=project)
    assert fits.count() == 1 and fits.get().status == AnnotatorModelFit.Status.QUEUED
    task = services.next_task(project, people[1])
    services.submit_label(task, people[1], value=False)
    assert fits.count() == 1  # one queued refit at a time
    assert item_ids


def test_the_api_shows_the_latest_fit_and_queues_a_refit(client, make_project, researcher):
    dataset = build_dataset(questions=1, completions_per_question=1)
    project, people, _ = make_project(annotators=1, dataset=dataset, aggregation="model", refit_every=0)
    url = f"/api/projects/{project.pk}/annotator-model/"
    client.force_login(people[0])
    assert client.get(url).status_code == 403 and client.post(url).status_code == 403
    client.force_login(researcher)
    assert client.get(url).json() == {"aggregation": "model", "adaptive_redundancy": False, "fit": None}
    queued = client.post(url)
    assert queued.status_code == 202 and queued.json()["job"]["kind"] == "annotator-model"
    again = client.post(url)
    assert again.json()["job"]["id"] == queued.json()["job"]["id"]
    fitted(project, {people[0]: CAREFUL})
    shown = client.get(url).json()["fit"]
    assert shown["job"]["status"] == "succeeded"
    response = client.patch(
        f"/api/projects/{project.pk}/", {"adaptive_redundancy": True, "max_labels": 3}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["adaptive_redundancy"] is True
    response = client.patch(f"/api/projects/{project.pk}/", {"confidence_target": 1.5}, content_type="application/json")
    assert response.status_code == 400


def test_weak_votes_count_with_their_measured_confusion_up_to_a_cap():
    parameters = label_model.FittedParameters(
        classes=[False, True],
        class_prior=[0.5, 0.5],
        confusion={"1": CAREFUL},
        weak={
            "good": {"correct": [0.2, 0.8], "incorrect": [0.8, 0.2]},
            "superb": {"correct": [0.001, 0.999], "incorrect": [0.999, 0.001]},
        },
    )
    assert parameters.posterior([], [("good", "correct")]).confidence == pytest.approx(0.8)
    assert parameters.posterior([], [("superb", "correct")]).confidence == pytest.approx(0.9)  # odds 9 at most
    both = parameters.posterior([(1, True)], [("superb", "correct"), ("good", "correct"), ("unknown", "x")])
    assert both.n_weak_votes == 2 and both.confidence == pytest.approx(97 * 9 / (97 * 9 + 3))
    table = label_model.measured_weak_confusion(
        [(True, "correct")] * 8 + [(True, "incorrect")] * 2 + [(False, "incorrect")] * 10, [False, True]
    )
    assert table["correct"] == pytest.approx([0.5 / 11, 8.5 / 11])
    assert table["incorrect"] == pytest.approx([10.5 / 11, 2.5 / 11])


def test_a_verifier_is_measured_against_uncertain_human_posteriors_without_losing_its_accuracy():
    import numpy as np

    rng = np.random.default_rng(4)
    truth = rng.random(4000) < 0.6
    said = np.where(rng.random(4000) < 0.8, truth, ~truth)  # one human label, right 80% of the time
    right = rng.random(4000) < 0.9
    answers = ["correct" if t == r else "incorrect" for t, r in zip(truth, right, strict=True)]
    # the items' posteriors from that label (prior 0.6): counting with them as they are reads the verifier as much
    # worse than it is; the EM on top of them recovers its 0.9
    if_true, if_false = 0.48 / 0.56, 0.12 / 0.44
    human = np.where(said[:, None], [1 - if_true, if_true], [1 - if_false, if_false])
    plain = label_model.fit_weak_confusion(human, answers, iterations=0)
    fitted_table = label_model.fit_weak_confusion(human, answers)
    assert plain["correct"][1] < 0.85 and plain["incorrect"][0] < 0.8
    assert fitted_table["correct"][1] == pytest.approx(0.9, abs=0.03)
    assert fitted_table["incorrect"][0] == pytest.approx(0.9, abs=0.03)
