"""JSON with a bounded nesting depth: a document nested deeper than the limit is an error, never a RecursionError.

Used for request bodies (core.parsers) and for import lines, so a line or a body of `[[[[...]]]]` costs a clear
message instead of a crash. A document with no more opening brackets than the limit cannot be too deep and is
parsed as it is; otherwise its parsed value is walked without recursion.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_MAX_DEPTH = 100


class JSONTooDeep(ValueError):
    def __init__(self, max_depth: int):
        super().__init__(f"nested too deeply (more than {max_depth} levels of arrays and objects)")
        self.max_depth = max_depth


def depth_exceeds(value: Any, max_depth: int) -> bool:
    """True when arrays and objects in `value` are nested more than `max_depth` levels (a scalar is level 0)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children = current.values()
        elif isinstance(current, list):
            children = current  # type: ignore[assignment]
        else:
            continue
        depth += 1
        if depth > max_depth:
            return True
        stack.extend((child, depth) for child in children if isinstance(child, dict | list))
    return False


def check_depth(text: str | bytes, value: Any, max_depth: int) -> None:
    """Raise JSONTooDeep when `value`, parsed from `text`, is nested more than `max_depth` levels."""
    if isinstance(text, bytes):
        openings = text.count(b"[") + text.count(b"{")
    else:
        openings = text.count("[") + text.count("{")
    if openings > max_depth and depth_exceeds(value, max_depth):
        raise JSONTooDeep(max_depth)


def loads(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH, **kwargs: Any) -> Any:
    """json.loads that raises JSONTooDeep (a ValueError) for a document nested more than `max_depth` levels;
    malformed JSON raises json.JSONDecodeError as usual."""
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    check_depth(text, value, max_depth)
    return value
