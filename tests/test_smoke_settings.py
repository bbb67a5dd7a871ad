import pytest
from django.contrib.auth.models import Group

from core import roles


@pytest.mark.django_db
def test_role_groups_exist_after_migrations():
    assert set(Group.objects.values_list("name", flat=True)) >= set(roles.ALL_ROLES)
