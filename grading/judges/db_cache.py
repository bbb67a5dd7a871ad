"""The judge response cache in the database (model JudgeResponseCache)."""

from __future__ import annotations

from grading.models import JudgeResponseCache

from .caching import CachedResponse


class DatabaseResponseCache:
    def get(self, key: str) -> CachedResponse | None:
        entry = JudgeResponseCache.objects.filter(key=key).first()
        if entry is None:
            return None
        return CachedResponse(
            raw_output=entry.raw_output,
            extraction_output=entry.extraction_output,
            status=entry.status,
            extracted_answer=entry.extracted_answer,
            reason=entry.reason,
            prompt_tokens=entry.prompt_tokens,
            completion_tokens=entry.completion_tokens,
        )

    def put(self, key: str, response: CachedResponse, *, template_name: str, template_version: int, model: str) -> None:
        JudgeResponseCache.objects.get_or_create(
            key=key,
            defaults={
                "template_name": template_name,
                "template_version": template_version,
                "model": model,
                "raw_output": response.raw_output,
                "extraction_output": response.extraction_output,
                "status": response.status,
                "extracted_answer": response.extracted_answer,
                "reason": response.reason,
                "prompt_tokens": response.prompt_tokens,
                "completion_tokens": response.completion_tokens,
            },
        )
