"""The webhooks pages of a project and of a workspace, for its researchers: register URLs for events, see every
delivery with its attempts, and send one again. Both scopes share one template and these views. Every action is a
POST form with a CSRF token that works without JavaScript; the rules live in webhooks.services."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import AnnotationProject
from core.models import Workspace
from webhooks import selectors, services
from webhooks.models import Webhook, WebhookDelivery

from . import access
from .views_workspace import _researcher_project

DELIVERIES_PER_PAGE = 25
ACTIONS = {"activate", "deactivate", "rotate-secret", "ping", "delete"}


class WebhookForm(forms.Form):
    url = forms.CharField(
        max_length=2000,
        label="URL",
        help_text="Where the deliveries are posted. Its scheme, host and port must be an allowed endpoint, the "
        "list LLM judges use too; an admin adds one (Admin → Allowed judge endpoints).",
    )
    events = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="What the URL hears.")
    description = forms.CharField(max_length=500, required=False, help_text="Optional: what listens there.")

    prefix = "hook"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = [(name, f"{name}: {text}") for name, text in services.hookable_events().items()]


@dataclass(frozen=True)
class Scope:
    """What a webhooks page is about, a project or a workspace (`kind`), and the names of its routes."""

    kind: str  # "project" or "workspace"
    owner: AnnotationProject | Workspace

    @property
    def project(self) -> AnnotationProject | None:
        return self.owner if isinstance(self.owner, AnnotationProject) else None

    @property
    def workspace(self) -> Workspace | None:
        return self.owner if isinstance(self.owner, Workspace) else None

    @property
    def pk(self) -> int:
        return self.owner.pk

    @property
    def urls(self) -> dict[str, str]:
        return {
            "page": f"{self.kind}-webhooks",
            "new": f"{self.kind}-webhook-new",
            "action": f"{self.kind}-webhook-action",
            "send_again": f"{self.kind}-webhook-send-again",
        }

    def hooks(self):
        if self.kind == "project":
            return selectors.project_webhooks(self.pk)
        return selectors.workspace_webhooks(self.pk)

    def deliveries(self):
        if self.kind == "project":
            return selectors.deliveries(project_id=self.pk)
        return selectors.deliveries(workspace_id=self.pk)

    def hook(self, webhook_id: int) -> Webhook:
        return get_object_or_404(Webhook, pk=webhook_id, **{self.kind: self.pk})

    def delivery(self, delivery_id: int) -> WebhookDelivery:
        return get_object_or_404(WebhookDelivery, pk=delivery_id, **{f"webhook__{self.kind}": self.pk})

    def back(self):
        return redirect(self.urls["page"], self.pk)


def _project_scope(request, project_id: int) -> Scope:
    return Scope("project", _researcher_project(request.user, project_id))


def _workspace_scope(request, workspace_id: int) -> Scope:
    return Scope("workspace", access.workspace(request, workspace_id))


def _page(request, scope: Scope, *, status: int = 200, form=None, new_secret=None):
    hooks = list(scope.hooks())
    page = Paginator(scope.deliveries(), DELIVERIES_PER_PAGE).get_page(request.GET.get("page"))
    attempts = selectors.attempts_of([delivery.pk for delivery in page])
    return render(
        request,
        "dashboard/webhooks.html",
        {
            "scope": scope,
            "project": scope.project,
            "workspace": scope.workspace,
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


def _create(request, scope: Scope):
    """Register a hook and show its secret on the page this once."""
    form = WebhookForm(request.POST)
    if not form.is_valid():
        return _page(request, scope, status=400, form=form)
    try:
        hook = services.create_webhook(
            project=scope.project,
            workspace=scope.workspace,
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
            description=form.cleaned_data["description"],
            created_by=request.user,
        )
    except services.WebhookRequestError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _page(request, scope, status=400, form=form)
    return _page(request, scope, status=201, new_secret={"hook": hook, "secret": hook.secret, "created": True})


def _act(request, scope: Scope, webhook_id: int, action: str):
    hook = scope.hook(webhook_id)
    if action not in ACTIONS:
        messages.error(request, "No such action.")
        return scope.back()
    if action in ("activate", "deactivate"):
        services.update_webhook(hook, is_active=action == "activate")
        messages.success(request, f"The webhook to {hook.url} is {'active' if hook.is_active else 'inactive'}.")
    elif action == "rotate-secret":
        hook = services.rotate_secret(hook)
        return _page(request, scope, new_secret={"hook": hook, "secret": hook.secret, "created": False})
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
    return scope.back()


def _send_again(request, scope: Scope, delivery_id: int):
    delivery = scope.delivery(delivery_id)
    try:
        services.send_again(delivery, requested_by=request.user)
    except services.WebhookRequestError as exc:
        messages.error(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    else:
        messages.success(request, f"Delivery {delivery.pk} ({delivery.event}) is being sent again.")
    return scope.back()


@login_required
@require_http_methods(["GET"])
def project_webhooks(request, project_id: int):
    return _page(request, _project_scope(request, project_id))


@login_required
@require_POST
def webhook_create(request, project_id: int):
    return _create(request, _project_scope(request, project_id))


@login_required
@require_POST
def webhook_action(request, project_id: int, webhook_id: int, action: str):
    return _act(request, _project_scope(request, project_id), webhook_id, action)


@login_required
@require_POST
def delivery_send_again(request, project_id: int, delivery_id: int):
    return _send_again(request, _project_scope(request, project_id), delivery_id)


@login_required
@require_http_methods(["GET"])
def workspace_webhooks(request, workspace_id: int):
    return _page(request, _workspace_scope(request, workspace_id))


@login_required
@require_POST
def workspace_webhook_create(request, workspace_id: int):
    return _create(request, _workspace_scope(request, workspace_id))


@login_required
@require_POST
def workspace_webhook_action(request, workspace_id: int, webhook_id: int, action: str):
    return _act(request, _workspace_scope(request, workspace_id), webhook_id, action)


@login_required
@require_POST
def workspace_delivery_send_again(request, workspace_id: int, delivery_id: int):
    return _send_again(request, _workspace_scope(request, workspace_id), delivery_id)
