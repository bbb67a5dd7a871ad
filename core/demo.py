"""Demo data for a fresh install: the loader, its registry of steps, and the first step (users for every role).

Loading is a list of steps run in order; each step must be idempotent so that running the loader twice
changes nothing. Apps add their own steps (the demo dataset, an annotation project, a proof competition) from a
`demo.py` module of their own, which `load_demo` discovers before running:

    from core.demo import register_demo_step

    @register_demo_step(order=50)
    def create_demo_annotation_project(context):
        researcher = context.users["researcher1"]
        dataset = context.datasets["demo"]
        ...
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils.module_loading import autodiscover_modules

from core import roles

DEMO_PASSWORD = "mathlabel-demo"
DEMO_USERS: tuple[tuple[str, str], ...] = (
    ("annotator1", roles.ANNOTATOR),
    ("annotator2", roles.ANNOTATOR),
    ("annotator3", roles.ANNOTATOR),
    ("adjudicator1", roles.ADJUDICATOR),
    ("researcher1", roles.RESEARCHER),
    ("researcher2", roles.RESEARCHER),
    ("admin1", roles.ADMIN),
)
# Two teams: researcher1 works in both, researcher2 only with the proofs, so the demo shows what a workspace keeps
# apart.
DEMO_WORKSPACES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("answers", "Answer checking", ("researcher1",)),
    ("proofs", "Olympiad proofs", ("researcher1", "researcher2")),
)


@dataclass(frozen=True)
class DemoLogin:
    username: str
    role: str
    password: str
    created: bool


@dataclass
class DemoContext:
    """What the steps share: where to report, and the users and datasets created by earlier steps."""

    stdout: TextIO
    users: dict = field(default_factory=dict)
    workspaces: dict = field(default_factory=dict)
    datasets: dict = field(default_factory=dict)
    logins: list[DemoLogin] = field(default_factory=list)

    def say(self, message: str) -> None:
        self.stdout.write(message + "\n")


DemoStepFunction = Callable[[DemoContext], None]


@dataclass(frozen=True)
class DemoStep:
    name: str
    run: DemoStepFunction
    order: int


DEMO_STEPS: list[DemoStep] = []


def register_demo_step(function: DemoStepFunction | None = None, *, order: int = 100):
    """Add a step to the demo loader; usable as `@register_demo_step` or `@register_demo_step(order=50)`.

    Steps run by ascending `order`, then in registration order. Registering the same function again
    (a module imported twice) replaces the earlier entry instead of running it twice.
    """

    def register(step_function: DemoStepFunction) -> DemoStepFunction:
        name = f"{step_function.__module__}.{step_function.__qualname__}"
        DEMO_STEPS[:] = [step for step in DEMO_STEPS if step.name != name]
        DEMO_STEPS.append(DemoStep(name=name, run=step_function, order=order))
        return step_function

    return register(function) if function is not None else register


@register_demo_step(order=10)
def create_demo_users(context: DemoContext) -> None:
    user_model = get_user_model()
    for username, role in DEMO_USERS:
        user = user_model.objects.filter(username=username).first()
        created = user is None
        if created:
            is_admin = role == roles.ADMIN
            user = user_model.objects.create_user(
                username=username,
                password=DEMO_PASSWORD,
                is_staff=is_admin,
                is_superuser=is_admin,
            )
            user.groups.add(Group.objects.get_or_create(name=role)[0])
        context.users[username] = user
        context.logins.append(DemoLogin(username=username, role=role, password=DEMO_PASSWORD, created=created))
    created_count = sum(login.created for login in context.logins)
    context.say(f"Demo users: {created_count} created, {len(context.logins) - created_count} already present.")


@register_demo_step(order=12)
def create_demo_workspaces(context: DemoContext) -> None:
    from .models import Workspace
    from .workspaces import add_member

    for key, name, members in DEMO_WORKSPACES:
        workspace, _ = Workspace.objects.get_or_create(name=name)
        context.workspaces[key] = workspace
        for username in members:
            add_member(workspace, context.users[username])
    context.say(
        "Demo workspaces: " + "; ".join(f"{name} ({', '.join(members)})" for _, name, members in DEMO_WORKSPACES) + "."
    )


def load_demo(stdout: TextIO | Any = None) -> list[DemoLogin]:
    """Run every registered demo step, print the demo logins and return them."""
    autodiscover_modules("demo")
    context = DemoContext(stdout=stdout or sys.stdout)
    for step in sorted(DEMO_STEPS, key=lambda step: step.order):
        with transaction.atomic():
            step.run(context)
    context.say("")
    context.say(f"Demo logins (password for every account: {DEMO_PASSWORD}):")
    for login in context.logins:
        context.say(f"  {login.username:<14} {login.role}")
    return context.logins
