from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation workflow"
