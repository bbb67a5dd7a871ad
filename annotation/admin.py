from django import forms
from django.contrib import admin
from django.db import transaction

from core import subjects

from . import services, setup
from .models import (
    AnnotationProject,
    GuidelinesVersion,
    Invitation,
    Item,
    ItemEvent,
    Label,
    ProjectChange,
    ProjectMember,
    Task,
)


class MemberInline(admin.TabularInline):
    model = ProjectMember
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "role", "is_active", "removed_at", "guidelines_seen_version"]
    readonly_fields = ["removed_at", "guidelines_seen_version"]


class AnnotationProjectForm(forms.ModelForm):
    kind = forms.ChoiceField()

    class Meta:
        model = AnnotationProject
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = [(kind.name, kind.title) for kind in subjects.all_kinds()]

    def clean_kind(self):
        kind = self.cleaned_data["kind"]
        if self.instance.pk is None and subjects.get(kind).subject_ids is None:
            raise forms.ValidationError(
                subjects.get(kind).extra.get(
                    "created_from", f"{subjects.get(kind).title} projects are not made from a dataset's rows."
                )
            )
        if self.instance.pk is not None and kind != self.instance.kind:
            raise forms.ValidationError("The kind of a project cannot change.")
        return kind


@admin.register(AnnotationProject)
class AnnotationProjectAdmin(admin.ModelAdmin):
    form = AnnotationProjectForm
    list_display = ["name", "dataset", "kind", "labels_per_item", "tiebreak_annotators", "is_active", "created_at"]
    list_filter = ["kind", "is_active", "dataset"]
    search_fields = ["name", "description", "dataset__name"]
    inlines = [MemberInline]
    readonly_fields = ["created_by", "created_at", "guidelines", "guidelines_version", "preparing"]
    # carried over to the items by the project settings page, which knows when they can change
    policy_fields = ["labels_per_item", "tiebreak_annotators"]
    # the final-label rule is chosen on the settings page or through the API, which check what it needs
    exclude = ["aggregation", "adaptive_redundancy", "confidence_target", "max_labels", "refit_every"]

    def get_readonly_fields(self, request, obj=None):
        if obj is not None:
            return [*self.readonly_fields, *self.policy_fields]
        return self.readonly_fields

    def save_model(self, request, obj, form, change):
        """A project added here gets every completion (or question) of its dataset as items, from a project-setup
        job, as one created through the API or the dashboard does. Changes to an existing project's settings go through the same
        service as the settings page, which records them."""
        if not change:
            obj.created_by = request.user
        with transaction.atomic():
            if change:
                settings = {
                    field: form.cleaned_data[field] for field in form.changed_data if field in services.SETTING_FIELDS
                }
                others = [field for field in form.changed_data if field not in services.SETTING_FIELDS]
                if others:
                    obj.save(update_fields=others)
                services.update_project(obj, actor=request.user, **settings)
                return
            obj.preparing = True
            super().save_model(request, obj, form, change)
            job = setup.queue_setup(obj, created_by=request.user)
            self.message_user(request, f"{obj.name} is preparing: setup job {job.pk} is creating its items.")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Workflow rows change only through the workflow, which keeps the history."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LabelInline(admin.TabularInline):
    model = Label
    extra = 0
    can_delete = False
    fields = ["annotator", "value", "unsuitable", "note", "is_tiebreak", "created_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


class EventInline(admin.TabularInline):
    model = ItemEvent
    extra = 0
    can_delete = False
    fields = ["created_at", "actor", "kind", "from_state", "to_state", "value", "rationale"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    list_display = ["id", "project", "state", "resolution", "label_count", "required_labels", "excluded", "is_gold"]
    list_filter = ["project", "state", "resolution", "excluded", "is_gold"]
    search_fields = ["=subject_id"]
    list_select_related = ["project"]
    inlines = [LabelInline, EventInline]


@admin.register(Task)
class TaskAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "annotator", "status", "is_tiebreak", "leased_at", "expires_at"]
    list_filter = ["status", "is_tiebreak", "item__project"]
    search_fields = ["annotator__username"]
    list_select_related = ["annotator", "item"]


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ["id", "item", "annotator", "value", "unsuitable", "is_tiebreak", "created_at"]
    list_filter = ["unsuitable", "is_tiebreak", "item__project"]
    search_fields = ["annotator__username", "note"]
    list_select_related = ["annotator", "item"]


@admin.register(ItemEvent)
class ItemEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "item", "actor", "kind", "from_state", "to_state"]
    list_filter = ["kind", "item__project"]
    search_fields = ["actor__username", "rationale"]
    list_select_related = ["actor", "item"]


@admin.register(ProjectChange)
class ProjectChangeAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "project", "actor", "kind", "summary"]
    list_filter = ["kind", "project"]
    search_fields = ["summary", "actor__username"]
    list_select_related = ["project", "actor"]


@admin.register(GuidelinesVersion)
class GuidelinesVersionAdmin(ReadOnlyAdmin):
    list_display = ["project", "version", "created_by", "created_at"]
    list_filter = ["project"]
    list_select_related = ["project", "created_by"]


@admin.register(Invitation)
class InvitationAdmin(ReadOnlyAdmin):
    """Links are made and revoked on the project's members page; the token itself is never stored."""

    list_display = ["project", "role", "account", "created_by", "created_at", "expires_at", "used_by", "revoked_at"]
    list_filter = ["role", "project"]
    exclude = ["token_hash"]
    list_select_related = ["project", "account", "created_by", "used_by"]
