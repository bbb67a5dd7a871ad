import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def run_add_user(*args, stdin_text=None):
    out = io.StringIO()
    options = {"stdout": out}
    if stdin_text is not None:
        options["stdin"] = io.StringIO(stdin_text)
    call_command("add_user", *args, **options)
    return out.getvalue()


def test_password_from_stdin(db):
    output = run_add_user(
        "ann",
        "--role",
        "annotator",
        "--email",
        "ann@example.org",
        "--password-stdin",
        stdin_text="correct horse battery\n",
    )
    user = User.objects.get(username="ann")
    assert user.check_password("correct horse battery")
    assert user.email == "ann@example.org"
    assert list(user.groups.values_list("name", flat=True)) == ["annotator"]
    assert not user.is_staff and not user.is_superuser
    assert "correct horse battery" not in output


def test_generated_password_is_printed_once_and_works(db):
    output = run_add_user("res", "--role", "researcher")
    match = re.search(r"Password \(shown only now\): (\S+)", output)
    assert match
    password = match.group(1)
    assert len(password) >= 20
    assert output.count(password) == 1
    assert User.objects.get(username="res").check_password(password)


def test_admin_role_is_staff_and_superuser(db):
    run_add_user("boss", "--role", "admin", "--password-stdin", stdin_text="long-enough-password\n")
    user = User.objects.get(username="boss")
    assert user.is_staff and user.is_superuser
    assert user.groups.filter(name="admin").exists()


def test_existing_username_is_refused(db):
    User.objects.create_user("taken", password="x" * 12)
    with pytest.raises(CommandError, match="already exists"):
        run_add_user("taken", "--role", "annotator")
    assert User.objects.filter(username="taken").count() == 1


def test_unknown_role_is_refused(db):
    with pytest.raises(CommandError, match="Unknown role 'chief'.*annotator, adjudicator, researcher, admin"):
        run_add_user("someone", "--role", "chief")
    assert not User.objects.filter(username="someone").exists()


@pytest.mark.parametrize("stdin_text, message", [("\n", "No password"), ("short\n", "too short")])
def test_bad_stdin_password_is_refused(db, stdin_text, message):
    with pytest.raises(CommandError, match=message):
        run_add_user("weak", "--role", "annotator", "--password-stdin", stdin_text=stdin_text)
    assert not User.objects.filter(username="weak").exists()


def test_invalid_username_is_refused(db):
    with pytest.raises(CommandError, match="valid username"):
        run_add_user("bad name!", "--role", "annotator")


def test_command_line_exit_status_on_error(tmp_path):
    """A refused user is a non-zero exit with the reason on stderr, as seen from a shell."""
    result = subprocess.run(
        [sys.executable, "manage.py", "add_user", "nobody", "--role", "chief"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "VAR_DIR": str(tmp_path)},
        timeout=120,
    )
    assert result.returncode != 0
    assert "Unknown role 'chief'" in result.stderr
