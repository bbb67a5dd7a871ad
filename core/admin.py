"""The admin's user forms refuse a username that is the same identity as an existing one (core.identity); admins
make workspaces and choose their researchers."""

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User

from .accounts import username_in_use
from .identity import display_username
from .models import Workspace, WorkspaceMember


def _checked_username(form, username: str) -> str:
    username = display_username(username)
    existing = username_in_use(username, exclude_pk=form.instance.pk)
    if existing is not None:
        raise forms.ValidationError(f"{username} is the same name as the existing account {existing}.")
    return username


class IdentityCheckedCreationForm(AdminUserCreationForm):
    def clean_username(self):
        return _checked_username(self, self.cleaned_data["username"])


class IdentityCheckedChangeForm(UserChangeForm):
    def clean_username(self):
        return _checked_username(self, self.cleaned_data["username"])


admin.site.unregister(User)


@admin.register(User)
class IdentityCheckedUserAdmin(UserAdmin):
    add_form = IdentityCheckedCreationForm
    form = IdentityCheckedChangeForm


class WorkspaceMemberInline(admin.TabularInline):
    model = WorkspaceMember
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    """Admins make workspaces and choose their researchers; everything else in a workspace is made in the app."""

    list_display = ["name", "member_count", "created_at"]
    search_fields = ["name"]
    inlines = [WorkspaceMemberInline]
    readonly_fields = ["created_by", "created_at"]

    @admin.display(description="researchers")
    def member_count(self, workspace):
        return workspace.memberships.count()

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
