"""What a researcher's pages may show: their workspaces and the datasets, projects, configurations and jobs of them
(every one for an admin). Each page reaches them through these, so a page of another workspace's object is a 404, as
if it did not exist."""

from __future__ import annotations

from django.db.models import Q
from django.http import Http404

from annotation import selectors as annotation_selectors
from annotation.models import AnnotationProject
from core import workspaces
from core.models import Workspace
from grading.models import VerifierConfig
from verifybench.models import Dataset


def datasets(user):
    return Dataset.objects.filter(workspaces.condition(user))


def projects(user):
    """The projects of the user's workspaces (as their researcher, not as a member)."""
    return AnnotationProject.objects.filter(workspaces.condition(user, "dataset__workspace"))


def verifiers(user):
    """The configurations a researcher may run: their workspaces' and the shared ones."""
    return VerifierConfig.objects.filter(workspaces.condition(user) | Q(workspace__isnull=True))


def dataset(request, dataset_id: int) -> Dataset:
    """A dataset of the user's workspaces; a 404 for anything else, for anyone (its existence is not disclosed)."""
    found = datasets(request.user).select_related("workspace").filter(pk=dataset_id).first()
    if found is None:
        raise Http404("No such dataset.")
    return found


def project(request, project_id: int) -> AnnotationProject:
    """A project the user researches (configures, exports, verifies); a 404 for anything else, for anyone."""
    found = AnnotationProject.objects.select_related("dataset").filter(pk=project_id).first()
    if found is None or not annotation_selectors.researches(found, request.user):
        raise Http404("No such project.")
    return found


def workspace(request, workspace_id: int) -> Workspace:
    """A workspace the user is a researcher of (any, for an admin); a 404 for anything else, for anyone."""
    found = workspaces.workspaces_for(request.user).filter(pk=workspace_id).first()
    if found is None:
        raise Http404("No such workspace.")
    return found
