"""A project's webhooks page for researchers: register URLs for events, see every delivery with its attempts, and
send one again. Every action is a POST form with a CSRF token that works without JavaScript; the rules live in
webhooks.services."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import AnnotationProject
from webhooks import selectors, services
from webhooks.models import Webhook, WebhookDelivery

from .views_workspace import _researcher_project

DELIVERIES_PER_PAGE = 25
ACTIONS = {"activate", "deactivate", "rotate-secret", "ping", "delete"}


class WebhookForm(forms.Form):
    url = forms.CharField(
        max_length=2000,
        label="URL",
        help_text="Where the deliveries are posted. Its host must be on the allow-list of LLM judges "
        "(Admin → Allowed judge hosts).",
    )
    events = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="What the URL hears.")
    description = forms.CharField(max_length=500, required=False, help_text="Optional: what listens there.")

    prefix = "hook"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = [(name, f"{name}: {text}") for name, text in services.hookable_events().items()]


def _page(request, project: AnnotationProject, *, status: int = 200, form=None, new_secret=None):
    hooks = list(selectors.project_webhooks(project.pk))
    page = Paginator(selectors.deliveries(project_id=project.pk), DELIVERIES_PER_PAGE).get_page(request.GET.get("page"))
    attempts = selectors.attempts_of([delivery.pk for delivery in page])
    return render(
        request,
        "dashboard/webhooks.html",
        {
            "project": project,
            "hooks": hooks,
            "form": form or WebhookForm(),
            "new_secret": new_secret,
            "deliveries": [{"delivery": delivery, "attempts": attempts[delivery.pk]} for delivery in page],
            "page": page,
            "waiting": WebhookDelivery.Status.PENDING,
            "sending": WebhookDelivery.Status.SENDING,
        },
        status=status,
    )


@login_required
@require_http_methods(["GET"])
def project_webhooks(request, project_id: int):
    return _page(request, _researcher_project(request.user, project_id))


@login_required
@require_POST
def webhook_create(request, project_id: int):
    """Register a hook and show its secret on the page this once."""
    project = _researcher_project(request.user, project_id)
    form = WebhookForm(request.POST)
    if not form.is_valid():
        return _page(request, project, status=400, form=form)
    try:
        hook = services.create_webhook(
            project=project,
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
            description=form.cleaned_data["description"],
            created_by=request.user,
        )
    except services.WebhookRequestError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _page(request, project, status=400, form=form)
    return _page(request, project, status=201, new_secret={"hook": hook, "secret": hook.secret, "created": True})


@login_required
@require_POST
def webhook_action(request, project_id: int, webhook_id: int, action: str):
    project = _researcher_project(request.user, project_id)
    hook = get_object_or_404(Webhook, pk=webhook_id, project=project)
    if action not in ACTIONS:
        messages.error(request, "No such action.")
        return redirect("project-webhooks", project_id=project.pk)
    if action in ("activate", "deactivate"):
        services.update_webhook(hook, is_active=action == "activate")
        messages.success(request, f"The webhook to {hook.url} is {'active' if hook.is_active else 'inactive'}.")
    elif action == "rotate-secret":
        hook = services.rotate_secret(hook)
        return _page(request, project, new_secret={"hook": hook, "secret": hook.secret, "created": False})
    elif action == "ping":
        if not hook.is_active:
            messages.error(request, "The webhook is inactive; make it active to send to it.")
        else:
            services.ping(hook, requested_by=request.user)
            messages.success(request, f"A test event is on its way to {hook.url}; its delivery is in the log below.")
    else:
        url = hook.url
        hook.delete()
        messages.success(request, f"The webhook to {url} was deleted with its deliveries.")
    return redirect("project-webhooks", project_id=project.pk)


@login_required
@require_POST
def delivery_send_again(request, project_id: int, delivery_id: int):
    project = _researcher_project(request.user, project_id)
    delivery = get_object_or_404(WebhookDelivery, pk=delivery_id, webhook__project=project)
    try:
        services.send_again(delivery, requested_by=request.user)
    except services.WebhookRequestError as exc:
        messages.error(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    else:
        messages.success(request, f"Delivery {delivery.pk} ({delivery.event}) is being sent again.")
    return redirect("project-webhooks", project_id=project.pk)
