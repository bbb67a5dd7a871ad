"""Filters on many integer keys at once."""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Q

DENSE = 2  # a range is used when it spans at most this many keys per key asked for


def subject_keys(field: str, keys: Collection[int]) -> Q:
    """A filter on `field` that matches every key in `keys`: their range when they are dense (a chunk of consecutive
    ids, whose `IN` list of thousands of parameters costs more to build and parse than the rows it finds), the list
    otherwise. A range may match keys not asked for: callers keep only the rows of `keys`."""
    if not keys:
        return Q(pk__in=[])
    low, high = min(keys), max(keys)
    if high - low + 1 <= DENSE * len(keys):
        return Q(**{f"{field}__gte": low, f"{field}__lte": high})
    return Q(**{f"{field}__in": list(keys)})
