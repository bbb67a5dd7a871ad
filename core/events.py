"""A small event bus: an app says that something happened, and the apps that care hear it after the change commits.

The app where something happens (an import ends in verifybench, an item is adjudicated in annotation, a run ends in
grading, an export is ready in reports) declares the event's name once (`declare`) and calls `emit` where it happens.
Apps higher up subscribe from their `AppConfig.ready()` (`subscribe`), so a lower layer tells a higher one without
importing it. Subscribers run once the surrounding transaction has committed (at once outside one), so they never
hear of a change that was rolled back; a subscriber that fails is logged and keeps neither the emitter nor the other
subscribers from going on. An event emitted in a process that dies before its transaction's commit callbacks ran is
not heard: subscribers that need to outlive a crash record what they must do in their own rows (webhooks do).

Each event names the project and the dataset it concerns where it has them (and the workspace, where it has no
dataset to tell it: an import rejected before its dataset was made), so that a subscriber can tell who should hear
of it without knowing every kind of payload.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    name: str  # a declared name, "import.finished"
    data: dict[str, Any]  # JSON-ready: what happened, as the API would describe it
    project_id: int | None = None
    dataset_id: int | None = None
    workspace_id: int | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    occurred_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="milliseconds"))


Subscriber = Callable[[Event], None]

_DECLARED: dict[str, str] = {}
_SUBSCRIBERS: list[Subscriber] = []


def declare(name: str, description: str) -> str:
    """Make an event name known (with what it means, for people choosing what to hear); returns the name."""
    _DECLARED[name] = description
    return name


def declared() -> dict[str, str]:
    """Every declared event name with its description, in the order they were declared."""
    return dict(_DECLARED)


def subscribe(subscriber: Subscriber) -> None:
    """Hear every event from now on; subscribing the same function twice has no effect."""
    if subscriber not in _SUBSCRIBERS:
        _SUBSCRIBERS.append(subscriber)


def unsubscribe(subscriber: Subscriber) -> None:
    if subscriber in _SUBSCRIBERS:
        _SUBSCRIBERS.remove(subscriber)


def emit(
    name: str,
    data: dict[str, Any],
    *,
    project_id: int | None = None,
    dataset_id: int | None = None,
    workspace_id: int | None = None,
) -> Event:
    """Tell the subscribers that `name` happened, once the current transaction commits. Returns the event."""
    if name not in _DECLARED:
        raise ValueError(f"{name!r} is not a declared event; declare it with core.events.declare first")
    event = Event(name=name, data=data, project_id=project_id, dataset_id=dataset_id, workspace_id=workspace_id)
    transaction.on_commit(lambda: publish(event))
    return event


def publish(event: Event) -> None:
    """Hand an event to every subscriber now. A failing subscriber is logged; the others still hear the event."""
    for subscriber in list(_SUBSCRIBERS):
        try:
            subscriber(event)
        except Exception:
            logger.exception("event %s (%s): subscriber %r failed", event.name, event.id, subscriber)
