"""Fixtures for page and browser tests (browser tests: `@pytest.mark.browser`, live_server + transactional_db)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from core import roles

from .helpers import DEFAULT_PASSWORD, save_screenshot, skip_screenshot

DIST = Path(__file__).resolve().parents[2] / "frontend" / "static" / "dist"


@pytest.fixture(scope="session", autouse=True)
def _allow_orm_beside_playwright_loop():
    """Playwright's sync API keeps an event loop running in the test thread, where Django then refuses
    ORM calls (SynchronousOnlyOperation). The test thread never runs async code of its own."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(autouse=True)
def _role_groups_after_flush(request):
    """Transactional tests flush every table after each test, the role groups of the data migration included."""
    if request.node.get_closest_marker("browser") is None:
        return
    request.getfixturevalue("transactional_db")
    for name in roles.ALL_ROLES:
        Group.objects.get_or_create(name=name)


@pytest.fixture
def built_assets():
    missing = [
        name
        for name in ("app.js", "app.css", "api-docs.js", "api-docs.css", "redoc-offline.js", "katex/katex.min.css")
        if not (DIST / name).exists()
    ]
    if missing:
        pytest.fail(f"browser assets missing ({', '.join(missing)}): run `cd frontend && npm ci && npm run build`")
    return DIST


@pytest.fixture
def app_url(live_server):
    def url(name: str, *args) -> str:
        return live_server.url + reverse(name, args=args)

    return url


@pytest.fixture
def login(app_url, built_assets):
    """Log a user in through the real login form; returns the page, now on the home page."""

    def log_in(page, user, password: str = DEFAULT_PASSWORD):
        page.goto(app_url("login"))
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(app_url("home"))
        return page

    return log_in


@pytest.fixture
def screenshot(request):
    """screenshot(page, name): refresh docs/screenshots/<name>.png when pytest runs with --update-screenshots;
    otherwise do nothing, so a test run leaves the tracked images untouched."""
    if request.config.getoption("update_screenshots"):
        return save_screenshot
    return skip_screenshot
