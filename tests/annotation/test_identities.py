"""One identity per username: look-alike spellings share a sign-in lockout and cannot be created beside the
original; a new password ends the API tokens issued under the old one; the lockout is counted in a store that every
web process shares."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation import services
from core import roles
from core.accounts import username_refusal
from core.identity import canonical_username
from tests.conftest import REPO_ROOT, database_url_for_current_test_db

PASSWORD = "pass-word-123"
LOOK_ALIKES = ["ａnnotator1", "ANNOTATOR1", "Annotator1", "annotator1 ", "ａｎｎｏｔａｔｏｒ１"]


@pytest.fixture
def annotator1(make_user):
    return make_user(roles.ANNOTATOR, username="annotator1")


@pytest.mark.parametrize("spelling", LOOK_ALIKES)
def test_look_alike_spellings_are_one_identity(spelling):
    assert canonical_username(spelling) == canonical_username("annotator1") == "annotator1"
    assert canonical_username("Straße") == canonical_username("STRASSE")


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/login/", "/admin/login/", "/api/auth/token/"])
def test_a_look_alike_name_neither_escapes_nor_clears_the_lockout(url, annotator1, settings):
    settings.LOGIN_MAX_FAILURES = 3
    annotator1.is_staff = True
    annotator1.save()
    client = APIClient() if url.startswith("/api/") else Client()

    def sign_in(username, password):
        return client.post(url, {"username": username, "password": password})

    for spelling in LOOK_ALIKES[:3]:  # failures under three spellings count against one identity
        assert sign_in(spelling, "wrong").status_code in (200, 400)
    for spelling in ["annotator1", *LOOK_ALIKES]:
        locked = sign_in(spelling, PASSWORD)  # the right password, under any spelling, is refused while locked
        assert locked.status_code == 429, spelling
    assert "_auth_user_id" not in getattr(client, "session", {})


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", LOOK_ALIKES[:4])
def test_a_look_alike_of_an_existing_name_cannot_be_created(annotator1, make_project, researcher, spelling):
    assert "taken" in username_refusal(spelling)
    project, _, _ = make_project(annotators=0)
    with pytest.raises(services.InvalidSubmission, match="taken"):
        services.create_account(project, username=spelling, actor=researcher)
    _, token = services.create_invitation(project, actor=researcher)
    with pytest.raises(services.InvalidSubmission, match="taken"):
        services.sign_up_with_invitation(token, username=spelling, password="a-long-passphrase-1")
    with pytest.raises(CommandError, match="same name|already exists"):
        call_command("add_user", spelling, "--role", "annotator")
    assert User.objects.count() == 2  # annotator1 and the researcher


@pytest.mark.django_db
def test_a_new_name_is_stored_in_its_compatibility_form(make_project, researcher):
    project, _, _ = make_project(annotators=0)
    user, _, _ = services.create_account(project, username="ｃarol", actor=researcher)
    assert user.username == "carol"


@pytest.mark.django_db
def test_a_new_password_ends_the_tokens_issued_under_the_old_one(annotator1):
    client = APIClient()
    key = client.post("/api/auth/token/", {"username": "annotator1", "password": PASSWORD}).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/projects/").status_code == 200
    annotator1.last_login = None
    annotator1.save(update_fields=["last_login"])  # a save that keeps the password keeps the token
    assert client.get("/api/projects/").status_code == 200
    annotator1.set_password("a-new-long-passphrase")
    annotator1.save()
    assert not Token.objects.filter(user=annotator1).exists()
    assert client.get("/api/projects/").status_code in (401, 403)


COUNT_FAILURES = """
import django, sys
django.setup()
from django.test import RequestFactory
from core import login_limits
request = RequestFactory().post("/login/", REMOTE_ADDR="10.0.0.%s" % sys.argv[1])
for _ in range(int(sys.argv[2])):
    login_limits.record_failure(request, sys.argv[3])
print(login_limits.locked_for(request, "annotator1"))
"""


@pytest.mark.django_db(transaction=True)
def test_without_a_redis_cache_every_process_shares_one_lockout(settings):
    """Two processes, as two web workers would be, each count failures in the default cache of a deployment
    without CACHE_URL (the database): together they reach the limit that neither reaches alone."""
    env = {
        key: value for key, value in os.environ.items() if key not in ("PYTEST_VERSION", "CACHE_URL")
    }  # outside the tests' own cache setting
    env.update(
        DATABASE_URL=database_url_for_current_test_db() if settings.IS_POSTGRES else os.environ.get("DATABASE_URL", ""),
        SECRET_KEY="shared-lockout",
        LOGIN_MAX_FAILURES="6",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    if not settings.IS_POSTGRES:
        pytest.skip("the SQLite test database lives in this process's memory")
    first = subprocess.run(
        [sys.executable, "-c", COUNT_FAILURES, "1", "3", "annotator1"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    second = subprocess.run(
        [sys.executable, "-c", COUNT_FAILURES, "2", "3", "ＡＮＮＯＴＡＴＯＲ１"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert first.stdout.split()[-1] == "0"
    assert int(second.stdout.split()[-1]) > 0, second.stderr


@pytest.mark.django_db
def test_the_admin_refuses_a_look_alike_username(annotator1, admin_role_user):
    admin_role_user.is_staff = admin_role_user.is_superuser = True
    admin_role_user.save()
    client = Client()
    client.force_login(admin_role_user)
    response = client.post(
        "/admin/auth/user/add/",
        {
            "username": "ＡＮＮＯＴＡＴＯＲ１",
            "password1": "a-long-passphrase-9",
            "password2": "a-long-passphrase-9",
            "usable_password": "true",
        },
    )
    assert response.status_code == 200 and "same name as the existing account annotator1" in response.content.decode()
    assert User.objects.filter(username__iexact="annotator1").count() == 1
