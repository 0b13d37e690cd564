"""gpusched.plot's table export (CSV, LaTeX) and cell formatting: expected texts written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from gpusched import plot  # noqa: E402

A = {"P99 latency ms": 10.0, "preemptions": 2.0, "SLO attainment %": 99.5}
B = {"P99 latency ms": 8.5, "preemptions": 3.0, "SLO attainment %": 99.5}
A_CI = {"P99 latency ms": 0.5, "preemptions": 1.0, "SLO attainment %": 0.25}
LOWER = ["P99 latency ms", "preemptions"]


def rows() -> list[dict]:
    return plot.ab_rows(A, B, a_ci=A_CI, lower_is_better=LOWER, counts=["preemptions"])


def test_format_value_counts_are_integers_and_means_keep_one_decimal() -> None:
    assert plot.format_value(2.0, count=True) == "2"
    assert plot.format_value(2.4, count=True) == "2.4"
    assert plot.format_value(2.0, 0.5, count=True) == "2 ± 0.5"
    assert plot.format_value(12.345, 0.456) == "12.35 ± 0.46"  # 2 digits by default
    assert plot.format_value(1.5, digits=1) == "1.5"


def test_ab_rows_verdicts_and_changes() -> None:
    r = rows()
    # 10 -> 8.5 is -15 % on a lower-is-better metric: better; 2 -> 3 preemptions +50 %: worse;
    # 99.50 == 99.50 as printed: same.
    assert [x["verdict"] for x in r] == ["better", "worse", "same"]
    assert [x["change_text"] for x in r] == ["-15.0%", "+50.0%", "+0.0%"]
    assert r[0]["a_text"] == "10.00 ± 0.50" and r[0]["b_text"] == "8.50"


def test_table_csv(tmp_path: Path) -> None:
    expected = (
        "metric,kube-default,kube-default_ci95,gpusched,gpusched_ci95,change_pct,verdict\n"
        "P99 latency ms,10.00,0.50,8.50,,-15.0,better\n"
        "preemptions,2,1.0,3,,50.0,worse\n"
        "SLO attainment %,99.50,0.25,99.50,,0.0,same\n"
    )
    out = tmp_path / "ab.csv"
    assert plot.table_csv(rows(), a_label="kube-default", b_label="gpusched", path=out) == expected
    assert out.read_text(encoding="utf-8") == expected


def test_table_latex() -> None:
    expected = (
        "\\begin{table}\n"
        "\\centering\n"
        "\\caption{seed scenario, 5 seeds (95\\% CI)}\n"
        "\\label{tab:ab}\n"
        "\\begin{tabular}{lrrr}\n"
        "\\toprule\n"
        "metric & kube-default & gpusched & change \\\\\n"
        "\\midrule\n"
        "P99 latency ms & 10.00 $\\pm$ 0.50 & 8.50 & \\textbf{$-$15.0\\%} \\\\\n"
        "preemptions & 2 $\\pm$ 1.0 & 3 & +50.0\\% \\\\\n"
        "SLO attainment \\% & 99.50 $\\pm$ 0.25 & 99.50 & +0.0\\% \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "\\end{table}\n"
    )
    got = plot.table_latex(rows(), a_label="kube-default", b_label="gpusched",
                           caption="seed scenario, 5 seeds (95% CI)", label="tab:ab")
    assert got == expected


def test_table_latex_bare_tabular_and_escaping() -> None:
    r = plot.ab_rows({"a_b & c": 1.0}, {"a_b & c": 1.0})
    assert plot.table_latex(r) == (
        "\\begin{tabular}{lrrr}\n\\toprule\nmetric & A & B & change \\\\\n\\midrule\n"
        "a\\_b \\& c & 1.00 & 1.00 & +0.0\\% \\\\\n\\bottomrule\n\\end{tabular}\n"
    )


def test_unknown_count_metric_is_refused() -> None:
    with pytest.raises(ValueError, match="counts"):
        plot.ab_rows(A, B, counts=["jobs"])


def test_gs_plot_is_reachable_without_importing_it() -> None:
    # issue 19: `gs.plot.plot_allocation(...)` as documented raised AttributeError.
    import gpusched as gs

    assert gs.plot.plot_allocation is plot.plot_allocation
    with pytest.raises(AttributeError, match="no_such"):
        gs.no_such  # noqa: B018
