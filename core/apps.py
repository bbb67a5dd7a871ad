from django.apps import AppConfig


class CoreConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "core"
    verbose_name = "Shared core"

    def ready(self):
        # login_limits counts failed sign-ins; tasks sets how queued jobs reach a worker
        from . import accounts, login_limits, tasks  # noqa: F401

        accounts.connect()
