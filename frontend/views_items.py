"""The researcher workspace over a project's items: the item browser, bulk actions, and one page per item.

The browser reads one keyset page at a time (annotation.selectors.browse_items), so it costs the same in a project of
any size; filters on what a subject says go through the subject plug-ins. Researchers and admins change items in bulk
(annotation.services.bulk_apply); admins override a final label from the item page. Every action is a plain POST
form, and the subject's text reaches the page only through frontend.rendering.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import selectors, services, workflow
from annotation.models import AnnotationProject, Item, ItemEvent
from core import labels, roles, taxonomy
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

FILTER_FIELDS = (
    "state",
    "resolution",
    "disagreement",
    "model",
    "answer_type",
    "verifier",
    "verdict",
    "annotator",
    "gold",
    "q",
)
PAGE_PARAMS = ("after", "before")


def _reviewed_project(user, project_id: int) -> AnnotationProject:
    """The project if the user reviews it (researchers, admins, its adjudicators); a 404 otherwise."""
    project = AnnotationProject.objects.select_related("dataset").filter(pk=project_id).first()
    if project is None or not selectors.can_review(project, user):
        raise Http404("No such project.")
    return project


def item_url(item: Item) -> str:
    return reverse("item-detail", args=[item.pk])


def decide_url(item: Item) -> str:
    """Where an adjudicator decides the item: proofs on the proof-grading page, the rest on the adjudication page."""
    if item.project.kind == PROOF_GRADE:
        return reverse("proof-conflict", args=[item.pk])
    return reverse("annotation-adjudicate", args=[item.pk])


def _value_choices(project: AnnotationProject) -> dict:
    """How a final value or a known answer is chosen on this project's forms."""
    if project.kind == CORRECTNESS:
        return {"kind": "choice", "choices": [("correct", "Correct"), ("incorrect", "Incorrect")]}
    if project.kind == ANSWER_TYPE:
        return {"kind": "choice", "choices": [(t.code, f"{t.code} - {t.name}") for t in taxonomy.ANSWER_TYPES]}
    return {"kind": "number"}


def _form_value(project: AnnotationProject, raw: str):
    raw = (raw or "").strip()
    if project.kind == CORRECTNESS:
        return {"correct": True, "incorrect": False}.get(raw, raw)
    if project.kind == ANSWER_TYPE:
        return raw
    try:
        return float(raw)
    except ValueError:
        return raw


def _page_link(request, **params) -> str:
    query = request.GET.copy()
    for name in PAGE_PARAMS:
        query.pop(name, None)
    for name, value in params.items():
        query[name] = value
    return f"{request.path}?{query.urlencode()}"


# ---------------------------------------------------------------- the item browser


@login_required
@require_GET
def item_browser(request, project_id: int):
    project = _reviewed_project(request.user, project_id)
    error = ""
    sort = request.GET.get("sort") or "id"
    try:
        item_filter = selectors.filter_for(project, request.user, request.GET)
        page = selectors.browse_items(
            project, item_filter, sort=sort, after=request.GET.get("after", ""), before=request.GET.get("before", "")
        )
    except selectors.InvalidFilter as exc:
        error, item_filter, sort = str(exc), selectors.ItemFilter(), "id"
        page = selectors.BrowsePage([], None, None)
    rows = selectors.browse_rows(page.items)
    for row, item in zip(rows, page.items):
        row["url"] = item_url(item)
    options = selectors.filter_options(project, request.user)
    filter_query = QueryDict(mutable=True)
    filter_query.update(item_filter.as_params())
    return render(
        request,
        "items/browser.html",
        {
            "project": project,
            "rows": rows,
            "error": error,
            "current": {name: request.GET.get(name, "") for name in FILTER_FIELDS} if not error else {},
            "sort": sort,
            "sorts": list(selectors.SORT_NAMES.items()),
            "states": list(Item.State.choices),
            "resolutions": [(value, name) for value, name in Item.Resolution.choices if value],
            "answer_types": [(t.code, f"{t.code} - {t.name}") for t in taxonomy.ANSWER_TYPES],
            "subject_params": options["subject_params"],
            "choices": options["choices"],
            "annotators": options["annotators"],
            "filtered": bool(item_filter.as_params()),
            "filter_query": filter_query.urlencode(),
            "next_url": _page_link(request, after=page.next_key) if page.next_key else "",
            "previous_url": _page_link(request, before=page.previous_key) if page.previous_key else "",
            "first_url": _page_link(request) if page.previous_key else "",
            "can_bulk": selectors.researches(project, request.user),
            "bulk_limit": f"{services.BULK_LIMIT:,}",
            "value_choices": _value_choices(project),
            "can_adjudicate": selectors.can_adjudicate(project, request.user),
        },
        status=400 if error else 200,
    )


def _back(request, fallback: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect(fallback)


@login_required
@require_POST
def item_bulk(request, project_id: int):
    """Apply one action to the ticked items or to every item the browser's filter matches (researchers, admins)."""
    project = _reviewed_project(request.user, project_id)
    if not selectors.researches(project, request.user):
        raise PermissionDenied("Only the researchers of its workspace and admins change items in bulk.")
    fallback = reverse("item-browser", args=[project.pk])
    action, change = request.POST.get("action", ""), 0
    if action in ("raise_priority", "lower_priority"):
        try:
            amount = int(request.POST.get("amount") or 1)
        except ValueError:
            amount = 0
        change, action = (amount if action == "raise_priority" else -amount), services.PRIORITY
    try:
        if request.POST.get("scope") == "matching":
            item_filter = selectors.ItemFilter.from_params(QueryDict(request.POST.get("filter", "")))
            items = selectors.filtered_items(project, item_filter)
        else:
            chosen = [raw for raw in request.POST.getlist("items") if raw.isdigit()]
            items = Item.objects.filter(project=project, pk__in=chosen)
        result = services.bulk_apply(
            project,
            items,
            action,
            actor=request.user,
            rationale=request.POST.get("rationale", ""),
            value=_form_value(project, request.POST.get("value", "")),
            change=change,
        )
    except (selectors.InvalidFilter, services.WorkflowError) as exc:
        messages.error(request, f"Nothing was changed: {exc}.")
    else:
        messages.success(request, result.summary())
    return _back(request, fallback)


# ---------------------------------------------------------------- one item


def _subject_context(review: dict) -> dict:
    """The subject's text as safe HTML: question, reference and completion, or problem and (anonymous) proof."""
    context: dict = {}
    if "question" in review:
        reference = review["reference"]
        context["question_html"] = render_markdown(review["question"]["text"])
        context["reference_answer_html"] = render_answer(reference["final_answer"]) if reference["final_answer"] else ""
        context["reference_answer_source"] = reference["final_answer"] or ""
        context["reference_solution_html"] = render_markdown(reference["solution"]) if reference["solution"] else ""
    completion = review.get("completion")
    if completion:
        span = final_answer_span(completion["text"])
        context["completion_html"] = render_completion(completion["text"], span)
        context["has_final_answer"] = span is not None
    if "submission" in review:
        context["statement_html"] = render_markdown(review["problem"]["statement"])
        context["proof_html"] = render_markdown(review["submission"]["text"])
    return context


EVENT_NAMES = dict(ItemEvent.Kind.choices)


def _event_detail(event: dict, rules) -> str:
    """One line on what an event's value says, in words."""
    value, kind = event["value"], event["event"]

    def final(data: dict) -> str:
        if data.get("excluded") and data.get("final_value") is None:
            return "unsuitable"
        return "none" if data.get("final_value") is None else rules.display(data["final_value"])

    if not isinstance(value, dict):
        return f"known answer {rules.display(value)}" if kind == ItemEvent.Kind.GOLD_SET and value is not None else ""
    if kind in (ItemEvent.Kind.LABELED, ItemEvent.Kind.LABEL_CHANGED):
        return "unsuitable" if value.get("unsuitable") else rules.display(value.get("value"))
    if kind == ItemEvent.Kind.PRIORITY_CHANGED:
        return f"priority {value.get('from')} → {value.get('to')}"
    if kind == ItemEvent.Kind.REOPENED:
        return f"final was {final(value.get('previous') or {})}; {value.get('required_labels')} labels needed now"
    if kind == ItemEvent.Kind.EXCLUDED:
        return f"final was {final(value.get('previous') or {})}"
    if "final_value" in value:
        return f"final {final(value)}"
    return ""


@login_required
@require_http_methods(["GET", "POST"])
def item_detail(request, item_id: int):
    """Everything about one item for its reviewers: the subject, every label, the verdicts the project lets
    reviewers see, and the full history. Researchers act on it; admins override its final label (POST)."""
    item = get_object_or_404(Item.objects.select_related("project__dataset"), pk=item_id)
    project = item.project
    if not selectors.can_review(project, request.user):
        raise Http404("No such item.")
    is_admin = roles.is_admin(request.user)
    error = ""
    form = {"decision": "", "rationale": ""}
    if request.method == "POST":
        if not is_admin:
            raise PermissionDenied("Only admins override a final label.")
        form = {"decision": request.POST.get("decision", "").strip(), "rationale": request.POST.get("rationale", "")}
        unsuitable = form["decision"] == "unsuitable"
        if not form["decision"]:
            error = "Choose the new final value (or unsuitable)."
        else:
            try:
                services.override(
                    item,
                    request.user,
                    value=None if unsuitable else _form_value(project, form["decision"]),
                    unsuitable=unsuitable,
                    rationale=form["rationale"],
                )
            except (services.WorkflowError, labels.InvalidValue) as exc:
                error = str(exc)
            else:
                messages.success(request, f"Item {item.pk}: final label overridden.")
                return redirect(item_url(item))
    review = selectors.item_review(item)
    can_adjudicate = selectors.can_adjudicate(project, request.user)
    return render(
        request,
        "items/detail.html",
        {
            "project": project,
            "item": item,
            "review": review,
            "labels": selectors.item_labels(item),
            "verdicts": verdict_rows(review.get("verdicts") or []),
            "history": [
                {
                    **event,
                    "at_display": readable_time(event["at"]),
                    "name": EVENT_NAMES.get(event["event"], event["event"]),
                    "detail": _event_detail(event, project.judgement),
                }
                for event in selectors.history(item)
            ],
            "gold_display": project.judgement.display(item.gold_value) if item.gold_value is not None else "",
            **_subject_context(review),
            "is_proof": project.kind == PROOF_GRADE,
            "decide_url": decide_url(item) if can_adjudicate and item.state == workflow.NEEDS_ADJUDICATION else "",
            "can_bulk": selectors.researches(project, request.user),
            "can_override": is_admin and item.state == workflow.RESOLVED and not item.is_gold,
            "is_admin": is_admin,
            "value_choices": _value_choices(project),
            "form": form,
            "error": error,
        },
        status=400 if error else 200,
    )
