from django.apps import AppConfig


class GradingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grading"
    verbose_name = "Verifiers, judges and proof grading"

    def ready(self):
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            proof_subject,
        )

        proof_subject.register()
        from verifybench.services import register_file_importer

        from .proof_import import FORMAT_NAME, import_into_competition

        register_file_importer(FORMAT_NAME, import_into_competition)
