"""Demo annotation projects: a correctness project with some work already done, and an answer-type project
with a conflict waiting for the adjudicator."""

from __future__ import annotations

from core.demo import register_demo_step
from verifybench.demo import DEMO_DATASET_NAME
from verifybench.models import PriorLabel

from . import services
from .models import AnnotationProject, ProjectMember

CORRECTNESS_PROJECT = "Demo: is the final answer correct?"
ANSWER_TYPE_PROJECT = "Demo: answer types"
CORRECTNESS_DESCRIPTION = "Decide whether each completion's **final answer** matches the reference answer."
CORRECTNESS_GUIDELINES = """\
1. Judge the final answer only (the boxed one, or the last one stated), not the reasoning before it.
2. Equivalent forms are correct: $\\frac{1}{2}$, $0.5$ and $\\tfrac{2}{4}$ are the same answer.
3. An answer that needs units is correct only with the right units.
4. Mark an item **unsuitable** (key `u`) when the question or the reference is broken, and say why.
"""


def _members(project, context):
    for name in ("annotator1", "annotator2", "annotator3"):
        services.add_member(project, context.users[name], ProjectMember.Role.ANNOTATOR)
    services.add_member(project, context.users["adjudicator1"], ProjectMember.Role.ADJUDICATOR)


def _label_some(project, user, count, choose):
    for _ in range(count):
        task = services.next_task(project, user)
        if task is None:
            return
        services.submit_label(task, user, value=choose(task.item), seconds_spent=20.0)


@register_demo_step(order=50)
def create_demo_annotation_projects(context) -> None:
    dataset = context.datasets.get(DEMO_DATASET_NAME)
    if dataset is None:
        return
    researcher = context.users["researcher1"]
    if not AnnotationProject.objects.filter(name=CORRECTNESS_PROJECT).exists():
        project = services.create_project(
            dataset=dataset, kind="correctness", name=CORRECTNESS_PROJECT, created_by=researcher, seed=7
        )
        _members(project, context)
        project = services.update_project(
            project, actor=researcher, description=CORRECTNESS_DESCRIPTION, guidelines=CORRECTNESS_GUIDELINES
        )

        def from_prior(item):
            first = PriorLabel.objects.filter(completion_id=item.subject_id).first()
            return bool(first.is_correct) if first else True

        # annotator2 and annotator3 have worked through part of the queue; annotator3 disagrees now and then.
        _label_some(project, context.users["annotator2"], 12, from_prior)
        flip = iter([False, False, True] * 10)
        _label_some(
            project,
            context.users["annotator3"],
            10,
            lambda item: from_prior(item) if next(flip) is False else not from_prior(item),
        )
        context.say(f"Created annotation project {project.pk}: {CORRECTNESS_PROJECT}")

    if not AnnotationProject.objects.filter(name=ANSWER_TYPE_PROJECT).exists():
        project = services.create_project(
            dataset=dataset, kind="answer_type", name=ANSWER_TYPE_PROJECT, created_by=researcher, seed=11
        )
        _members(project, context)
        # One question gets three different answer types, so it waits for the adjudicator.
        item = project.items.order_by("random_key").first()
        item.priority = 100  # served first, so the three labels land on it
        item.save(update_fields=["priority"])
        for name, code in (("annotator1", "A1"), ("annotator2", "A3"), ("annotator3", "A8")):
            user = context.users[name]
            task = services.next_task(project, user)
            services.submit_label(task, user, value=code, seconds_spent=15.0)
        context.say(f"Created annotation project {project.pk}: {ANSWER_TYPE_PROJECT}")
