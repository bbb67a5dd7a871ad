"""One identity per username, however it is spelled. Pure: no Django.

Two usernames are the same person when they are equal after Unicode compatibility normalization (NFKC, which folds
full-width and other look-alike forms) and case folding: `ａnnotator1`, `ANNOTATOR1` and `annotator1` are one
identity. New names that collide with an existing one are refused, and sign-in failures are counted per identity.
"""

from __future__ import annotations

import unicodedata


def canonical_username(name: str) -> str:
    """The identity a typed username stands for."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name or "").strip()).casefold()
    return unicodedata.normalize("NFKC", folded)


def display_username(name: str) -> str:
    """How a new username is stored: compatibility-normalized (NFKC) and stripped, case kept."""
    return unicodedata.normalize("NFKC", name or "").strip()
