from django.apps import AppConfig


class VerifybenchConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "verifybench"
    verbose_name = "Benchmark data"

    def ready(self):
        from . import subjects

        subjects.register()
