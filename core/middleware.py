"""Middleware of the whole site: the sign-in rate limit (core.login_limits) in front of the login forms, and a
database outage answered with 503 and Retry-After instead of a server error (with `server_error`, the 500 handler,
for what fails outside a view)."""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.html import escape

from . import login_limits, text_checks

logger = logging.getLogger(__name__)
DATABASE_ERRORS = (OperationalError, InterfaceError)


def wants_json(request) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return request.path.startswith("/api/") or ("application/json" in accept and "text/html" not in accept)


def plain_page(status: int, title: str, message: str) -> HttpResponse:
    body = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title></head>'
        f"<body><h1>{escape(title)}</h1><p>{escape(message)}</p></body></html>"
    )
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


def database_unavailable(request) -> HttpResponse:
    """503 with Retry-After, as JSON for the API and a client asking for JSON, as a page otherwise."""
    message = "The database cannot be reached just now. Please try again shortly."
    if wants_json(request):
        response: HttpResponse = JsonResponse({"detail": message}, status=503)
    else:
        response = plain_page(503, "Temporarily unavailable", message)
    response["Retry-After"] = str(settings.DATABASE_RETRY_AFTER_SECONDS)
    return response


class DatabaseOutageMiddleware:
    """A view that fails because the database is down or restarting answers 503 with Retry-After: the honest answer
    to a client that should come back, where a 500 would say the request itself is at fault."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DATABASE_ERRORS):
            logger.warning("database unavailable: %s %s: %s", request.method, request.path, exception)
            return database_unavailable(request)
        return None


def server_error(request, *args, **kwargs):
    """The site's 500 handler. A database error raised outside a view (a session saved on the way out, a middleware
    reading the user) is still a 503; any other error is the plain 500 page."""
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_ERRORS):
        return database_unavailable(request)
    from django.views.defaults import server_error as default_server_error

    return default_server_error(request, *args, **kwargs)


def bad_request(request, message: str) -> HttpResponse:
    if wants_json(request):
        return JsonResponse({"detail": message}, status=400)
    return plain_page(400, "Bad request", message)


class UnstorableQueryMiddleware:
    """A query string holding a character the database cannot store (a NUL) is refused with 400 before any view
    reads it, whatever the view does with its parameters."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "%00" in request.META.get("QUERY_STRING", "") or "\x00" in request.META.get("QUERY_STRING", ""):
            for key, values in request.GET.lists():
                if text_checks.unstorable(key) or any(text_checks.unstorable(value) for value in values):
                    return bad_request(
                        request, f"the query parameter {key!r} holds a character that cannot be stored (a NUL)"
                    )
        return self.get_response(request)


# Headers an error keeps when its body is turned into JSON.
_KEPT_HEADERS = ("Retry-After", "WWW-Authenticate", "Allow", "Location", "Vary")


class ApiErrorsAsJsonMiddleware:
    """Every error under /api/ is JSON, whatever `?format=` or the Accept header asked for and whoever answered (a
    view's CSV renderer, Django's 404 page for a path that matches no route): a client of the API always gets the
    shape it parses."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not request.path.startswith("/api/")
            or response.get("Content-Type", "").startswith("application/json")
            or getattr(response, "streaming", False)
        ):
            return response
        data = getattr(response, "data", None)
        if not isinstance(data, dict):
            data = {"detail": data if isinstance(data, (list, str)) else response.reason_phrase}
        converted = JsonResponse(data, status=response.status_code, safe=True)
        for header in _KEPT_HEADERS:
            if header in response:
                converted[header] = response[header]
        return converted
