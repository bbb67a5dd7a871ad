from django.apps import AppConfig


class GradingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grading"
    verbose_name = "Verifiers, judges and proof grading"

    def ready(self):
        from . import export_builders  # noqa: F401  (registers the matharena-proofs export format)
