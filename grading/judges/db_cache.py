"""The judge response cache in the database (model JudgeResponseCache), read and written through
`grading.verdict_writes`."""

from __future__ import annotations

from grading.verdict_writes import cache_judge_answers, cached_judge_answers

from .caching import CachedResponse


class DatabaseResponseCache:
    def get(self, key: str) -> CachedResponse | None:
        return cached_judge_answers([key]).get(key)

    def put(self, key: str, response: CachedResponse, *, template_name: str, template_version: int, model: str) -> None:
        cache_judge_answers(
            [(key, response)], template_name=template_name, template_version=template_version, model=model
        )
