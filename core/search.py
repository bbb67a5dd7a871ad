"""Text search in a column, for filters over large tables.

On PostgreSQL a search is full text (English stemming, web-search syntax: words, "quoted phrases", -excluded):
`text_matches` parses the column's text as it reads it, and `document_matches` reads a stored tsvector computed
from it (the benchmark data keeps one per question and completion text, GIN-indexed), with the same results.
Elsewhere (SQLite in tests and development) every word must occur in the column, in any case.
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import BooleanField, F, Func, Q, Value

SEARCH_CONFIG = "english"
MAX_WORDS = 20


class FullTextMatch(Func):
    """`to_tsvector('english', column) @@ websearch_to_tsquery('english', query)`: the expression an index on
    `to_tsvector('english', column)` answers."""

    output_field = BooleanField()
    template = f"to_tsvector('{SEARCH_CONFIG}'::regconfig, %(expressions)s)"
    arg_joiner = f") @@ websearch_to_tsquery('{SEARCH_CONFIG}'::regconfig, "

    def __init__(self, column: str, query: str):
        super().__init__(F(column), Value(query))


def _bounded(query: str) -> str:
    return " ".join(query.split()[:MAX_WORDS])


def document_matches(column: str, query: str) -> Q:
    """A condition on a stored tsvector `column` (PostgreSQL only) that matches exactly the texts `text_matches`
    would match, had the document been computed from them with `to_tsvector('english', text)`."""
    return Q(**{column: SearchQuery(_bounded(query), config=SEARCH_CONFIG, search_type="websearch")})


def text_matches(column: str, query: str) -> Q:
    """A condition on `column` (a field name, lookups across relations allowed) that the search `query` matches."""
    query = _bounded(query)
    if connection.vendor == "postgresql":
        return Q(FullTextMatch(column, query))
    condition = Q()
    for word in query.split():
        condition &= Q(**{f"{column}__icontains": word.strip('"').lstrip("-")})
    return condition
