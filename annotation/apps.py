from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation workflow"

    def ready(self):
        from . import refit  # noqa: F401  (registers the annotator-model job kind)
