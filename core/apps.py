from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Shared core"

    def ready(self):
        from . import tasks  # noqa: F401  (sets how queued jobs reach a worker)
