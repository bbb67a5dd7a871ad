from django.apps import AppConfig


class VerifybenchConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "verifybench"
    verbose_name = "Benchmark data"

    def ready(self):
        from . import imports, subjects  # noqa: F401  (imports registers its job kind)

        subjects.register()
