"""Events heard by a subscriber of core.events for the duration of a test."""

from __future__ import annotations

import pytest

from core import events
from tests.annotation.conftest import _fast_password_hashing, corpus, make_project  # noqa: F401  (fixtures)
from tests.exports.conftest import export_root, three_annotators, verifybench_data  # noqa: F401  (fixtures)


@pytest.fixture
def heard():
    """Every event published while the test runs, in order."""
    caught: list[events.Event] = []
    events.subscribe(caught.append)
    yield caught
    events.unsubscribe(caught.append)
