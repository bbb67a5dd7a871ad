"""Signing in resists guessing: the token endpoint is throttled, wrong passwords lock a username out of every sign-in
form, tokens expire and can be revoked, every role's password passes Django's full validators, and outside DEBUG
cookies are secure and HSTS is on unless SECURE_COOKIES=0."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from core import roles
from tests.conftest import REPO_ROOT

PASSWORD = "pass-word-123"


@pytest.fixture
def person(make_user):
    return make_user(roles.ANNOTATOR, username="guessed")


def ask_token(client: APIClient, password: str, username: str = "guessed"):
    return client.post("/api/auth/token/", {"username": username, "password": password}, format="json")


def test_the_token_endpoint_is_throttled_per_address(person, settings):
    settings.API_TOKEN_THROTTLE_RATE = "3/min"
    settings.LOGIN_MAX_FAILURES = 100
    client = APIClient()
    answers = [ask_token(client, "wrong").status_code for _ in range(3)]
    assert answers == [400, 400, 400]
    throttled = ask_token(client, PASSWORD)
    assert throttled.status_code == 429 and int(throttled["Retry-After"]) > 0


def test_wrong_passwords_lock_the_token_endpoint_even_for_the_right_one(person, settings):
    settings.LOGIN_MAX_FAILURES = 3
    client = APIClient()
    assert [ask_token(client, "wrong").status_code for _ in range(3)] == [400, 400, 400]
    locked = ask_token(client, PASSWORD)
    assert locked.status_code == 429 and locked["Retry-After"] == str(settings.LOGIN_LOCKOUT_SECONDS)
    assert "Too many failed sign-in attempts" in locked.json()["detail"]
    assert ask_token(APIClient(), PASSWORD, username="GUESSED").status_code == 429  # case does not help


def test_a_success_before_the_limit_clears_the_count(person, settings):
    settings.LOGIN_MAX_FAILURES = 3
    client = APIClient()
    for _ in range(2):
        assert ask_token(client, "wrong").status_code == 400
    assert ask_token(client, PASSWORD).status_code == 200
    for _ in range(2):
        assert ask_token(client, "wrong").status_code == 400
    assert ask_token(client, PASSWORD).status_code == 200


@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_wrong_passwords_lock_the_login_forms(url, person, settings):
    settings.LOGIN_MAX_FAILURES = 3
    person.is_staff = True
    person.save()
    client = Client()
    for _ in range(3):
        response = client.post(url, {"username": "guessed", "password": "wrong"})
        assert response.status_code == 200  # the form again, with its error
    locked = client.post(url, {"username": "guessed", "password": PASSWORD})
    assert locked.status_code == 429 and locked["Retry-After"] == str(settings.LOGIN_LOCKOUT_SECONDS)
    assert b"Too many attempts" in locked.content
    assert "_auth_user_id" not in client.session


def test_many_usernames_from_one_address_lock_the_address(make_user, settings):
    settings.LOGIN_MAX_FAILURES = 2  # an address may fail five times as often
    make_user(roles.ANNOTATOR, username="spared")
    client = Client()
    for number in range(10):
        assert client.post("/login/", {"username": f"nobody{number}", "password": "x"}).status_code == 200
    assert client.post("/login/", {"username": "spared", "password": PASSWORD}).status_code == 429


def test_a_token_expires_and_a_new_one_is_issued(person, settings):
    settings.API_TOKEN_TTL_HOURS = 24
    answer = ask_token(APIClient(), PASSWORD).json()
    assert answer["expires"]
    token = Token.objects.get(key=answer["token"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/projects/").status_code == 200
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - timedelta(hours=25))
    expired = client.get("/api/projects/")
    assert expired.status_code in (401, 403) and "expired" in expired.json()["detail"]
    fresh = ask_token(APIClient(), PASSWORD).json()["token"]
    assert fresh != token.key
    client.credentials(HTTP_AUTHORIZATION=f"Token {fresh}")
    assert client.get("/api/projects/").status_code == 200


def test_a_user_revokes_their_own_token(person):
    key = ask_token(APIClient(), PASSWORD).json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.delete("/api/auth/token/").status_code == 204
    assert not Token.objects.filter(key=key).exists()
    assert client.get("/api/projects/").status_code in (401, 403)
    assert APIClient().delete("/api/auth/token/").status_code in (401, 403)


def test_an_admin_revokes_anyones_token(person, admin_role_user):
    key = ask_token(APIClient(), PASSWORD).json()["token"]
    admin_role_user.is_staff = admin_role_user.is_superuser = True
    admin_role_user.save()
    client = Client()
    client.force_login(admin_role_user)
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 200
    response = client.post(f"/admin/authtoken/tokenproxy/{person.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Token.objects.filter(key=key).exists()


@pytest.mark.parametrize("role", roles.ALL_ROLES)
@pytest.mark.parametrize("password", ["12345678", "password", "weakling-user", "short"])
@pytest.mark.django_db
def test_add_user_refuses_weak_passwords_for_every_role(role, password):
    with pytest.raises(CommandError):
        call_command(
            "add_user",
            "weakling-user",
            "--role",
            role,
            "--password-stdin",
            stdin=io.StringIO(password + "\n"),
            stdout=io.StringIO(),
        )


def _settings_outside_debug(**env) -> dict:
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; print(json.dumps("
        "[s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS]))"
    )
    environment = {key: value for key, value in os.environ.items() if key != "PYTEST_VERSION"}
    environment.update({"DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": "x" * 50, **env})
    output = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=environment, check=True, capture_output=True, text=True
    ).stdout
    secure, csrf, hsts = json.loads(output.strip().splitlines()[-1])
    return {"secure": secure, "csrf": csrf, "hsts": hsts}


def test_cookies_are_secure_and_hsts_is_on_outside_debug():
    assert _settings_outside_debug() == {"secure": True, "csrf": True, "hsts": 365 * 24 * 3600}
    assert _settings_outside_debug(SECURE_COOKIES="0") == {"secure": False, "csrf": False, "hsts": 0}
    assert _settings_outside_debug(DEBUG="1") == {"secure": False, "csrf": False, "hsts": 0}
