from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Shared core"

    def ready(self):
        from . import login_limits, tasks  # noqa: F401  (counts failed sign-ins; sets how queued jobs reach a worker)
