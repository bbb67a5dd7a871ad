"""The interval printed after a figure of the meta-evaluation: `{{ row.ci.accuracy|interval }}`."""

from django import template
from django.utils.html import format_html

register = template.Library()


@register.filter
def interval(ci) -> str:
    """` [low, high]` (three decimals) in a muted span, or nothing when there is no interval."""
    if not ci or ci.get("low") is None or ci.get("high") is None:
        return ""
    return format_html(
        ' <span class="ci" data-field="interval" title="95% interval, questions resampled">[{}, {}]</span>',
        f"{ci['low']:.3f}",
        f"{ci['high']:.3f}",
    )


@register.filter
def points(value) -> str:
    """A difference of two shares in points with its sign, e.g. +4.1; "n/a" when undefined."""
    if value is None:
        return "n/a"
    return f"{100 * value:+.1f}"


@register.filter
def points_interval(ci) -> str:
    """` [low, high]` of a difference, in points with their signs, or nothing when there is no interval."""
    if not ci or ci.get("low") is None or ci.get("high") is None:
        return ""
    return format_html(
        ' <span class="ci" data-field="interval" title="95% interval, questions resampled">[{}, {}]</span>',
        points(ci["low"]),
        points(ci["high"]),
    )
