"""python/tools/dynamic_summary.py: weeks of a sustained-load replay are the right 6-hour samples, leads pair
seeds, bad input is refused with the file and the field named (docs/quality.md, "Sustained load").

The expected values are worked out by hand from the series built here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "tools"))
import dynamic_summary as ds  # noqa: E402

DAY = 86400
N = 61  # 6-hour samples at 0, 6 h, ..., 15 d; k = 1..28 end week 1 (k = 28 is 7 d exactly), 29..56 week 2


def series(at0: float, week1: list[float] | float, week2: list[float] | float, after: float = 0.0) -> list[float]:
    def pick(v: list[float] | float, i: int) -> float:
        return v[i] if isinstance(v, list) else v
    return [at0] + [pick(week1, i) for i in range(28)] + [pick(week2, i) for i in range(28)] + [after] * (N - 57)


def run(policy: str, seed: int, alloc: list[float], frag: float, pending: float, tw: float) -> dict[str, Any]:
    return {
        "policy": policy, "seed": seed, "window_days": 14.0,
        "time_s": [21600 * k for k in range(N)],
        "allocation_pct": alloc,
        # The sample at 0 (the empty cluster, before the first arrival) is far off, so that counting it shows.
        "frag_amount_pct": [50.0] + [frag] * (N - 1),
        "pending_pods": [1000.0] + [pending] * (N - 1),
        "time_weighted_allocation_pct": tw, "window_allocation_pct": [0.0, tw],
        "time_weighted_frag_amount_pct": frag, "window_frag_amount_pct": [0.0, frag],
        "time_weighted_pending_pods": pending, "window_pending_pods": [0, pending], "window_time_s": [0, 14 * DAY],
        "max_pending_pods": pending, "waited_pods": 1, "withdrawn_pods": 0, "delay_mean_s": 0.0,
        "delay_p95_s": 0.0, "delay_max_s": 0.0, "preemptions": 0, "preempted_pods": 0,
    }


def fixture() -> dict[str, Any]:
    # FGD, seed 42: week 1 is 90 but the sample at 7 d (the state just before 7 d: week 1's) is 62,
    # so week 1 = (27 x 90 + 62) / 28 = 89; week 2 = 95. Seed 43: 90 and 95.
    fgd42 = series(0.0, [90.0] * 27 + [62.0], 95.0)
    fgd43 = series(0.0, 90.0, 95.0)
    # gpusched, seed 42: 91, then 94 and 98 alternating (96); seed 43: 91, then 94.
    g42 = series(0.0, 91.0, [94.0, 98.0] * 14)
    g43 = series(0.0, 91.0, 94.0)
    return {"tool": "gpusched-sim", "mode": "dynamic", "runs": [
        run("FGD", 42, fgd42, 3.0, 10.0, 96.0), run("FGD", 43, fgd43, 3.0, 10.0, 94.0),
        run("gpusched", 42, g42, 2.0, 4.0, 97.0), run("gpusched", 43, g43, 2.0, 4.0, 97.5)]}


def write(tmp_path: Path, d: Any, name: str = "out.json") -> Path:
    p = tmp_path / name
    p.write_text(d if isinstance(d, str) else json.dumps(d))
    return p


def rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]


def test_weeks_are_the_samples_that_end_in_them_and_leads_pair_seeds(tmp_path: Path, capsys) -> None:
    assert ds.main(["--by-week", str(write(tmp_path, fixture()))]) == 0
    table = rows(capsys.readouterr().out)
    assert table[0] == ["week", "FGD alloc %", "gpusched alloc %", "gpusched − FGD (points)", "FGD frag %",
                        "gpusched frag %", "FGD pending", "gpusched pending"]
    # Week 1: FGD (89 + 90) / 2, gpusched 91; leads +2 and +1. Frag and pending leave out the sample at 0.
    assert table[1] == ["1", "89.50", "91.00", "+1.50 (+1.00 to +2.00)", "3.00", "2.00", "10.0", "4.0"]
    # Week 2: FGD 95, gpusched (96 + 94) / 2; leads +1 and -1. The samples after 14 d (0 %) are not a week.
    assert table[2] == ["2", "95.00", "95.00", "+0.00 (-1.00 to +1.00)", "3.00", "2.00", "10.0", "4.0"]
    assert len(table) == 3


def test_a_span_of_weeks_per_seed(tmp_path: Path, capsys) -> None:
    assert ds.main(["--by-week", "--weeks", "1-2", str(write(tmp_path, fixture()))]) == 0
    span = rows(capsys.readouterr().out.split("Weeks 1-2")[1])
    assert span[0] == ["seed", "FGD alloc %", "gpusched alloc %", "gpusched − FGD (points)", "FGD frag %",
                       "gpusched frag %"]
    # Seed 42: FGD (89 + 95) / 2 = 92, gpusched (91 + 96) / 2 = 93.5; seed 43: 92.5 and 92.5.
    assert span[1] == ["42", "92.00", "93.50", "+1.50", "3.00", "2.00"]
    assert span[2] == ["43", "92.50", "92.50", "+0.00", "3.00", "2.00"]
    assert span[3] == ["mean", "92.25", "93.00", "+0.75", "3.00", "2.00"]


def with_free(d: dict[str, Any]) -> dict[str, Any]:
    # Where the unallocated GPU is and what waits, per run: (whole, partly used, one-GPU, multi-GPU) by week.
    # The sample at 0 is far off again, so that counting it shows.
    weeks = {("FGD", 42): ((2.0, 2.0), (4.0, 2.0), (0.5, 0.5), (3.0, 5.0)),
             ("FGD", 43): ((1.0, 1.0), (3.0, 3.0), (0.5, 0.5), (4.0, 4.0)),
             ("gpusched", 42): ((0.5, 0.5), (5.0, 5.0), (1.0, 1.0), (2.0, 2.0)),
             ("gpusched", 43): ((0.5, 0.5), (6.0, 4.0), (1.0, 1.0), (1.0, 3.0))}
    keys = ["free_in_whole_gpus_pct", "free_in_partly_used_gpus_pct", "waiting_one_gpu_pct", "waiting_multi_gpu_pct"]
    for r in d["runs"]:
        for key, (w1, w2) in zip(keys, weeks[(r["policy"], r["seed"])]):
            r[key] = series(77.0, w1, w2)
    return d


def test_where_the_unallocated_gpu_is_over_a_span(tmp_path: Path, capsys) -> None:
    assert ds.main(["--by-week", "--weeks", "1-2", str(write(tmp_path, with_free(fixture())))]) == 0
    part = capsys.readouterr().out.split("where the unallocated GPU is")[1]
    table = rows(part)
    assert table[0] == ["policy", "alloc %", "free in whole GPUs %", "free in partly used GPUs %",
                        "asked by waiting one-GPU pods %", "asked by waiting multi-GPU pods %"]
    # FGD: alloc (92 + 92.5) / 2 (the span table's); whole (2 + 1) / 2; partly used ((4 + 2) / 2 + 3) / 2;
    # multi-GPU ((3 + 5) / 2 + 4) / 2. gpusched: partly used ((6 + 4) / 2 + 5) / 2, multi ((1 + 3) / 2 + 2) / 2.
    assert table[1] == ["FGD", "92.25", "1.50", "3.00", "0.50", "4.00"]
    assert table[2] == ["gpusched", "93.00", "0.50", "5.00", "1.00", "2.00"]
    assert len(table) == 3


def test_where_the_unallocated_gpu_is_needs_the_series_in_every_file(tmp_path: Path, capsys) -> None:
    d = with_free(fixture())
    del d["runs"][3]["waiting_multi_gpu_pct"]
    assert ds.main(["--by-week", "--weeks", "1-2", str(write(tmp_path, d))]) == 0
    out = capsys.readouterr().out
    assert "where the unallocated GPU is" not in out
    assert "(Where the unallocated GPU is: not in every file" in out


def test_the_replay_settings_head_the_output(tmp_path: Path, capsys) -> None:
    # The fixture records none of the settings: the queue is FIFO (files from before --queue), the rest
    # is left out. A file that records them gets each named.
    assert ds.main([str(write(tmp_path, fixture()))]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "replay: queue fifo"
    d = fixture() | {"queue": "priority", "preemption": True, "priority_by_qos": False, "time_scale": 1e6}
    assert ds.main([str(write(tmp_path, d, "set.json")), "--by-week"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "replay: queue priority, preemption on, priorities as read, time scale 1e+06")


def test_reference_policy(tmp_path: Path, capsys) -> None:
    assert ds.main(["--by-week", "--reference", "gpusched", str(write(tmp_path, fixture()))]) == 0
    table = rows(capsys.readouterr().out)
    assert table[0][3] == "FGD − gpusched (points)"
    assert table[1][3] == "-1.50 (-2.00 to -1.00)"


def test_overall_table_means_over_seeds(tmp_path: Path, capsys) -> None:
    assert ds.main([str(write(tmp_path, fixture()))]) == 0
    table = rows(capsys.readouterr().out)
    assert table[0][:3] == ["policy", "tw alloc %", "alloc % at end"]
    assert table[1][:3] == ["FGD", "95.00", "95.00"]       # (96 + 94) / 2
    assert table[2][:3] == ["gpusched", "97.25", "97.25"]  # (97 + 97.5) / 2
    assert "tw lost %" not in table[0]  # the fixture's runs do not carry it (builds before session 23)


def test_overall_table_lost_allocation_when_every_run_has_it(tmp_path: Path, capsys) -> None:
    d = fixture()
    d["preemption"] = True
    for r, lost in zip(d["runs"], [0.5, 0.3, 1.0, 2.0]):  # FGD 42, 43; gpusched 42, 43
        r["time_weighted_preempted_allocation_pct"] = lost
    assert ds.main([str(write(tmp_path, d))]) == 0
    table = rows(capsys.readouterr().out)
    assert table[0][-1] == "tw lost %"
    assert table[1][-1] == "0.40"  # (0.5 + 0.3) / 2
    assert table[2][-1] == "1.50"
    d["preemption"] = False  # replayed without preemption: no column, as in gpusched-sim's table
    assert ds.main([str(write(tmp_path, d))]) == 0
    assert "tw lost %" not in rows(capsys.readouterr().out)[0]
    d["preemption"] = True
    del d["runs"][3]["time_weighted_preempted_allocation_pct"]  # one run without it: no column
    assert ds.main([str(write(tmp_path, d))]) == 0
    assert "tw lost %" not in rows(capsys.readouterr().out)[0]


def test_withdrawn_share_by_priority(tmp_path: Path, capsys) -> None:
    d = fixture()
    # Per run (FGD 42, 43; gpusched 42, 43): pods and withdrawn pods of priorities 5000 and 9000.
    for r, (be, ls) in zip(d["runs"], [(10, 0), (30, 10), (20, 5), (40, 5)]):
        r["pods_by_priority"] = {"5000": 100, "9000": 50}
        r["withdrawn_by_priority"] = {"5000": be, "9000": ls}
    assert ds.main([str(write(tmp_path, d))]) == 0
    out = capsys.readouterr().out
    assert "withdrawn pods, % of the pods of each priority" in out
    table = rows(out)
    i = table.index(["policy", "priority 5000", "priority 9000"])
    assert table[i + 1] == ["FGD", "20.00", "10.00"]       # (10 + 30) / 2 of 100; (0 + 10) / 2 of 50
    assert table[i + 2] == ["gpusched", "30.00", "10.00"]  # (20 + 40) / 2; (5 + 5) / 2 of 50
    for bad, message in [({"5000": "x"}, "'withdrawn_by_priority' is not an object of counts"),
                         ({"high": 1}, "'withdrawn_by_priority' has the key 'high', not a priority"),
                         ({"5000": 101}, "101 pods of priority 5000 withdrawn, of 100"),
                         ({"7000": 1}, "1 pods of priority 7000 withdrawn, of 0")]:
        d["runs"][0]["withdrawn_by_priority"] = bad
        assert ds.main([str(write(tmp_path, d))]) == 2
        assert message in capsys.readouterr().err


def changed(**kw: Any) -> dict[str, Any]:
    d = fixture()
    for r in d["runs"]:
        r.update(kw)
    return d


@pytest.mark.parametrize("doc,args,message", [
    ({"mode": "paper", "runs": [{}]}, ["--by-week"], "mode is 'paper'; this summarises gpusched-sim --mode dynamic"),
    ({"mode": "dynamic"}, [], "no 'runs' list"),
    ({"mode": "dynamic", "runs": []}, [], "'runs' is empty"),
    ({"mode": "dynamic", "runs": [{"policy": "FGD"}]}, [], "runs[0] has no 'seed'"),
    (changed(window_days=6.5), ["--by-week"], "shorter than a week"),
    (changed(window_days="x"), ["--by-week"], "the run of FGD, seed 42: 'window_days' is 'x', not a number"),
    (changed(window_days=True), ["--by-week"], "'window_days' is True, not a number"),
    (changed(window_days=-1.0), ["--by-week"], "'window_days' is -1.0, not a time"),
    (changed(time_s=["0"] * N), ["--by-week"], "the run of FGD, seed 42: time_s[0] is '0', not a number"),
    (changed(allocation_pct=5), ["--by-week"], "'allocation_pct' is not a list of numbers"),
    (changed(allocation_pct=[None] * N), ["--by-week"], "allocation_pct[0] is None, not a number"),
    (changed(time_weighted_allocation_pct=None), [], "'time_weighted_allocation_pct' is None, not a number"),
    (changed(window_pending_pods=[]), [], "'window_pending_pods' is not a list of numbers"),
    (changed(seed="42"), [], "runs[0].seed is '42', not an integer"),
    (changed(policy=["FGD"]), [], "runs[0].policy is ['FGD'], not a name"),
    ({"mode": "dynamic", "runs": [5]}, [], "runs[0] is not an object"),
    ({"mode": "dynamic", "runs": fixture()["runs"][:1] * 2}, [], "runs[1]: FGD, seed 42, is in the file twice"),
    (fixture(), ["--by-week", "--weeks", "2-1"], "--weeks: '2-1' ends before it starts"),
    (fixture(), ["--by-week", "--weeks", "2-3"], "--weeks: '2-3' is not within weeks 1-2"),
    (fixture(), ["--by-week", "--weeks", "five"], "--weeks: 'five' is not FIRST-LAST"),
    (fixture(), ["--by-week", "--reference", "BestFit"], "--reference: 'BestFit' is not a policy"),
    ({"mode": "dynamic", "runs": fixture()["runs"][:3]}, ["--by-week"], "gpusched has seeds [42], FGD has [42, 43]"),
    (changed(pending_pods=[0.0]), ["--by-week"], "the run of FGD, seed 42: its series differ in length"),
    ({"mode": "dynamic", "runs": [{"policy": "FGD", "seed": 42}]}, ["--by-week"],
     "the run of FGD, seed 42, has no 'window_days'"),
    ({"mode": "dynamic", "runs": [{"policy": "FGD", "seed": 42}]}, [],
     "the run of FGD, seed 42, has no 'time_weighted_allocation_pct'"),
])
def test_bad_input_names_the_file_and_field(tmp_path: Path, capsys, doc: Any, args: list[str], message: str) -> None:
    p = write(tmp_path, doc)
    assert ds.main([*args, str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynamic_summary: ")
    assert message in err
    if not message.startswith("--"):
        assert str(p) in err


def test_not_json_gives_the_line(tmp_path: Path, capsys) -> None:
    p = write(tmp_path, '{"mode": "dynamic",\n "runs": [,]}')
    assert ds.main([str(p)]) == 2
    assert f"dynamic_summary: {p}:2: not JSON" in capsys.readouterr().err


def test_missing_file_and_options_without_by_week(tmp_path: Path, capsys) -> None:
    assert ds.main([str(tmp_path / "none.json")]) == 2
    assert "none.json: cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        ds.main(["--weeks", "1-2", str(write(tmp_path, fixture()))])
    assert e.value.code == 2
    assert "--weeks and --reference need --by-week" in capsys.readouterr().err


def split(tmp_path: Path, second_inputs: str = "bbb") -> tuple[Path, Path]:
    d = fixture()
    one = {"mode": "dynamic", "inputs": [{"role": "pods", "sha256": "aaa"}, {"role": "nodes", "sha256": "bbb"}],
           "preemption": True, "runs": d["runs"][:2]}
    two = {"mode": "dynamic", "inputs": [{"role": "nodes", "sha256": second_inputs}, {"role": "pods", "sha256": "aaa"}],
           "preemption": True, "runs": d["runs"][2:]}
    return write(tmp_path, one, "fgd.json"), write(tmp_path, two, "gpusched.json")


def test_replays_of_the_same_inputs_are_summarised_together(tmp_path: Path, capsys) -> None:
    assert ds.main(["--by-week", *map(str, split(tmp_path))]) == 0
    table = rows(capsys.readouterr().out)
    assert table[1] == ["1", "89.50", "91.00", "+1.50 (+1.00 to +2.00)", "3.00", "2.00", "10.0", "4.0"]


def test_replays_of_other_inputs_or_the_same_run_twice_are_refused(tmp_path: Path, capsys) -> None:
    one, two = split(tmp_path, second_inputs="ccc")
    assert ds.main(["--by-week", str(one), str(two)]) == 2
    assert f"{two}: its inputs (node and pod files, by sha256) are not those of {one}" in capsys.readouterr().err
    one, _ = split(tmp_path)
    assert ds.main([str(one), str(one)]) == 2
    assert f"{one}: FGD, seed 42, is also in {one}" in capsys.readouterr().err
    d = json.loads(one.read_text())
    d["preemption"] = False
    other = write(tmp_path, d, "nopre.json")
    d["runs"] = [{**r, "policy": "BestFit"} for r in d["runs"]]
    other.write_text(json.dumps(d))
    assert ds.main([str(one), str(other)]) == 2
    assert f"{other}: preemption is False, {one} has True" in capsys.readouterr().err


def test_replays_with_another_queue_order_are_refused_and_a_file_without_one_is_fifo(tmp_path: Path,
                                                                                    capsys) -> None:
    one, two = split(tmp_path)  # neither names its queue: both are FIFO replays (before --queue)
    d = json.loads(two.read_text())
    d["queue"] = "fifo"
    two.write_text(json.dumps(d))
    assert ds.main(["--by-week", str(one), str(two)]) == 0
    capsys.readouterr()
    d["queue"] = "priority"
    two.write_text(json.dumps(d))
    assert ds.main(["--by-week", str(one), str(two)]) == 2
    assert f"{two}: queue is 'priority', {one} has 'fifo'" in capsys.readouterr().err


def test_leads_pair_each_seed_with_the_same_seed(tmp_path: Path, capsys) -> None:
    d = fixture()
    d["runs"][1]["allocation_pct"] = series(0.0, 90.0, 99.0)  # FGD, seed 43: week 2 is 99
    assert ds.main(["--by-week", str(write(tmp_path, d))]) == 0
    # Week 2: seed 42 96 - 95 = +1, seed 43 94 - 99 = -5 (crossed seeds would give -3 and -1).
    assert rows(capsys.readouterr().out)[2][3] == "-2.00 (-5.00 to +1.00)"


@pytest.mark.parametrize("days,weeks", [(14.0, 2), (13.75, 2), (13.74, 1), (7.0, 1)])
def test_a_week_counts_when_it_ends_within_a_sample_interval_of_the_window(tmp_path: Path, capsys, days: float,
                                                                           weeks: int) -> None:
    # 14 d - 6 h = 13.75 d: the last week still ends within one 6-hour sample interval of the last arrival.
    assert ds.main(["--by-week", str(write(tmp_path, changed(window_days=days)))]) == 0
    assert [r[0] for r in rows(capsys.readouterr().out)[1:]] == [str(k + 1) for k in range(weeks)]


def test_weeks_count_from_the_first_sample(tmp_path: Path, capsys) -> None:
    # gpusched-sim samples from the first arrival, where the window starts: a trace whose first pod
    # arrives at 1 h gives the same weeks as one that starts at 0.
    assert ds.main(["--by-week", str(write(tmp_path, fixture(), "a.json"))]) == 0
    at0 = capsys.readouterr().out
    d = fixture()
    for r in d["runs"]:
        r["time_s"] = [t + 3600 for t in r["time_s"]]
    assert ds.main(["--by-week", str(write(tmp_path, d, "b.json"))]) == 0
    assert capsys.readouterr().out == at0


def test_an_error_in_the_second_file_names_it(tmp_path: Path, capsys) -> None:
    one, two = split(tmp_path)
    d = json.loads(two.read_text())
    del d["runs"][0]["window_days"]
    two.write_text(json.dumps(d))
    assert ds.main(["--by-week", str(one), str(two)]) == 2
    assert f"{two}: the run of gpusched, seed 42, has no 'window_days'" in capsys.readouterr().err


@pytest.mark.parametrize("inputs", [None, 3, [], [{"role": "pods"}]])
def test_files_that_do_not_name_their_inputs_are_not_merged(tmp_path: Path, capsys, inputs: Any) -> None:
    one, two = split(tmp_path)
    d = json.loads(two.read_text())
    d["inputs"] = inputs
    two.write_text(json.dumps(d))
    assert ds.main([str(one), str(two)]) == 2
    assert f"{two}: no 'inputs' with a sha256 each" in capsys.readouterr().err
