"""Middleware of the whole site: the sign-in rate limit (core.login_limits) in front of the login forms, and a
database outage answered with 503 and Retry-After instead of a server error."""
from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.html import escape

from . import login_limits


def wants_json(request) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return request.path.startswith("/api/") or ("application/json" in accept and "text/html" not in accept)


def plain_page(status: int, title: str, message: str) -> HttpResponse:
    body = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title></head>"
            f"<body><h1>{escape(title)}</h1><p>{escape(message)}</p></body></html>")
    return HttpResponse(body, status=status, content_type="text/html; charset=utf-8")


def too_many_attempts(request, retry_after: int) -> HttpResponse:
    message = f"Too many failed sign-in attempts. Try again in {retry_after} seconds."
    if wants_json(request):
        response: HttpResponse = JsonResponse({"detail": message}, status=429)
    else:
        response = plain_page(429, "Too many attempts", message)
    response["Retry-After"] = str(retry_after)
    return response


class LoginRateLimitMiddleware:
    """Refuses a sign-in POST to the login page or the admin's while its username or address is locked out."""

    def __init__(self, get_response):
        self.get_response = get_response
        self._paths: frozenset[str] | None = None

    def paths(self) -> frozenset[str]:
        if self._paths is None:
            self._paths = frozenset({reverse("login"), reverse("admin:login")})
        return self._paths

    def __call__(self, request):
        if request.method == "POST" and request.path in self.paths():
            wait = login_limits.locked_for(request, request.POST.get("username"))
            if wait:
                return too_many_attempts(request, wait)
        return self.get_response(request)
