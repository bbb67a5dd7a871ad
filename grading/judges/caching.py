"""The judge response cache: its key and the storage interface the client is given.

Pure: no Django imports. The database implementation lives in `grading.judges.db_cache`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class CachedResponse:
    raw_output: str
    extraction_output: str
    status: str
    extracted_answer: str
    reason: str
    prompt_tokens: int
    completion_tokens: int


class ResponseCache(Protocol):
    def get(self, key: str) -> CachedResponse | None: ...

    def put(
        self, key: str, response: CachedResponse, *, template_name: str, template_version: int, model: str
    ) -> None: ...


def judge_cache_key(
    *,
    template_name: str,
    template_version: int,
    model: str,
    base_url: str,
    messages: list[dict[str, str]],
    temperature: float,
    max_tokens: int | None,
) -> str:
    """sha256 over everything that determines a judge's reply at temperature 0."""
    payload = {
        "template": [template_name, template_version],
        "model": model,
        "base_url": base_url.rstrip("/"),
        "messages": messages,
        "temperature": float(temperature),
        "max_tokens": max_tokens,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
