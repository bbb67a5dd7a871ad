"""The error answers every API operation may give, added to the OpenAPI schema after it is generated, so a client
(and the schema fuzz test) knows them: 401 and 403 (not signed in, not allowed), 404 for an operation on an object,
409 for a write that conflicts with the object's state, 429 for the throttled sign-in, and 503 while the database
cannot be reached. Each is a JSON object that usually says why in `detail`."""

from __future__ import annotations

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "string", "description": "Why the request was refused."}},
    "additionalProperties": True,
}
DESCRIPTIONS = {
    "401": "Not signed in, or the token is unknown or expired.",
    "403": "Signed in without the right role or membership, or not signed in (session clients).",
    "404": "No such object, or not one the caller may see.",
    "409": "The object's state does not allow this now (a finished job, a claimed item, a used rubric).",
    "429": "Too many requests or failed sign-ins; see Retry-After.",
    "503": "The database cannot be reached just now; see Retry-After.",
}
WRITES = {"post", "put", "patch", "delete"}
PUBLIC = {("/api/auth/token/", "post")}


def _error_response(code: str) -> dict:
    return {
        "description": DESCRIPTIONS[code],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            codes = ["503"]
            if (path, method) in PUBLIC:
                codes.append("429")
            else:
                codes += ["401", "403"]
            if "{" in path:
                codes.append("404")
            if method in WRITES and (path, method) not in PUBLIC:
                codes.append("409")
            responses = operation.setdefault("responses", {})
            for code in codes:
                responses.setdefault(code, _error_response(code))
    return result
