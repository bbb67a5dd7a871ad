"""The API's router: an id in a path is a number, so `/api/items/abc/` is a 404 from the URL resolver and never
reaches a query that would fail on it. A viewset whose ids are not numbers sets its own `lookup_value_regex`."""

from rest_framework.routers import SimpleRouter

# Nineteen digits hold any bigint; a longer run of digits is no id (and converting thousands of digits is refused).
NUMERIC_ID = r"[0-9]{1,19}"


class NumericIdRouter(SimpleRouter):
    def get_lookup_regex(self, viewset, lookup_prefix=""):
        if getattr(viewset, "lookup_value_regex", None) is None:
            lookup_field = getattr(viewset, "lookup_field", "pk")
            lookup_url_kwarg = getattr(viewset, "lookup_url_kwarg", None) or lookup_field
            return f"(?P<{lookup_prefix}{lookup_url_kwarg}>{NUMERIC_ID})"
        return super().get_lookup_regex(viewset, lookup_prefix)
