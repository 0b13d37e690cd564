"""gpusched.plot: the allocation figure's averaging (worked out by hand) and PNG output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpusched as gs
from gpusched import plot

PNG = b"\x89PNG\r\n\x1a\n"

RUN_A = {"arrived_pct": [0.4, 0.6, 1.4, 2.0], "allocation_pct": [0.4, 0.6, 1.2, 1.8]}
RUN_B = {"arrived_pct": [0.0, 1.0, 2.0], "allocation_pct": [0.0, 1.0, 2.0]}


def test_curves_bucket_by_rounded_arrived_then_average_seeds() -> None:
    # RUN_A buckets (round half up): 0 -> [0.4], 1 -> [0.6, 1.2], 2 -> [1.8]; RUN_B: 0, 1, 2.
    (c,) = plot.allocation_curves({"FGD": [RUN_A, RUN_B]})
    assert c.policy == "FGD" and c.seeds == 2
    assert c.arrived_pct.tolist() == [0.0, 1.0, 2.0]
    np.testing.assert_allclose(c.mean, [(0.4 + 0.0) / 2, (0.9 + 1.0) / 2, (1.8 + 2.0) / 2])
    np.testing.assert_allclose(c.low, [0.0, 0.9, 1.8])
    np.testing.assert_allclose(c.high, [0.4, 1.0, 2.0])


def test_every_input_shape_gives_the_same_curves(tmp_path: Path) -> None:
    runs: list[dict[str, Any]] = [{"policy": "FGD", "seed": 42, **RUN_A}, {"policy": "FGD", "seed": 43, **RUN_B},
                                  {"policy": "BestFit", "seed": 42, **RUN_B}]
    path = tmp_path / "sim.json"
    path.write_text(json.dumps({"runs": runs}))
    shapes: list[Any] = [
        {"runs": runs},
        runs,
        {"FGD": [RUN_A, RUN_B], "BestFit": [RUN_B]},
        {"FGD": {"42": RUN_A, "43": RUN_B}, "BestFit": {"42": RUN_B}},
        {"FGD": [(RUN_A["arrived_pct"], RUN_A["allocation_pct"]), RUN_B], "BestFit": RUN_B},
        path,
        str(path),
    ]
    expected = plot.allocation_curves(shapes[0])
    for s in shapes[1:]:
        got = plot.allocation_curves(s)
        assert [c.policy for c in got] == [c.policy for c in expected]
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.mean, e.mean)


def test_allocation_figure_png(tmp_path: Path) -> None:
    arrived = np.linspace(0, 130, 200)
    data = {p: [{"arrived_pct": arrived, "allocation_pct": np.minimum(arrived, cap + s)} for s in (-0.2, 0.2)]
            for p, cap in (("FGD", 95.4), ("BestFit", 93.1), ("Random", 87.5))}
    out = tmp_path / "alloc.png"
    fig = plot.plot_allocation(data, out)
    assert out.read_bytes()[:8] == PNG
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0] == "all arrived allocated"
    assert labels[1:] == ["FGD (95.40%)", "BestFit (93.10%)", "Random (87.50%)"]  # best final allocation first


def test_ab_table_png_and_colours(tmp_path: Path) -> None:
    a = {"GPU allocation %": 90.0, "P99 latency ms": 40.0, "failed pods": 10.0, "throughput QPS": 495.971}
    b = {"GPU allocation %": 95.0, "P99 latency ms": 50.0, "failed pods": 10.0, "throughput QPS": 495.972}
    out = tmp_path / "ab.png"
    fig = plot.plot_ab_table(a, b, out, a_label="baseline", b_label="gpusched",
                             lower_is_better=["P99 latency ms", "failed pods"])
    assert out.read_bytes()[:8] == PNG
    table = fig.axes[0].tables[0]
    cells = table.get_celld()
    assert cells[1, 3].get_text().get_text() == "+5.6%"  # (95 - 90) / 90
    assert cells[2, 3].get_text().get_text() == "+25.0%"
    green, red, white = (0.851, 0.949, 0.851), (0.969, 0.831, 0.831), (1.0, 1.0, 1.0)
    # Row 4 differs only below the printed digits: equal as shown, so neither better nor worse.
    for row, colour in ((1, green), (2, red), (3, white), (4, white)):
        np.testing.assert_allclose(cells[row, 3].get_facecolor()[:3], colour, atol=0.005)


def test_bad_plot_input() -> None:
    with pytest.raises(gs.InvalidArgumentError, match="needs arrived_pct and allocation_pct"):
        plot.allocation_curves({"FGD": [{"arrived": [1.0]}]})
    with pytest.raises(gs.InvalidArgumentError, match="finite"):
        plot.allocation_curves({"FGD": [{"arrived_pct": [1.0, np.nan], "allocation_pct": [1.0, 1.0]}]})
    with pytest.raises(gs.InvalidArgumentError, match="equal length"):
        plot.allocation_curves({"FGD": [{"arrived_pct": [1.0, 2.0], "allocation_pct": [1.0]}]})
    with pytest.raises(gs.InvalidArgumentError, match="needs a 'policy'"):
        plot.allocation_curves([RUN_A])
    with pytest.raises(gs.InvalidArgumentError, match="lacks the metrics"):
        plot.plot_ab_table({"x": 1.0}, {"y": 1.0})
    with pytest.raises(gs.InvalidArgumentError, match="not in the table"):
        plot.plot_ab_table({"x": 1.0}, {"x": 1.0}, lower_is_better=["z"])
