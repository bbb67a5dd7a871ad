from django.apps import AppConfig


class GradingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "grading"
    verbose_name = "Verifiers, judges and proof grading"

    def ready(self):
        from verifybench.services import register_file_importer

        from . import (  # noqa: F401  (checks and runs register themselves on import)
            checks,
            runs,
            subject_filters,
            verdict_imports,
            verdict_tallies,
        )
        from .proofs import subject
        from .proofs.importing import FORMAT_NAME, import_into_competition, looks_like_proofs

        subject.register()
        subject_filters.register()
        verdict_tallies.register()
        register_file_importer(FORMAT_NAME, import_into_competition, detect=looks_like_proofs)
        register_file_importer(
            verdict_imports.FORMAT_NAME, verdict_imports.import_verdicts, detect=verdict_imports.looks_like_verdicts
        )
