import hashlib

from django.conf import settings
from django.contrib.auth.hashers import is_password_usable
from django.db import migrations, models
from django.utils import timezone


def account_digest(*, password, is_active, is_staff, is_superuser, group_ids, permission_ids, memberships) -> str:
    """As annotation.services.members.account_digest computes it today (a migration keeps its own copy)."""
    parts = [
        password,
        f"{int(is_active)}{int(is_staff)}{int(is_superuser)}",
        ",".join(map(str, sorted(group_ids))),
        ",".join(map(str, sorted(permission_ids))),
        ",".join(f"{project}:{role}" for project, role in sorted(memberships)),
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def bind_open_account_links(apps, schema_editor):
    """Open links made before accounts were fingerprinted: those whose account still holds no password and only
    the link's role get the account's digest; every other one is revoked."""
    Invitation = apps.get_model("annotation", "Invitation")
    ProjectMember = apps.get_model("annotation", "ProjectMember")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    now = timezone.now()
    for invitation in Invitation.objects.filter(account__isnull=False, used_at=None, revoked_at=None):
        account = User.objects.get(pk=invitation.account_id)
        groups = list(account.groups.values_list("id", "name"))
        untouched = (
            not is_password_usable(account.password)
            and not account.is_staff
            and not account.is_superuser
            and {name for _, name in groups} <= {invitation.role}
        )
        if not untouched:
            invitation.revoked_at = now
            invitation.save(update_fields=["revoked_at"])
            continue
        invitation.account_state = account_digest(
            password=account.password,
            is_active=account.is_active,
            is_staff=account.is_staff,
            is_superuser=account.is_superuser,
            group_ids=[group_id for group_id, _ in groups],
            permission_ids=list(account.user_permissions.values_list("id", flat=True)),
            memberships=list(
                ProjectMember.objects.filter(user_id=account.pk, is_active=True).values_list("project_id", "role")
            ),
        )
        invitation.save(update_fields=["account_state"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0012_group_tallies"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="invitation",
            name="account_state",
            field=models.CharField(
                blank=True,
                default="",
                help_text="For a link bound to an account: a digest of the account as it was when the link was made "
                "(its password, flags, groups, permissions and memberships). Any change to the account kills the link.",
                max_length=64,
            ),
        ),
        migrations.AddIndex(
            model_name="invitation",
            index=models.Index(
                condition=models.Q(("revoked_at", None), ("used_at", None)),
                fields=["account"],
                name="open_account_links",
            ),
        ),
        migrations.RunPython(bind_open_account_links, migrations.RunPython.noop),
    ]
