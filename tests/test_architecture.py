"""The floor plan holds: no import cycle between modules, and every app says what it owns and what it may use.

The layer contract between apps and the purity contract of the pure modules are import-linter contracts
(pyproject.toml, run by `make test` as `lint-imports`)."""

from __future__ import annotations

import importlib

import grimp
import pytest

APPS = ("core", "verifybench", "annotation", "grading", "reports", "webhooks", "frontend")


def strongly_connected(graph) -> list[list[str]]:
    """Tarjan's algorithm, iterative: every group of modules that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_imports_itself_through_others():
    graph = grimp.build_graph(*APPS, "config", include_external_packages=False)
    assert strongly_connected(graph) == []


def test_cycle_finder_finds_cycles():
    class Graph:
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, module):
            return self.edges.get(module, set())

    assert strongly_connected(Graph()) == [["a", "b", "c"]]


@pytest.mark.parametrize("app", APPS)
def test_every_app_says_what_it_owns_and_what_it_may_use(app):
    doc = importlib.import_module(app).__doc__ or ""
    assert "May use:" in doc and len(doc.split()) > 15, f"{app}/__init__.py should say what it owns and may use"
