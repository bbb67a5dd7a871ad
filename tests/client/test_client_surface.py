"""Every public method of the client is exercised: called in the client's tests or in the README's walk-through
(which test_readme_walkthrough runs)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from mathlabel_client import Client

HERE = Path(__file__).resolve().parent
README = HERE.parents[1] / "client" / "README.md"


def public_methods() -> list[str]:
    client = Client("http://127.0.0.1:1", "unused")
    try:
        names = [f"Client.{name}" for name in ("login", "logout")]
        for group, resource in vars(client).items():
            if group.startswith("_") or not hasattr(resource, "_http"):
                continue
            for name, _function in inspect.getmembers(type(resource), inspect.isfunction):
                if not name.startswith("_"):
                    names.append(f"{group}.{name}")
        return names
    finally:
        client.close()


def test_every_public_method_is_called_by_a_test_or_the_walk_through():
    sources = "\n".join(path.read_text() for path in HERE.glob("test_*.py") if path.name != Path(__file__).name)
    sources += README.read_text()
    missing = []
    for method in public_methods():
        group, name = method.split(".")
        pattern = rf"\w\.{name}\(" if group == "Client" else rf"\.{group}\.{name}\("
        if not re.search(pattern, sources):
            missing.append(method)
    assert len(public_methods()) > 80
    assert not missing, f"never called: {', '.join(missing)}"


def test_the_readme_lists_every_method_of_every_group():
    table = README.read_text()
    for method in public_methods():
        group, name = method.split(".")
        if group == "Client":
            continue
        row = next((line for line in table.splitlines() if line.startswith(f"| `client.{group}`")), "")
        assert f"`{name}`" in row, f"the README's table does not list client.{group}.{name}"
