from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.demo import load_demo


class Command(BaseCommand):
    help = "Load the demo data and the demo accounts (idempotent) and print the logins."

    def add_arguments(self, parser):
        parser.add_argument(
            "--force",
            action="store_true",
            help="Load even when DEBUG is off. The demo accounts share a published password.",
        )

    def handle(self, *args, force, **options):
        if not settings.DEBUG and not force:
            raise CommandError(
                "Refusing to create demo accounts with a published password while DEBUG is off; "
                "run with DEBUG=1 or pass --force."
            )
        load_demo(self.stdout)
