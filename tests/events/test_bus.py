"""core.events: subscribers hear an event only once its transaction commits, and one failing subscriber harms
nobody."""

from __future__ import annotations

import pytest
from django.db import transaction

from core import events

NAME = events.declare("test.happened", "Something a test made happen")


@pytest.mark.django_db(transaction=True)
def test_subscribers_hear_an_event_after_commit_and_never_one_rolled_back(heard):
    with transaction.atomic():
        events.emit(NAME, {"n": 1}, project_id=3)
        assert heard == []
    assert [(event.name, event.data, event.project_id) for event in heard] == [(NAME, {"n": 1}, 3)]

    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit(NAME, {"n": 2})
        raise RuntimeError("rolled back")
    assert len(heard) == 1

    events.emit(NAME, {"n": 3})  # outside a transaction: at once
    assert [event.data["n"] for event in heard] == [1, 3]
    assert heard[0].id != heard[1].id and heard[0].occurred_at <= heard[1].occurred_at


@pytest.mark.django_db(transaction=True)
def test_a_failing_subscriber_is_logged_and_the_others_still_hear(heard, caplog):
    def broken(event):
        raise ValueError("subscriber bug")

    events.subscribe(broken)
    try:
        with transaction.atomic():
            events.emit(NAME, {})
    finally:
        events.unsubscribe(broken)
    assert len(heard) == 1
    assert "subscriber" in caplog.text and "subscriber bug" in caplog.text


def test_an_undeclared_event_is_refused():
    with pytest.raises(ValueError, match="not a declared event"):
        events.emit("test.never-declared", {})
    assert events.declared()[NAME] == "Something a test made happen"
    for name in ("import.finished", "import.failed", "run.finished", "run.failed", "export.ready"):
        assert name in events.declared()
    assert {"project.completed", "item.adjudicated"} <= set(events.declared())
