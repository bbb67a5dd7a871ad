"""Stable pseudonyms of annotators in exported files. Pure module, no Django imports.

An exported row names the people who labelled it as `annotator-` followed by the first 12 hex digits of
HMAC-SHA256(key, the user's id as decimal text). The key is the installation's (EXPORT_PSEUDONYM_KEY, else derived
from SECRET_KEY), so one person has the same pseudonym in every export of a lab's installation, and a pseudonym gives
away neither the database id nor the username: without the key it cannot be traced back to an account.
"""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "annotator-"
DIGITS = 12
SCHEME = (
    f"`{PREFIX}` followed by the first {DIGITS} hex digits of HMAC-SHA256 of the annotator's account id under "
    "a key kept by the installation"
)


def derived_key(secret: str) -> bytes:
    """A key for pseudonyms only, derived from a broader secret (never the secret itself)."""
    return hashlib.sha256(b"mathlabel export pseudonyms\x00" + secret.encode()).digest()


def pseudonym(key: bytes, user_id: int) -> str:
    return PREFIX + hmac.new(key, str(user_id).encode(), hashlib.sha256).hexdigest()[:DIGITS]
