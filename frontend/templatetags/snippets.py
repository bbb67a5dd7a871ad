"""Template filters for previews of untrusted text."""

from django import template
from django.utils.safestring import SafeString

from frontend.rendering import render_snippet

register = template.Library()


@register.filter
def math_snippet(text: object, limit: int = 120) -> SafeString | str:
    """`{{ question.text|math_snippet:140 }}`: a sanitized one-line preview with its formulas typeset."""
    if not text:
        return ""
    return render_snippet(str(text), int(limit))
