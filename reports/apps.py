from django.apps import AppConfig


class ReportsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "reports"
    verbose_name = "Exports and evaluation"

    def ready(self):
        from .exports import runner  # noqa: F401  (registers the export job kind)
