"""Text the database cannot store: NUL characters (PostgreSQL refuses them in text and JSON) and lone surrogates
(half of a UTF-16 pair, which no UTF-8 encoding holds). Pure: no Django."""

from __future__ import annotations

import re

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> bool:
    return _UNSTORABLE.search(text) is not None


def first_unstorable(value, path: str = "the body") -> str | None:
    """Where in a parsed JSON value (or a string) the first unstorable character is, as a readable path; None when
    there is none."""
    stack = [(path, value)]
    while stack:
        where, current = stack.pop()
        if isinstance(current, str):
            if unstorable(current):
                return where
        elif isinstance(current, dict):
            for key, item in current.items():
                if isinstance(key, str) and unstorable(key):
                    return f"a key of {where}"
                stack.append((f"{where}[{key!r}]" if where != "the body" else repr(key), item))
        elif isinstance(current, list):
            stack.extend((f"{where}[{index}]", item) for index, item in enumerate(current))
    return None
