"""Chart geometry of the dashboard (pure)."""

from __future__ import annotations

import pytest

from frontend import charts


@pytest.mark.parametrize(
    ("value", "ceiling"), [(0, 1), (1, 1), (3, 5), (7, 10), (11, 20), (21, 25), (240, 250), (501, 1000)]
)
def test_nice_ceiling(value, ceiling):
    assert charts.nice_ceiling(value) == ceiling


def test_grouped_bars_scale_to_the_tallest_value_and_stay_in_the_plot():
    rows = [{"day": "2025-01-01", "labels": 10, "resolved": 4}, {"day": "2025-01-02", "labels": 3, "resolved": 0}]
    chart = charts.grouped_bars(rows, category="day", series=("labels", "resolved"))
    assert len(chart.bars) == 4
    tallest = max(chart.bars, key=lambda bar: bar.height)
    assert tallest.value == 10 and tallest.height == pytest.approx(chart.plot_height)
    assert [bar.height for bar in chart.bars if bar.value == 0] == [0]
    for bar in chart.bars:
        assert chart.plot_left <= bar.x and bar.x + bar.width <= chart.plot_right + 0.01
        assert bar.y + bar.height == pytest.approx(chart.plot_bottom)
    assert [tick.text for tick in chart.y_ticks] == ["0", "2.5", "5", "7.5", "10"]
    assert [tick.text for tick in chart.x_ticks] == ["2025-01-01", "2025-01-02"]


def test_grouped_bars_thin_out_day_labels():
    rows = [{"day": f"d{i}", "labels": i, "resolved": 0} for i in range(30)]
    chart = charts.grouped_bars(rows, category="day", series=("labels", "resolved"), max_x_ticks=10)
    assert len(chart.x_ticks) == 10


def test_horizontal_bars_leave_missing_values_without_a_bar():
    rows = [{"type": "A1", "share": 1.0}, {"type": "B3", "share": 0.5}, {"type": "C1", "share": None}]
    chart = charts.horizontal_bars(rows, category="type", value="share")
    assert [bar.width for bar in chart.bars] == [chart.plot_width, chart.plot_width / 2]
    assert [label.text for label in chart.value_labels] == ["1.00", "0.50", "n/a"]
    assert [tick.text for tick in chart.y_ticks] == ["A1", "B3", "C1"]
