import secrets
import sys

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core import roles
from core import workspaces as workspace_rules
from core.accounts import username_in_use
from core.identity import display_username
from core.models import Workspace


class Command(BaseCommand):
    help = (
        "Create a user in a role group. The password is read from stdin with --password-stdin, "
        "otherwise a random one is generated and printed once."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, help=f"One of: {', '.join(roles.ALL_ROLES)}.")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--workspace",
            action="append",
            default=[],
            dest="workspaces",
            help="a researcher's workspace (created if new; repeatable); the default workspace when none is named",
        )
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from the first line of stdin instead of generating one.",
        )

    def handle(self, *args, username, role, email, password_stdin, workspaces=(), **options):
        user_model = get_user_model()
        if role not in roles.ALL_ROLES:
            raise CommandError(f"Unknown role {role!r}; choose one of: {', '.join(roles.ALL_ROLES)}.")
        username = display_username(username)
        existing = username_in_use(username)
        if existing is not None:
            same = "already exists" if existing == username else f"is the same name as the existing user {existing!r}"
            raise CommandError(f"User {username!r} {same}; nothing was changed.")
        try:
            group = Group.objects.get(name=role)
        except Group.DoesNotExist:
            raise CommandError(f"The {role!r} group is missing; run `python manage.py migrate` first.") from None

        if password_stdin:
            stream = options.get("stdin") or sys.stdin
            password = stream.readline().rstrip("\r\n")
            if not password:
                raise CommandError("No password on stdin.")
        else:
            password = secrets.token_urlsafe(18)

        candidate = user_model(username=username, email=email)
        try:
            user_model.username_validator(username)
            validate_password(password, user=candidate)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None

        is_admin = role == roles.ADMIN
        with transaction.atomic():
            user = user_model.objects.create_user(
                username=username,
                email=email,
                password=password,
                is_staff=is_admin,
                is_superuser=is_admin,
            )
            user.groups.add(group)
            joined = []
            if role == roles.RESEARCHER:
                for name in workspaces or [workspace_rules.DEFAULT_NAME]:
                    workspace, _ = Workspace.objects.get_or_create(name=name.strip())
                    workspace_rules.add_member(workspace, user)
                    joined.append(workspace.name)

        self.stdout.write(self.style.SUCCESS(f"Created {role} {username!r}."))
        if joined:
            self.stdout.write(f"Member of the workspace(s): {', '.join(joined)}.")
        if not password_stdin:
            self.stdout.write(f"Password (shown only now): {password}")
