"""Geometry of the dashboard's small SVG charts, computed on the server. Pure module, no Django imports.

Templates draw the shapes; nothing here produces markup, so every label goes through template escaping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: str
    value: float
    title: str


@dataclass(frozen=True)
class Tick:
    position: float
    text: str


class _PlotGeometry:
    plot_left: float
    plot_top: float
    plot_width: float
    plot_height: float

    @property
    def plot_right(self) -> float:
        return self.plot_left + self.plot_width

    @property
    def plot_bottom(self) -> float:
        return self.plot_top + self.plot_height


@dataclass
class Chart(_PlotGeometry):
    width: int
    height: int
    plot_left: float
    plot_top: float
    plot_width: float
    plot_height: float
    bars: list[Bar] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    value_labels: list[Tick] = field(default_factory=list)


@dataclass
class Series:
    label: str
    color: str
    legend_y: float
    points: list[tuple[float, float, str]]  # x, y, tooltip

    @property
    def polyline(self) -> str:
        return " ".join(f"{x},{y}" for x, y, _ in self.points)


@dataclass
class LineChart(_PlotGeometry):
    width: int = 560
    height: int = 290
    plot_left: float = 64
    plot_top: float = 28
    plot_width: float = 380
    plot_height: float = 230
    series: list[Series] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)

    @property
    def legend_x(self) -> float:
        return self.plot_right + 24


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above the value (at least 1)."""
    if value <= 1:
        return 1
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10 * magnitude


def _format(value: float) -> str:
    return f"{value:g}"


def grouped_bars(
    rows: list[dict],
    *,
    category: str,
    series: tuple[str, ...],
    width: int = 720,
    height: int = 240,
    max_x_ticks: int = 10,
    max_bar_width: float = 28,
) -> Chart:
    """Vertical bars, one group per row (e.g. per day) and one bar per series within the group."""
    chart = Chart(width, height, plot_left=44, plot_top=12, plot_width=width - 56, plot_height=height - 48)
    top = nice_ceiling(max((row[name] for row in rows for name in series), default=0))
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        chart.y_ticks.append(Tick(chart.plot_bottom - fraction * chart.plot_height, _format(top * fraction)))
    if not rows:
        return chart
    group_width = chart.plot_width / len(rows)
    bar_width = max(1.0, min(max_bar_width, group_width * 0.8 / len(series)))
    label_every = max(1, math.ceil(len(rows) / max_x_ticks))
    for index, row in enumerate(rows):
        group_left = chart.plot_left + index * group_width + (group_width - bar_width * len(series)) / 2
        for offset, name in enumerate(series):
            bar_height = chart.plot_height * row[name] / top
            chart.bars.append(
                Bar(
                    x=round(group_left + offset * bar_width, 2),
                    y=round(chart.plot_bottom - bar_height, 2),
                    width=round(bar_width, 2),
                    height=round(bar_height, 2),
                    series=name,
                    value=row[name],
                    title=f"{row[category]}: {row[name]} {name}",
                )
            )
        if index % label_every == 0:
            chart.x_ticks.append(Tick(round(group_left + bar_width * len(series) / 2, 2), str(row[category])))
    return chart


def horizontal_bars(
    rows: list[dict], *, category: str, value: str, width: int = 720, row_height: int = 26, maximum: float = 1.0
) -> Chart:
    """One horizontal bar per row, for shares between 0 and `maximum`; rows with no value get no bar."""
    height = 28 + row_height * max(1, len(rows))
    chart = Chart(width, height, plot_left=90, plot_top=6, plot_width=width - 160, plot_height=row_height * len(rows))
    for fraction in (0, 0.5, 1):
        chart.x_ticks.append(Tick(round(chart.plot_left + fraction * chart.plot_width, 2), _format(maximum * fraction)))
    for index, row in enumerate(rows):
        y = chart.plot_top + index * row_height
        chart.y_ticks.append(Tick(round(y + row_height / 2, 2), str(row[category])))
        share = row[value]
        if share is None:
            chart.value_labels.append(Tick(round(y + row_height / 2, 2), "n/a"))
            continue
        bar_width = chart.plot_width * max(0.0, min(share, maximum)) / maximum
        chart.bars.append(
            Bar(
                x=chart.plot_left,
                y=round(y + row_height * 0.15, 2),
                width=round(bar_width, 2),
                height=round(row_height * 0.7, 2),
                series=value,
                value=share,
                title=f"{row[category]}: {share:.2f}",
            )
        )
        chart.value_labels.append(Tick(round(y + row_height / 2, 2), f"{share:.2f}"))
    return chart
