from django.apps import AppConfig


class GradingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grading"
    verbose_name = "Verifiers, judges and proof grading"

    def ready(self):
        from verifybench.services import register_file_importer

        from . import checks, runs, subject_filters  # noqa: F401  (checks and runs register themselves on import)
        from .proofs import subject
        from .proofs.importing import FORMAT_NAME, import_into_competition

        subject.register()
        subject_filters.register()
        register_file_importer(FORMAT_NAME, import_into_competition)
