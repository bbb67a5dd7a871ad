"""Serializers every app's API shares."""

from __future__ import annotations

from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from . import workspaces


class NoBodySerializer(serializers.Serializer):
    """The request of an action that takes no body (claim, skip, cancel).

    Giving such an action this serializer lets the browsable API offer a bare POST button for it, where it would
    otherwise look for a serializer the view does not have and fail.
    """


@extend_schema_field(OpenApiTypes.INT)
class WorkspaceField(serializers.PrimaryKeyRelatedField):
    """The workspace something new goes to: one the requesting researcher is a member of (any, for an admin). When
    omitted it is their only workspace; a researcher of several must choose."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", "The workspace (team) it belongs to; your only one when omitted.")
        super().__init__(**kwargs)

    def get_queryset(self):
        request = self.context.get("request")
        return workspaces.workspaces_for(getattr(request, "user", None))


def workspace_or_default(serializer: serializers.Serializer, attrs: dict, field: str = "workspace") -> dict:
    """Fill `attrs[field]` with the requester's only workspace when it was not given; refuse when there is no
    single one to choose."""
    if attrs.get(field) is None:
        request = serializer.context.get("request")
        chosen = workspaces.default_for(getattr(request, "user", None))
        if chosen is None:
            raise serializers.ValidationError(
                {field: "choose the workspace it belongs to (you are a member of several, or of none)"}
            )
        attrs[field] = chosen
    return attrs


class ScopedToWorkspaces:
    """A serializer whose related fields offer only what the requesting user's workspaces hold.

    `workspace_paths` maps a field name to the lookup from its model to the workspace (e.g. "dataset__workspace");
    a path ending in "?" also offers what no workspace holds (shared objects). The serializer needs the request in
    its context."""

    workspace_paths: dict[str, str] = {}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        request = self.context.get("request")  # type: ignore[attr-defined]
        user = getattr(request, "user", None)
        for name, path in self.workspace_paths.items():
            field = self.fields[name]  # type: ignore[attr-defined]
            related = getattr(field, "child_relation", field)
            if getattr(related, "queryset", None) is None:
                continue  # read-only here: nothing is chosen through it
            shared = path.endswith("?")
            path = path.rstrip("?")
            condition = workspaces.condition(user, path)
            if shared:
                condition |= Q(**{f"{path}__isnull": True})
            related.queryset = related.queryset.filter(condition)
