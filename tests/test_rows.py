"""core.rows turns rows of fixed SQL into the instances the ORM would give, on either backend."""

from __future__ import annotations

from django.contrib.auth.models import Group, User
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
