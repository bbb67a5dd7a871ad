"""Timestamps as the pages show them: the server's local date and minute."""

from __future__ import annotations

from django.utils import timezone
from django.utils.dateparse import parse_datetime


def readable_time(iso: str) -> str:
    """An ISO 8601 timestamp as the server's local date and minute ("2026-05-04 14:03 UTC"); unparsable text as is."""
    moment = parse_datetime(iso) if isinstance(iso, str) else None
    if moment is None:
        return str(iso)
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_default_timezone())
    local = timezone.localtime(moment)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"
