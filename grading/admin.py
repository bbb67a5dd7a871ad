from django.contrib import admin

from core import roles

from . import services
from .models import (
    AllowedJudgeHost,
    JudgeResponseCache,
    PromptTemplate,
    SelectionRecord,
    Verdict,
    VerificationRun,
    VerifierConfig,
)


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "contract", "created_by", "created_at")
    list_filter = ("contract",)
    search_fields = ("name",)
    readonly_fields = ("version", "created_by", "created_at")

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        return (*fields, "name") if obj is not None else fields

    def save_model(self, request, obj, form, change):
        """Edits go through the versioning rule: a version with verdicts is never changed in place."""
        saved = services.save_prompt_template_version(
            name=obj.name,
            contract=obj.contract,
            system_template=obj.system_template,
            user_template=obj.user_template,
            extraction_template=obj.extraction_template,
            created_by=request.user,
        )
        obj.pk, obj.version, obj.created_at, obj.created_by_id = (
            saved.pk,
            saved.version,
            saved.created_at,
            saved.created_by_id,
        )
        obj._state.adding = False


@admin.register(VerifierConfig)
class VerifierConfigAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "kind",
        "model",
        "base_url",
        "template",
        "cascade_judge",
        "concurrency_limit",
        "use_reference",
    )
    list_filter = ("kind", "use_reference")
    search_fields = ("name", "model")

    def get_changeform_initial_data(self, request):
        return {**services.judge_config_defaults(), **super().get_changeform_initial_data(request)}


@admin.register(AllowedJudgeHost)
class AllowedJudgeHostAdmin(admin.ModelAdmin):
    """The endpoints judges may call, and the key variables bound to each. Only admins change the list: an endpoint on
    it receives the keys bound to it."""

    list_display = ("host", "port", "scheme", "key_envs", "allow_private", "note", "created_by", "created_at")
    fields = ("scheme", "host", "port", "key_envs", "allow_private", "note", "created_by", "created_at")
    readonly_fields = ("created_by", "created_at")

    def has_add_permission(self, request):
        return roles.is_admin(request.user)

    def has_change_permission(self, request, obj=None):
        return roles.is_admin(request.user)

    def has_delete_permission(self, request, obj=None):
        return roles.is_admin(request.user)

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ("completion", "verifier", "status", "cache_hit", "failed", "cost", "updated_at")
    list_filter = ("verifier", "status", "cache_hit", "failed")
    list_select_related = ("verifier",)
    raw_id_fields = ("completion",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(JudgeResponseCache)
class JudgeResponseCacheAdmin(admin.ModelAdmin):
    list_display = ("key", "template_name", "template_version", "model", "status", "created_at")
    list_filter = ("template_name", "model", "status")
    search_fields = ("key",)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(VerificationRun)
class VerificationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "verifier", "dataset", "project", "status", "done", "total", "created_at"]
    list_filter = ["status", "verifier"]
    search_fields = ["verifier__name", "dataset__name", "project__name"]
    list_select_related = ["verifier", "dataset", "project"]
    readonly_fields = [
        "status",
        "total",
        "done",
        "counts",
        "error",
        "attempt",
        "run_token",
        "heartbeat_at",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    ]


@admin.register(SelectionRecord)
class SelectionRecordAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "dataset", "strategy", "picked", "created_at"]
    readonly_fields = [field.name for field in SelectionRecord._meta.fields]

    def has_change_permission(self, request, obj=None):
        return False
