"""Workspaces: the teams of a lab. Datasets (and everything made from them), imports and verifier configurations
belong to one; a researcher sees and changes only the workspaces they are a member of, admins all of them."""

from django.conf import settings
from django.db import models


class Workspace(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class WorkspaceMember(models.Model):
    """A researcher of a workspace: they see and change its datasets, projects, runs, exports and configurations."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="workspace_memberships")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace_id", "user_id"]
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_workspace")]

    def __str__(self):
        return f"{self.user} in {self.workspace}"
