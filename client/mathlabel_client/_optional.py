"""The optional libraries, imported when a method needs them, with a clear word on what to install."""

from __future__ import annotations

import importlib
from typing import Any


def require(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"this needs {module}: pip install 'mathlabel-client[{extra}]' (or pip install {module})"
        ) from None


def pandas() -> Any:
    return require("pandas", "pandas")


def datasets() -> Any:
    return require("datasets", "datasets")
