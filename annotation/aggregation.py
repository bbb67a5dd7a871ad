"""The label path's hook into the annotator model: the final-label rule of a project, adaptive redundancy, and when
to refit.

`after_label` is called by services after every label (and label change) of a non-gold item, with the item's row
lock held: it reads the latest fitted parameters of the project (one indexed query), the item's verifier votes (one
query) and returns the item's next state with its posterior confidence (annotation.label_model.decide). A project
that aggregates by majority costs nothing here. The fit itself is a job (annotation.refit), never run in a request.
"""

from __future__ import annotations

from django.db import connection, transaction

from core import labels, subjects
from core.jobs import runner as jobs

from . import label_model, workflow
from .models import AnnotationProject, AnnotatorModelFit, Item, Label

ACTIVE = (AnnotatorModelFit.Status.QUEUED, AnnotatorModelFit.Status.RUNNING)


def latest_fit(project: AnnotationProject) -> AnnotatorModelFit | None:
    return (
        AnnotatorModelFit.objects.filter(project=project, status=AnnotatorModelFit.Status.SUCCEEDED)
        .exclude(parameters=None)
        .order_by("-id")
        .first()
    )


def latest_parameters(
    project: AnnotationProject,
) -> tuple[AnnotatorModelFit | None, label_model.FittedParameters | None]:
    fit = latest_fit(project)
    if fit is None:
        return None, None
    return fit, label_model.FittedParameters.from_json(fit.parameters)


def initial_required_labels(project: AnnotationProject) -> int:
    """Labels a new item asks for: one at a time under adaptive redundancy, the first round otherwise."""
    return 1 if project.adaptive_redundancy else project.labels_per_item


def after_label(
    item: Item, project: AnnotationProject, votes: list[labels.Vote], protocol: workflow.Outcome
) -> tuple[workflow.Outcome, float | None]:
    """The item's next state and confidence under the project's rule; `protocol` is what the fixed protocol says."""
    rule = project.aggregation_rule()
    if rule.aggregation != label_model.MODEL:
        return protocol, None
    fit, parameters = latest_parameters(project)
    tokens = [vote.token for vote in votes]
    if parameters is None or not parameters.covers(tokens):
        # no model yet (or a value first seen after the fit): the fixed protocol decides until the next refit
        _maybe_refit(project, fit)
        return protocol, None
    weak = subjects.votes_for(project.kind, [item.subject_id]).get(item.subject_id, [])
    posterior = parameters.posterior([(vote.annotator_id, vote.token) for vote in votes], weak)
    _maybe_refit(project, fit)
    return label_model.decide(rule, item.state, protocol, tokens, posterior)


def _maybe_refit(project: AnnotationProject, fit: AnnotatorModelFit | None) -> None:
    """Queue a refit once `refit_every` labels came in since the last fit, unless one is queued or running."""
    if project.refit_every <= 0:
        return
    since = fit.last_label_id if fit is not None else 0
    newer = Label.objects.filter(item__project=project, pk__gt=since).order_by("pk").values("pk")
    if not newer[project.refit_every - 1 : project.refit_every].exists():
        return
    if AnnotatorModelFit.objects.filter(project=project, status__in=ACTIVE).exists():
        return
    request_refit(project, actor=None)


_REFIT_LOCK_SPACE = 0x6D66  # first key of the advisory locks that serialise refit requests of a project


def _refit_lock(project_id: int) -> None:
    """Serialises "is a refit queued? if not, queue one" per project (PostgreSQL; SQLite has one writer). Nothing
    else is waited for while it is held, so it cannot close a cycle with the item and policy locks."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_REFIT_LOCK_SPACE, project_id % 2**31])


class RefitRefused(ValueError):
    """A refit that cannot be asked for; the message says why."""


def request_refit(project: AnnotationProject, *, actor) -> AnnotatorModelFit:
    """Queue a refit of the project's annotator model (after the surrounding transaction commits); a refit already
    queued or running is returned instead of a second one."""
    if project.judgement.numeric:
        raise RefitRefused("scores are aggregated by the fixed protocol; the annotator model is for categorical labels")
    with transaction.atomic():
        _refit_lock(project.pk)
        active = AnnotatorModelFit.objects.filter(project=project, status__in=ACTIVE).order_by("-id").first()
        if active is not None:
            return active
        fit = AnnotatorModelFit.objects.create(project=project, created_by=actor)
        jobs.enqueue(fit)
    return fit


def model_summary(project: AnnotationProject) -> dict:
    """The latest fit's per-annotator estimates ({} when there is none), keyed by annotator id as a string."""
    fit = latest_fit(project)
    return (fit.summary or {}) if fit is not None else {}
