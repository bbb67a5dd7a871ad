"""The API's JSON parser: DRF's, with a bounded nesting depth (JSON_MAX_DEPTH), so a body of `[[[[...]]]]` is a
400 that says why, never a RecursionError and a 500; a body must be a JSON object, and no text in it may hold a
character the database cannot store (NUL, or half of a surrogate pair)."""

from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings
from rest_framework.utils.json import strict_constant

from . import jsonlimits, text_checks


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        max_depth = settings.JSON_MAX_DEPTH
        try:
            text = codecs.getreader(encoding)(stream).read()
            parse_constant = strict_constant if api_settings.STRICT_JSON else None
            data = jsonlimits.loads(text, max_depth=max_depth, parse_constant=parse_constant)
        except ValueError as exc:  # malformed, nested too deeply (JSONTooDeep) or not in the declared encoding
            raise ParseError(f"JSON parse error - {exc}") from None
        if not isinstance(data, dict):
            raise ParseError(
                f"the body must be a JSON object, not {type(data).__name__ if data is not None else 'null'}"
            )
        where = text_checks.first_unstorable(data)
        if where is not None:
            raise ParseError(f"{where} holds a character that cannot be stored (a NUL or half of a surrogate pair)")
        return data
