"""Allow-list entries become endpoints (scheme, host, port) with the key variables bound to them.

An entry used to allow every port of a host and any key. Each old entry becomes one entry per endpoint that the
judge configurations stored then use on that host, bound to the key variables those configurations name; an entry
no configuration uses becomes https on port 443 with no key bound. Nothing that worked stops working, and nothing
else is allowed."""

import ipaddress
from urllib.parse import urlsplit

import django.core.validators
from django.db import migrations, models

DEFAULT_PORTS = {"http": 80, "https": 443}


def _ip(host):
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    return address.ipv4_mapped if getattr(address, "ipv4_mapped", None) else address


def _matches(pattern, host):
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    if _ip(pattern) is not None or _ip(host) is not None:
        return _ip(pattern) is not None and _ip(pattern) == _ip(host)
    return pattern == host


def split_entries(apps, schema_editor):
    Entry = apps.get_model("grading", "AllowedJudgeHost")
    VerifierConfig = apps.get_model("grading", "VerifierConfig")
    judges = []
    for base_url, key_env in VerifierConfig.objects.filter(kind="judge").values_list("base_url", "api_key_env"):
        try:
            parts = urlsplit(base_url)
            port = parts.port or DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            continue
        if parts.scheme in DEFAULT_PORTS and parts.hostname:
            judges.append((parts.scheme, parts.hostname.rstrip(".").lower(), port, key_env))
    for old in list(Entry.objects.filter(port__isnull=True)):
        endpoints = {}
        for scheme, host, port, key_env in judges:
            if _matches(old.host, host):
                endpoints.setdefault((scheme, port), set()).add(key_env)
        if not endpoints:
            endpoints = {("https", 443): set()}
        for (scheme, port), key_envs in sorted(endpoints.items()):
            Entry.objects.create(
                scheme=scheme,
                host=old.host,
                port=port,
                key_envs=sorted(key for key in key_envs if key),
                allow_private=old.allow_private,
                note=old.note,
                created_by_id=old.created_by_id,
            )
        old.delete()
    if schema_editor.connection.vendor == "postgresql":
        # the rows' deferred foreign-key checks run now, so the table can be altered in this same transaction
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [("grading", "0010_run_chunks_and_shared_judge_limits")]

    operations = [
        migrations.AlterField(model_name="allowedjudgehost", name="host", field=models.CharField(max_length=255)),
        migrations.AddField(
            model_name="allowedjudgehost",
            name="scheme",
            field=models.CharField(choices=[("https", "https"), ("http", "http")], default="https", max_length=5),
        ),
        migrations.AddField(
            model_name="allowedjudgehost",
            name="port",
            field=models.PositiveIntegerField(
                null=True,
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(65535),
                ],
            ),
        ),
        migrations.AddField(
            model_name="allowedjudgehost",
            name="key_envs",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Names of the environment variables whose keys may be sent to this endpoint (never the "
                "keys).",
            ),
        ),
        migrations.RunPython(split_entries, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="allowedjudgehost",
            name="port",
            field=models.PositiveIntegerField(
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(65535),
                ]
            ),
        ),
        migrations.AlterModelOptions(
            name="allowedjudgehost",
            options={"ordering": ["host", "port", "scheme"], "verbose_name": "allowed judge endpoint"},
        ),
        migrations.AddConstraint(
            model_name="allowedjudgehost",
            constraint=models.UniqueConstraint(
                fields=("scheme", "host", "port"), name="one_allow_list_entry_per_endpoint"
            ),
        ),
        migrations.AddConstraint(
            model_name="allowedjudgehost",
            constraint=models.CheckConstraint(
                condition=models.Q(("port__gte", 1), ("port__lte", 65535)), name="allowed_endpoint_port"
            ),
        ),
    ]
