"""Celery tasks of the benchmark data: computing the search documents of the texts imported or changed since."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="verifybench.index_search_documents")
def index_search_documents(limit: int | None = None) -> int:
    return services.index_search_documents(limit)
