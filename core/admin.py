"""The admin's user forms refuse a username that is the same identity as an existing one (core.identity)."""

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import User

from .accounts import username_in_use
from .identity import display_username


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
