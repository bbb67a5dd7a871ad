"""core.rows turns rows of fixed SQL into the instances the ORM would give, on either backend."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from core import roles, rows


def _user_and_token_row(key: str):
    sql = (
        f"SELECT {rows.columns(User, 'u')}, t.key FROM {User._meta.db_table} u "
        f"JOIN {Token._meta.db_table} t ON t.user_id = u.id WHERE t.key = %s"
    )
    return rows.fetch_one(sql, [key])


def test_fetch_one_gives_none_when_nothing_matches(db):
    assert _user_and_token_row("no-such-key") is None


def test_split_gives_the_instance_the_orm_gives_then_the_remaining_values(make_user):
    person = make_user(roles.ANNOTATOR, username="split-person")
    token = Token.objects.create(user=person)

    user, key = rows.split(_user_and_token_row(token.key), User)

    stored = User.objects.get(pk=person.pk)
    assert key == token.key
    assert isinstance(user, User) and not user._state.adding
    assert [getattr(user, f.attname) for f in User._meta.concrete_fields] == [
        getattr(stored, f.attname) for f in User._meta.concrete_fields
    ]
    assert user.date_joined.tzinfo is not None  # the field's converters ran (SQLite stores naive text)


def test_split_gives_consecutive_models_in_order(make_user):
    person = make_user(roles.ANNOTATOR, username="split-member")
    group = Group.objects.get(name=roles.ANNOTATOR)
    sql = (
        f"SELECT {rows.columns(User, 'u')}, {rows.columns(Group, 'g')} FROM {User._meta.db_table} u "
        f"JOIN auth_user_groups ug ON ug.user_id = u.id JOIN {Group._meta.db_table} g ON g.id = ug.group_id "
        "WHERE u.id = %s"
    )

    user, found_group = rows.split(rows.fetch_one(sql, [person.pk]), User, Group)

    assert (user.pk, user.username) == (person.pk, "split-member")
    assert (found_group.pk, found_group.name) == (group.pk, roles.ANNOTATOR)


def _prepared_here() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


@pytest.mark.postgres
def test_on_postgresql_a_fixed_statement_is_prepared_once_and_reused(make_user):
    person = make_user(roles.ANNOTATOR, username="prepared-person")
    token = Token.objects.create(user=person)

    for _ in range(3):
        user, _key = rows.split(_user_and_token_row(token.key), User)
        assert user.pk == person.pk
    with CaptureQueriesContext(connection) as logged:
        _user_and_token_row(token.key)

    prepared = [statement for statement in _prepared_here() if "authtoken_token" in statement]
    assert len(prepared) == 1 and "$1" in prepared[0]
    assert len(logged) == 1 and "authtoken_token" in logged[0]["sql"]  # still logged as Django's statements are


@pytest.mark.postgres
def test_with_prepared_statements_off_nothing_is_prepared(make_user, settings):
    settings.DATABASE_PREPARED_STATEMENTS = False
    person = make_user(roles.ANNOTATOR, username="unprepared-person")
    token = Token.objects.create(user=person)

    assert _user_and_token_row(token.key) is not None
    assert not [statement for statement in _prepared_here() if "authtoken_token" in statement]


@pytest.mark.postgres
def test_a_database_error_in_a_prepared_statement_is_django_s_error(db):
    with pytest.raises(DatabaseError), transaction.atomic():
        rows.fetch_one("SELECT 1 / (%s - 1)", [1])
