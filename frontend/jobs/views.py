"""The pages every background job shares: the list of jobs, one job's page, and its actions (cancel, resume,
restart), whatever its kind. Every action is a plain POST form with CSRF that works without JavaScript."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from core import roles
from core.jobs import runner
from core.jobs.api import act
from core.jobs.selectors import recent_jobs

from .presenters import detail_context, job_row

JOBS_SHOWN = 200
DONE_MESSAGES = {
    "resume": "{noun} {id} resumed (attempt {attempt}).",
    "restart": "{noun} {id} restarted (attempt {attempt}).",
}


def require_researcher(user) -> None:
    if not roles.is_researcher(user):
        raise Http404("No such page.")


def redirect_back(request, fallback: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect(fallback)


def _job(kind_name: str, job_id: int, user=None):
    try:
        kind = runner.get_kind(kind_name)
    except runner.JobRequestError:
        raise Http404("No such job.") from None
    jobs = runner.visible_jobs(kind, user) if user is not None else kind.model.objects.all()
    job = jobs.filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job.")
    return job


@login_required
@require_GET
def jobs_page(request):
    require_researcher(request.user)
    wanted_kind, wanted_status = request.GET.get("kind", ""), request.GET.get("status", "")
    jobs = recent_jobs(JOBS_SHOWN, wanted_kind, wanted_status, user=request.user)
    return render(
        request,
        "jobs/jobs.html",
        {
            "rows": [job_row(job) for job in jobs],
            "kinds": runner.kinds(),
            "wanted_kind": wanted_kind,
            "wanted_status": wanted_status,
            "statuses": [status for status, _ in runner.kinds()[0].model.Status.choices] if runner.kinds() else [],
            "back_url": request.get_full_path(),
        },
    )


@login_required
@require_GET
def job_detail(request, kind: str, job_id: int):
    require_researcher(request.user)
    job = _job(kind, job_id, request.user)
    row = job_row(job)
    return render(
        request,
        "jobs/job_detail.html",
        {"row": row, "rows": [row], "back_url": request.get_full_path(), **detail_context(job)},
    )


@login_required
@require_POST
def job_action(request, kind: str, job_id: int, action: str):
    require_researcher(request.user)
    if action not in ("cancel", "resume", "restart"):
        raise Http404("No such action.")
    job = _job(kind, job_id, request.user)
    row = job_row(job)
    noun = row["noun"].capitalize()
    try:
        job = act(job, action, {"force": request.POST.get("force") == "1"})
    except runner.JobRequestError as exc:
        messages.error(request, f"Cannot {action}: {exc}.")
    else:
        if action == "cancel":
            if job.status == job.Status.CANCELLED:
                messages.success(request, f"{noun} {job.pk} cancelled.")
            else:
                messages.success(request, f"{noun} {job.pk} will stop after the chunk it is working on.")
        else:
            messages.success(request, DONE_MESSAGES[action].format(noun=noun, id=job.pk, attempt=job.attempt))
    return redirect_back(request, row["home_url"])
