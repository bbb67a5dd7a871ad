"""Annotation pages: keyboard-first labeling, the conflict queue and adjudication.

Everything an annotator sees of a task comes from annotation.selectors.task_payload, which leaves out other
people's labels, imported labels and (unless the project shows them) model names. The browser never renders
Markdown: the labeling page swaps in task fragments rendered here.
"""

from __future__ import annotations

import json
from functools import lru_cache

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors, services, workflow
from annotation.models import AnnotationProject, Item, ProjectMember
from core import taxonomy
from grading.proofs.subject import PROOF_GRADE
from verifybench.label_rules import ANSWER_TYPE, CORRECTNESS

from .rendering import (
    final_answer_span,
    readable_time,
    render_answer,
    render_completion,
    render_markdown,
    verdict_rows,
)
from .views_workspace import guidelines_panel

# Answer-type examples that are formulas are typeset; the string and choice examples are plain words.
_PLAIN_EXAMPLE_CLASSES = ("C", "D")


@lru_cache(maxsize=1)
def taxonomy_choices() -> tuple[dict, ...]:
    """The 18 answer types with their examples, ready for a template (rendered once per process)."""
    choices = []
    for answer_type in taxonomy.ANSWER_TYPES:
        if answer_type.coarse in _PLAIN_EXAMPLE_CLASSES:
            example_html = render_markdown(answer_type.example)
        else:
            example_html = render_markdown(f"${answer_type.example}$")
        choices.append(
            {
                "code": answer_type.code,
                "name": answer_type.name,
                "description": answer_type.description,
                "coarse": answer_type.coarse,
                "coarse_name": taxonomy.COARSE_CLASSES[answer_type.coarse],
                "example_html": example_html,
            }
        )
    return tuple(choices)


def _annotator_project(user, project_id: int) -> AnnotationProject:
    """The project if the user labels in it; a 404 otherwise (its existence is not disclosed)."""
    project = AnnotationProject.objects.select_related("dataset").filter(pk=project_id).first()
    if project is None or project.kind == PROOF_GRADE:
        raise Http404("No such labeling project.")
    if not services.is_member(project, user, ProjectMember.Role.ANNOTATOR):
        raise Http404("No such labeling project.")
    return project


def _adjudicated_project(user, project_id: int) -> AnnotationProject:
    project = AnnotationProject.objects.select_related("dataset").filter(pk=project_id).first()
    if project is None or not selectors.can_adjudicate(project, user):
        raise Http404("No such project.")
    return project


def task_context(task, project: AnnotationProject) -> dict:
    """What the task fragment shows, built from the annotator-safe payload only."""
    payload = selectors.task_payload(task)
    reference = payload["reference"]
    context = {
        "payload": payload,
        "task": task,
        "question_html": render_markdown(payload["question"]["text"]),
        "reference_answer_html": render_answer(reference["final_answer"]) if reference["final_answer"] else "",
        "reference_solution_html": render_markdown(reference["solution"]) if reference["solution"] else "",
        "completion_html": "",
        "has_final_answer": False,
        "is_answer_type": project.kind == ANSWER_TYPE,
        "my_label": payload["my_label"],
    }
    completion = payload["completion"]
    if completion is not None:
        span = final_answer_span(completion["text"])
        context["completion_html"] = render_completion(completion["text"], span)
        context["has_final_answer"] = span is not None
        context["model_name"] = completion.get("model_name", "")
    if context["is_answer_type"]:
        context["answer_types"] = taxonomy_choices()
    return context


def _page_context(request, project: AnnotationProject, task) -> dict:
    context = {
        "project": project,
        "progress": selectors.my_progress(project, request.user),
        "is_answer_type": project.kind == ANSWER_TYPE,
        "answer_types": taxonomy_choices() if project.kind == ANSWER_TYPE else (),
    }
    if task is not None:
        context.update(task_context(task, project))
    return context


@login_required
@require_GET
def label_page(request, project_id: int):
    """The labeling page's shell: progress, guidelines and recent labels. It leases nothing; the page's script
    claims its items with a POST to the queue endpoint (a GET never changes anything)."""
    project = _annotator_project(request.user, project_id)
    context = _page_context(request, project, None)
    context["closed_message"] = "" if project.is_active else "this project is closed"
    context["recent"] = selectors.recent_labels(project, request.user)
    context["guidelines"] = guidelines_panel(project, request.user, back_to=request.get_full_path())
    return render(request, "annotation/label.html", context)


# The most task ids a page may say it already holds (its queue is one shown item plus QUEUE_AHEAD, and a few
# items it went back to).
_MAX_HELD = 16


class _BadRequest(Exception):
    pass


def _task_id(body: dict, name: str = "task_id") -> int:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _BadRequest(f"{name} must be a task id")
    return value


def _held_ids(body: dict) -> set[int]:
    held = body.get("have", [])
    if (
        not isinstance(held, list)
        or len(held) > _MAX_HELD
        or any(isinstance(value, bool) or not isinstance(value, int) for value in held)
    ):
        raise _BadRequest(f"have must be a list of at most {_MAX_HELD} task ids")
    return set(held)


def _queue_entry(request, task, project: AnnotationProject) -> dict:
    context = task_context(task, project)
    item = task.item
    return {
        "id": task.pk,
        "html": render_to_string("annotation/_task.html", context, request=request),
        "expires_at": task.expires_at.isoformat(),
        "my_label": context["my_label"],
        # why the label given can no longer change (the page says so instead of inviting a change the server refuses)
        "locked": workflow.label_change_refusal(item.state, is_gold=item.is_gold) if context["my_label"] else None,
    }


def _own_project_task(request, project: AnnotationProject, body: dict):
    task = selectors.own_task(request.user, _task_id(body))
    if task is None or task.item.project_id != project.pk:
        raise Http404("No such task.")
    return task


def _text(body: dict, name: str, limit: int) -> str:
    value = body.get(name, "")
    if not isinstance(value, str) or len(value) > limit:
        raise _BadRequest(f"{name} must be text of at most {limit} characters")
    return value


def _apply(request, project: AnnotationProject, action: str, body: dict) -> dict:
    """Do what the page asked; returns the part of the answer about it. Raises WorkflowError on a refusal."""
    if action == "fill":
        return {}
    if action == "open":
        return {"task": _queue_entry(request, _own_project_task(request, project, body), project)}
    task = _own_project_task(request, project, body)
    if action == "skip":
        services.skip_task(task, request.user)
        return {"skipped": task.pk}
    if action != "label":
        raise _BadRequest("action must be fill, label, skip or open")
    seconds = body.get("seconds_spent")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0):
        raise _BadRequest("seconds_spent must be a number of seconds")
    result = services.submit_label(
        task,
        request.user,
        value=body.get("value"),
        note=_text(body, "note", 20000),
        unsuitable=body.get("unsuitable") is True,
        unsuitable_reason=_text(body, "unsuitable_reason", 5000),
        seconds_spent=float(seconds) if seconds is not None else None,
    )
    return {
        "saved": {
            "task_id": task.pk,
            "value": result.label.value,
            "unsuitable": result.label.unsuitable,
            "created": result.created,
        }
    }


@login_required
@require_POST
def label_queue(request, project_id: int):
    """The labeling page's one endpoint, JSON in and out: `fill` claims the page's queue (the shown item and up to
    QUEUE_AHEAD more, leased ahead), `label` stores a label and tops the queue up in the same request, `skip`
    releases an item, `open` renders one of the user's own tasks again (to go back and change a label).

    Every answer but `open` carries the tasks of the queue the page does not hold yet (`have`) and the user's
    progress. A refusal of the workflow is a 409 with the reason, a malformed request a 400."""
    project = _annotator_project(request.user, project_id)
    try:
        body = json.loads(request.body or b"{}")
        if not isinstance(body, dict):
            raise _BadRequest("send a JSON object")
        held = _held_ids(body)
        action = body.get("action", "fill")
        answer = _apply(request, project, action, body)
        if action != "open":
            tasks = services.claim_queue(project, request.user)
            answer["tasks"] = [_queue_entry(request, task, project) for task in tasks if task.pk not in held]
            answer["queue"] = [task.pk for task in tasks]
            answer["progress"] = selectors.my_progress(project, request.user)
    except (ValueError, _BadRequest) as exc:
        return JsonResponse({"detail": str(exc)}, status=400)
    except services.InvalidSubmission as exc:
        return JsonResponse({"detail": str(exc)}, status=400)
    except services.WorkflowError as exc:
        return JsonResponse({"detail": str(exc)}, status=409)
    return JsonResponse(answer)


@login_required
@require_POST
def label_release(request, project_id: int):
    """Releases the leases a page held ahead when it is left (sent with navigator.sendBeacon as a form)."""
    project = _annotator_project(request.user, project_id)
    ids = [int(value) for value in request.POST.getlist("task") if value.isdigit()][:_MAX_HELD]
    owned = [task.pk for task in selectors.own_tasks(request.user, ids) if task.item.project_id == project.pk]
    released = services.release_tasks(request.user, owned)
    return JsonResponse({"released": released})


@login_required
@require_GET
def label_fragment(request, project_id: int):
    """One task rendered for the labeling page to swap in (`?task=<id>`); without a task, the all-done state."""
    project = _annotator_project(request.user, project_id)
    task = None
    task_id = request.GET.get("task")
    if task_id:
        if not task_id.isdigit():
            raise Http404("No such task.")
        task = selectors.own_task(request.user, int(task_id))
        if task is None or task.item.project_id != project.pk:
            raise Http404("No such task.")
    return render(request, "annotation/_task_slot.html", _page_context(request, project, task))


# ---------------------------------------------------------------- adjudication


@login_required
@require_GET
def conflicts_page(request, project_id: int):
    project = _adjudicated_project(request.user, project_id)
    after = request.GET.get("after", "")
    try:
        conflicts, next_key = selectors.conflicts_page(project, after)
    except selectors.InvalidFilter as exc:
        return render(
            request, "annotation/conflicts.html", {"project": project, "rows": [], "error": str(exc)}, status=400
        )
    summaries = selectors.summaries(conflicts)
    rows = [
        {
            "item": item,
            "summary": summaries[item.pk],
            "review_url": review_url(item),
            "item_url": reverse("item-detail", args=[item.pk]),
        }
        for item in conflicts
    ]
    return render(
        request,
        "annotation/conflicts.html",
        {
            "project": project,
            "rows": rows,
            "after": after,
            "next_key": next_key,
            "total": selectors.conflict_count(project),
        },
    )


def review_url(item: Item) -> str:
    """Where an item is reviewed and decided: proofs on the proof-grading conflict page, the rest here."""
    if item.project.kind == PROOF_GRADE:
        return reverse("proof-conflict", args=[item.pk])
    return reverse("annotation-adjudicate", args=[item.pk])


def _decision_value(project: AnnotationProject, raw: str):
    if project.kind == CORRECTNESS:
        return {"correct": True, "incorrect": False}.get(raw, raw)
    return raw


def _next_conflict(project: AnnotationProject, after: Item | None = None) -> Item | None:
    queue = selectors.conflicts(project)
    if after is not None:
        queue = queue.exclude(pk=after.pk)
    return queue.first()


@login_required
@require_http_methods(["GET", "POST"])
def adjudicate_page(request, item_id: int):
    item = get_object_or_404(Item.objects.select_related("project__dataset"), pk=item_id)
    project = item.project
    if project.kind == PROOF_GRADE:
        raise Http404("No such item.")
    if not selectors.can_adjudicate(project, request.user):
        if request.method == "GET" and selectors.can_review(project, request.user):
            return redirect(reverse("item-detail", args=[item.pk]))  # researchers read items on their review page
        raise Http404("No such item.")
    error = ""
    form = {"decision": "", "rationale": ""}
    if request.method == "POST":
        form = {"decision": request.POST.get("decision", ""), "rationale": request.POST.get("rationale", "")}
        unsuitable = form["decision"] == "unsuitable"
        if not form["decision"]:
            error = "Choose a final value (or unsuitable) before deciding."
        else:
            try:
                services.adjudicate(
                    item,
                    request.user,
                    value=None if unsuitable else _decision_value(project, form["decision"]),
                    unsuitable=unsuitable,
                    rationale=form["rationale"],
                )
            except services.WorkflowError as exc:
                error = str(exc)
            else:
                messages.success(request, f"Item {item.pk} decided.")
                following = _next_conflict(project, after=item)
                if following is None:
                    return redirect(reverse("annotation-conflicts", args=[project.pk]))
                return redirect(reverse("annotation-adjudicate", args=[following.pk]))
    review = selectors.item_review(item)
    completion = review["completion"]
    completion_html, has_final_answer = "", False
    if completion is not None:
        span = final_answer_span(completion["text"])
        completion_html, has_final_answer = render_completion(completion["text"], span), span is not None
    reference = review["reference"]
    following = _next_conflict(project, after=item)
    return render(
        request,
        "annotation/adjudicate.html",
        {
            "project": project,
            "item": item,
            "review": review,
            "history": [{**event, "at_display": readable_time(event["at"])} for event in selectors.history(item)],
            "question_html": render_markdown(review["question"]["text"]),
            "reference_answer_html": render_answer(reference["final_answer"]) if reference["final_answer"] else "",
            "reference_answer_source": reference["final_answer"] or "",
            "reference_solution_html": render_markdown(reference["solution"]) if reference["solution"] else "",
            "completion_html": completion_html,
            "verdicts": verdict_rows(review.get("verdicts") or []),
            "has_final_answer": has_final_answer,
            "is_answer_type": project.kind == ANSWER_TYPE,
            "answer_types": taxonomy_choices(),
            "can_decide": item.state == workflow.NEEDS_ADJUDICATION and not item.is_gold,
            "form": form,
            "error": error,
            "next_conflict": following,
        },
        status=400 if error else 200,
    )
