from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from core import events

        from . import services, tasks  # noqa: F401  (tasks sets how attempts reach a worker)

        events.subscribe(services.record_deliveries)
