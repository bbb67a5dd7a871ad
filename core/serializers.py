"""Serializers every app's API shares."""

from __future__ import annotations

from rest_framework import serializers


class NoBodySerializer(serializers.Serializer):
    """The request of an action that takes no body (claim, skip, cancel).

    Giving such an action this serializer lets the browsable API offer a bare POST button for it, where it would
    otherwise look for a serializer the view does not have and fail.
    """
