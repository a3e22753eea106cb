"""Smoke tests of the experiment scripts on tiny budgets: they run, write what they promise,
and their figures are the known ones."""

import json
import os
import sys
import time

import pytest
import torch

import tensorcfr

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "experiments"))


def test_compare_algorithms_writes_json_table_and_tensorboard(tmp_path):
    import compare_algorithms

    compare_algorithms.main(["--games", "kuhn", "--iterations", "20", "--etas", "1", "2", "--no-readme",
                             "--out", str(tmp_path), "--logdir", str(tmp_path / "runs"), "--device", "cpu"])
    res = json.load(open(tmp_path / "compare_algorithms.json"))["results"]["kuhn"]["runs"]
    assert set(k.split("(")[0] for k in res) == set(compare_algorithms.ALGOS)
    assert [r["iteration"] for r in res["cfr"]] == [1, 2, 5, 10, 20]
    assert res["cfr"][0]["exploitability"] == pytest.approx(11 / 24)  # uniform strategy: NashConv 11/12
    table = open(tmp_path / "compare_algorithms.md").read()
    assert "| kuhn | dcfr |" in table and "10 it" in table
    assert len(os.listdir(tmp_path / "runs")) == len(compare_algorithms.ALGOS)  # one run per algorithm


def test_thesis_tables_solve_small_rows_to_the_target(tmp_path):
    import thesis_tables

    thesis_tables.main(["--rows", "ocp(3)", "dudo(3,1,1)", "domino(2,2)", "--no-readme", "--no-probe",
                        "--out", str(tmp_path), "--logdir", str(tmp_path / "runs"), "--device", "cpu"])
    rows = {r["game"]: r for r in json.load(open(tmp_path / "thesis_table.json"))["rows"]}
    assert (rows["ocp(3)"]["histories"], rows["ocp(3)"]["infosets"]) == (55, 12)
    assert abs(rows["ocp(3)"]["value"] + 1 / 18) < 1e-4 and abs(rows["domino(2,2)"]["value"] - 2.4) < 1e-4
    assert all(r["nash_conv"] <= 1e-4 and r["solved"] and r["algorithm"] == "dcfr" for r in rows.values())
    md = open(tmp_path / "thesis_table.md").read()
    assert "| OCP(3) | 55 | 12 | dcfr |" in md and "-1/18" in md and "1,181,763,638 it" in md
    # the exact (LP) column: the sequence-form LP's value, its strategies' NashConv ~0
    assert rows["ocp(3)"]["lp_value"] == pytest.approx(-1 / 18, abs=1e-9)
    assert rows["domino(2,2)"]["lp_value"] == pytest.approx(2.4, abs=1e-9)
    assert all(r["lp_nash_conv"] < 1e-8 and abs(r["lp_value"] - r["value"]) < 1e-4 for r in rows.values())
    assert "-0.0555556 (-1/18)" in md
    # --resume solves the missing rows and keeps the others, those after the last solved one too
    data = json.load(open(tmp_path / "thesis_table.json"))
    data["rows"] = [r for r in data["rows"] if r["game"] != "ocp(3)"]
    json.dump(data, open(tmp_path / "thesis_table.json", "w"))
    thesis_tables.main(["--rows", "ocp(3)", "dudo(3,1,1)", "domino(2,2)", "--no-readme", "--no-probe", "--resume",
                        "--out", str(tmp_path), "--logdir", "", "--device", "cpu"])
    again = {r["game"]: r for r in json.load(open(tmp_path / "thesis_table.json"))["rows"]}
    assert list(again) == ["ocp(3)", "dudo(3,1,1)", "domino(2,2)"] and again["domino(2,2)"] == rows["domino(2,2)"]
    assert "| Domino(2,2) |" in open(tmp_path / "thesis_table.md").read()
    # one row named alone (how a long row runs) joins the table; the other rows stay as they were
    thesis_tables.main(["--rows", "ocp(12)", "--no-readme", "--no-probe", "--no-lp", "--out", str(tmp_path),
                        "--logdir", "", "--device", "cpu"])
    last = {r["game"]: r for r in json.load(open(tmp_path / "thesis_table.json"))["rows"]}
    assert list(last) == ["ocp(3)", "dudo(3,1,1)", "domino(2,2)", "ocp(12)"]
    assert all(last[g] == again[g] for g in again) and last["ocp(12)"]["solved"]
    assert "| OCP(12) |" in open(tmp_path / "thesis_table.md").read()


def resume_ends_as_straight(base: list[str], tmp_path, ckpt) -> None:
    """`--resume` the row of `base` to its target; it ends where an unbroken run ends, and
    its checkpoint goes."""
    import thesis_tables

    thesis_tables.main(base + ["--resume"])
    resumed = json.load(open(tmp_path / "thesis_table.json"))["rows"][0]
    thesis_tables.main(base + ["--out", str(tmp_path / "straight")])
    straight = json.load(open(tmp_path / "straight" / "thesis_table.json"))["rows"][0]
    assert resumed["reached_target"] and not ckpt.exists()
    assert (resumed["iterations"], resumed["nash_conv"]) == (straight["iterations"], straight["nash_conv"])


def test_evaluations_follow_the_nashconv_trend():
    """`train`'s trend (the thesis tables' rule): gaps double up to 200, but stop at most 5% past
    where the power law through the last two evaluations meets the target: Dudo(5,2,2) read
    4.725e-4 at 310 and 1.073e-4 at 510, slope log(4.403)/log(1.645) = 2.98, target met at 522.2,
    next evaluation at ceil(548.3) = 549."""
    from tensorcfr.run.training import Trend

    step = Trend(1e-4).step
    assert step([(310, 4.725e-4), (510, 1.073e-4)], 200) == 39
    assert step([(10, 0.1)], 10) == 20  # one point: no trend yet
    assert step([(150, 1e-3), (310, 5e-4)], 160) == 200  # far from the target: the cap
    assert step([(150, 1e-3), (310, 2e-3)], 160) == 200  # rising: no trend to follow
    assert step([(90, 2e-4), (100, 1.0001e-4)], 20) == 10  # at least 10 (5% of 100 is 5)


def test_thesis_tables_resume_a_row_cut_short_from_its_checkpoint(tmp_path):
    """A row stopped by its time limit saves the solver; --resume continues it where it
    stopped (iteration for iteration as an unbroken run) and drops the checkpoint once the row
    reaches its target."""
    import thesis_tables

    base = ["--rows", "ocp(12)", "--no-readme", "--no-probe", "--out", str(tmp_path), "--logdir", "",
            "--device", "cpu"]
    table = lambda: json.load(open(tmp_path / "thesis_table.json"))["rows"][0]  # noqa: E731
    ckpt = tmp_path / "checkpoints" / "ocp(12).pt"
    thesis_tables.main(base + ["--minutes", "0", "--target", "1e-12"])  # one chunk of 10 iterations
    assert table()["iterations"] == 10 and not table()["reached_target"] and ckpt.exists()
    thesis_tables.main(base + ["--minutes", "0", "--target", "1e-12", "--resume"])
    assert table()["iterations"] == 30 and ckpt.exists()  # the next chunk: 20 more
    thesis_tables.main(base + ["--resume"])  # on to NashConv <= 1e-4
    resumed = table()
    assert resumed["reached_target"] and not ckpt.exists()
    thesis_tables.main(base + ["--out", str(tmp_path / "straight")])
    straight = json.load(open(tmp_path / "straight" / "thesis_table.json"))["rows"][0]
    assert (resumed["iterations"], resumed["nash_conv"]) == (straight["iterations"], straight["nash_conv"])


def test_thesis_tables_resume_from_a_checkpoint_inside_a_chunk(tmp_path, monkeypatch):
    """A checkpoint falls inside a chunk (--checkpoint-minutes 0: after every step); a run
    killed after it resumes there, evaluates where an unbroken run does and ends as it does."""
    import thesis_tables

    base = ["--rows", "ocp(12)", "--no-readme", "--no-probe", "--no-lp", "--out", str(tmp_path), "--logdir", "",
            "--device", "cpu", "--checkpoint-minutes", "0"]
    ckpt = tmp_path / "checkpoints" / "ocp(12).pt"
    thesis_tables.main(base + ["--minutes", "0", "--target", "1e-12"])  # 10 iterations, evaluated, saved
    step = tensorcfr.Solver.step

    def killed_past_20(self, n=1):
        if self.iteration >= 20:
            raise RuntimeError("killed")
        step(self, n)
    monkeypatch.setattr(tensorcfr.Solver, "step", killed_past_20)
    with pytest.raises(RuntimeError, match="killed"):
        thesis_tables.main(base + ["--resume"])  # the chunk 10 -> 30, saved after every step, killed
    saved = torch.load(ckpt, weights_only=True)
    assert 20 <= saved["solver"]["iteration"] < 30 and saved["loop"]["next_eval"] == 30
    monkeypatch.setattr(tensorcfr.Solver, "step", step)
    resume_ends_as_straight(base, tmp_path, ckpt)


def test_sampling_experiment_runs_every_scheme_and_the_thesis_setting(tmp_path):
    import sampling

    sampling.main(["--games", "kuhn", "--seconds", "0.3", "--seeds", "2", "--large-k", "4", "--thesis-seconds", "0.3",
                   "--thesis-games", "dudo(4,1,2)", "ocp(12)", "--cost-game", "kuhn", "--no-readme", "--out", str(tmp_path)])
    out = json.load(open(tmp_path / "sampling.json"))
    rows = {(r["algorithm"], r["sampling"], r["samples"]): r for r in out["rows"]}
    assert set(rows) == {("cfr+", "none", 1), ("dcfr", "none", 1), ("cfr+", "chance", 1), ("cfr+", "chance", 4),
                         ("cfr+", "chance/touched", 1), ("cfr+", "chance/touched", 4),
                         ("cfr+", "chance/touched:public", 1), ("cfr+", "chance/touched:public", 4),
                         ("cfr+", "external", 1), ("cfr+", "external", 4), ("cfr", "outcome", 1), ("cfr", "outcome", 4)}
    assert rows[("cfr+", "none", 1)]["iterations_to_target"] is not None  # exact CFR+ passes 1e-2 in a few ms
    assert rows[("cfr+", "chance", 1)]["sampled_fraction"] == pytest.approx(1 / 6)  # one of Kuhn's 6 deals
    assert all(r["seeds"] == (1 if s == "none" else 2) for (_, s, _), r in rows.items())
    assert [c["sampling"] for c in out["cost"]] == 2 * ["none", "chance", "external", "outcome", "chance/touched",
                                                        "external/touched", "outcome/touched"]
    assert [c["form"] for c in out["cost"]] == 7 * ["generic"] + 7 * ["public"]
    assert rows[("cfr+", "chance/touched:public", 1)]["sampled_fraction"] == pytest.approx(1 / 9)  # of 3 x 3 pairs
    assert [t["game"] for t in out["thesis"]] == ["dudo(4,1,2)", "ocp(12)"]
    md = open(tmp_path / "sampling.md").read()
    assert "| kuhn (0.3 s) | cfr | outcome | 4 | 2 |" in md and "thesis iterations/s" in md
    assert (tmp_path / "sampling.png").exists() == _has("matplotlib")
    # --keep reruns nothing it has: the same runs come back
    sampling.main(["--games", "kuhn", "--seconds", "0.3", "--seeds", "2", "--large-k", "4", "--thesis-seconds", "0",
                   "--cost-game", "", "--no-readme", "--keep", "--out", str(tmp_path)])
    assert json.load(open(tmp_path / "sampling.json"))["runs"] == out["runs"]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_readme_section_is_replaced_between_its_markers_only(tmp_path):
    from readme_section import command, replace_section

    path = tmp_path / "README.md"
    path.write_text("intro\n<!-- t:start -->\nold\n<!-- t:end -->\noutro\n")
    assert replace_section("t", "new\n", str(path))
    assert path.read_text() == "intro\n<!-- t:start -->\nnew\n<!-- t:end -->\noutro\n"
    assert not replace_section("other", "x\n", str(path))
    assert command("thesis_tables.py", ["--rows", "ocp(12)"]) == "python experiments/thesis_tables.py --rows 'ocp(12)'"


def test_regret_matching_table_reproduces_the_thesis_shape(tmp_path):
    import regret_matching_table

    regret_matching_table.main(["--games", "rps", "ficha_domino", "--runs", "3", "--max-iterations", "3000",
                                "--no-readme", "--out", str(tmp_path)])
    rows = json.load(open(tmp_path / "regret_matching_table.json"))["rows"]
    assert len(rows) == 2 * len(regret_matching_table.PROCEDURES)
    by = {(r["game"], r["procedure"]): r for r in rows}
    assert by[("rps", "rm+")]["iterations"] == 1 and by[("rps", "rm+")]["nash_conv"] == 0.0  # uniform start
    assert by[("ficha_domino", "rm")]["lp_value"] == pytest.approx(1 / 3)
    for r in rows:  # stopped runs are below the target; zero-sum: NashConv = sum of unconditional regrets
        assert r["iterations"] <= 3000 and r["runs"] in (1, 3)
        if r["reached"] == r["runs"]:
            assert r["nash_conv_max"] < 2 * 0.005 + 1e-12
    md = open(tmp_path / "regret_matching_table.md").read()
    assert "| Ficha vs Dominó | A conditional (inertia) |" in md and "108,319,272" in md


def test_bench_runs_the_peers_on_the_same_game(tmp_path, monkeypatch):
    import bench

    monkeypatch.setitem(bench.GAMES, "kuhn", ("kuhn_poker", 30))
    bench.main(["--games", "kuhn", "--algos", "cfr", "--dtypes", "float64", "--no-readme", "--out", str(tmp_path),
                "--bandwidth-mb", "16", "--devices", "cpu", "cpu-compile"])
    rows = json.load(open(tmp_path / "bench.json"))["rows"]
    default_device = "cuda" if torch.cuda.is_available() else "cpu"  # the default row runs where Solver would
    assert [(r["game"], r["device"], r.get("default", False)) for r in rows] == [
        ("kuhn", "cpu", False), ("kuhn", "cpu-compile", False), ("kuhn", default_device, True)]
    ours = rows[0]["tensorcfr"]
    assert ours["ms"] > 0 and ours["floor_ms"] > 0 and ours["ms_min"] <= ours["ms"] and ours["threads"] == 1
    assert ours["iterations"] == 30 and ours["warmup"] == bench.WARMUP
    if rows[0]["openspiel"] is not None:  # the same 2 + 30 alternating CFR iterations, timed the same way
        assert rows[0]["openspiel"]["warmup"] == bench.WARMUP and rows[0]["openspiel"]["iterations"] == 30
        assert ours["exploitability"] == pytest.approx(rows[0]["openspiel"]["exploitability"], abs=1e-12)
    md = open(tmp_path / "bench.md").read()
    assert "| kuhn | 58 | cfr | as the peers | generic | cpu | float64 | 1 | 30 |" in md
    compiled = rows[1]["tensorcfr"]  # the same iterations, compiled
    assert compiled["exploitability"] == pytest.approx(ours["exploitability"], abs=1e-12)
    # what `tensorcfr solve kuhn --algo cfr` runs: the cfr preset updates both players at once
    assert rows[2]["tensorcfr"]["updates"] == "simultaneous" and "| solve default (simultaneous) |" in md
    assert rows[2]["tensorcfr"]["exploitability"] != pytest.approx(ours["exploitability"], abs=1e-12)


def test_bench_times_every_solver_alike():
    import bench

    done = []
    r = bench.measure(done.append, 7, wait=lambda: done.append("wait"))
    assert done[0] == bench.WARMUP and sum(x for x in done if x != "wait") == bench.WARMUP + 7
    assert r["iterations"] == 7 and len(r["ms_blocks"]) == 5 and r["ms_min"] <= r["ms"]
    slow = bench.measure(lambda n: time.sleep(0.01 * n), 1000, budget_s=0.05)  # cut to about 0.05 s
    assert 1 <= slow["iterations"] <= 10 and len(slow["ms_blocks"]) == min(5, slow["iterations"])


def test_added_peak_counts_the_memory_a_run_holds_at_once():
    import peak

    if peak._status_kb("VmHWM") is None:
        pytest.skip("no /proc/self/status here: the peak is not measured")

    def hold(mb):  # hold mb megabytes of touched pages at once, then let them go
        block = bytearray(b"x" * (mb << 20))
        return len(block)

    assert peak.added_peak(lambda: hold(1))[0] == 1 << 20
    small, large = peak.added_peak(lambda: hold(1))[1], peak.added_peak(lambda: hold(96))[1]
    # the 96 MB block, and its copy's source (b"x" * n), counted while the work ran, though
    # freed before it returned; a 1 MB run adds about 2
    assert large >= 96 and small < 16


def test_startup_times_fresh_processes_to_the_target(tmp_path):
    import startup

    startup.main(["--games", "kuhn", "--runs", "1", "--solvers", "tensorcfr solve", "OpenSpiel C++ CFR+",
                  "--no-readme", "--out", str(tmp_path)])
    rows = {r["solver"]: r for r in json.load(open(tmp_path / "startup.json"))["rows"]}
    ours = rows["tensorcfr solve"]
    assert ours["exploitability"] <= 1e-3 and ours["seconds"] > 0 and ours["peak_mb"] > 50  # torch alone is more
    if "OpenSpiel C++ CFR+" in rows:  # the iterations it needs, found first: its one evaluation meets the target
        theirs = rows["OpenSpiel C++ CFR+"]
        assert theirs["exploitability"] <= 1e-3 and theirs["iterations"] > 1 and theirs["peak_mb"] > 0
    assert "| kuhn | 0.001 | tensorcfr solve |" in open(tmp_path / "startup.md").read()


def _row(game, histories, device, ms, openspiel=None, liteefg=None, x_floor=2.0, algo="cfr"):
    return {"game": game, "histories": histories, "algorithm": algo, "dtype": "float64", "device": device,
            "tensorcfr": {"ms": ms, "x_floor": x_floor},
            "openspiel": {"ms": openspiel} if openspiel else None, "liteefg": {"ms": liteefg} if liteefg else None,
            "speedup_vs_openspiel": openspiel / ms if openspiel else None,
            "speedup_vs_liteefg": liteefg / ms if liteefg else None}


def test_bench_targets_name_the_worst_row_of_each_bar():
    import bench

    rows = [_row("kuhn", 58, "cpu", 0.16, openspiel=0.03),  # under 10^5 histories: no CPU bar
            _row("liars_dice", 294_883, "cpu", 1.0, openspiel=90.0, liteefg=140.0),
            _row("dudo(6,1,1)", 294_877, "cpu", 8.0, openspiel=27.0, liteefg=150.0),  # 3.4x: misses the 5x bar
            _row("dudo(6,1,1)", 294_877, "cpu-compile", 1.0, openspiel=27.0, liteefg=150.0),  # not the default form
            _row("ocp(1000)", 8_991_001, "cpu", 6.0)]
    cpu_os, cpu_lite, gpu = bench.targets(rows)
    assert cpu_os["met"] is False and cpu_os["result"].startswith("smallest 3.4× (dudo(6,1,1), cfr, float64, cpu)")
    assert "no peer run on ocp(1000)" in cpu_os["result"]
    assert cpu_lite["met"] is True and cpu_lite["result"].startswith("smallest 18.8× (dudo(6,1,1)")
    assert gpu["met"] is None and "no CUDA" in gpu["result"]

    rows += [_row("kuhn", 58, "cuda", 0.30, openspiel=0.03), _row("kuhn", 58, "cuda-graph", 0.08, openspiel=0.03),
             _row("leduc", 9_457, "cuda-graph", 0.12, openspiel=8.0),  # the slowest small game: 120 µs
             _row("liars_dice", 294_883, "cuda", 0.5, openspiel=90.0),  # the largest both ran: 180x
             _row("ocp(1000)", 8_991_001, "cuda", 0.9, x_floor=2.5), _row("ocp(1000)", 8_991_001, "cuda-graph", 0.8,
                                                                         x_floor=2.2)]
    small, versus, floor = bench.targets(rows)[2:]
    assert small["met"] is False and small["result"] == "slowest 120 µs (leduc, cfr, float64, cuda-graph)"
    assert versus["met"] is True and versus["result"] == "smallest 180.0× (liars_dice, cfr, float64, cuda)"
    assert floor["met"] is True and floor["result"] == "largest 2.2× (ocp(1000), cfr, float64, cuda-graph)"
    assert "| GPU, games under 10^5 histories: < 100 µs an iteration | slowest 120 µs" in bench.targets_markdown(rows)


def test_noregret_loads_a_simultaneous_game_turn_based():
    """noregret reads a simultaneous node as chance; `noregret_peer.turn_based` hands it OpenSpiel's
    turn-based Goofspiel, whose size is the game the other peers solve, and leaves Leduc as it is."""
    pyspiel = pytest.importorskip("pyspiel")
    import noregret_peer

    name = "goofspiel(num_cards=4,imp_info=True,points_order=descending)"
    wrapped = noregret_peer.turn_based(name)
    assert wrapped == f"turn_based_simultaneous_game(game={name})"
    assert noregret_peer.turn_based("leduc_poker") == "leduc_poker"
    g = pyspiel.load_game(wrapped)
    assert g.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert str(g) == str(pyspiel.convert_to_turn_based(pyspiel.load_game(name)))


def test_bench_table_gains_noregret_columns_only_where_it_ran():
    import bench

    def full(r, nr=None):
        r["tensorcfr"] |= {"ms_min": r["tensorcfr"]["ms"], "exploitability": 0.01, "threads": 1}
        r["iterations"] = 100
        r["noregret"] = None if nr is None else {"ms": nr, "ms_min": nr, "iterations": 100, "exploitability": 0.02}
        r["speedup_vs_noregret"] = None if nr is None else nr / r["tensorcfr"]["ms"]
        return r

    plain = bench.markdown([full(_row("leduc", 9_457, "cpu", 0.5))], "here", "today")
    assert "noregret" not in plain and plain.count("| leduc |") == 1
    both = bench.markdown([full(_row("leduc", 9_457, "cpu", 0.5), nr=5.0), full(_row("kuhn", 58, "cpu", 0.1))],
                          "here", "today")
    header, rule, leduc, kuhn = both.splitlines()[2:6]
    assert "| noregret ms/it | speed-up | exploitability (ours / OpenSpiel / noregret) |" in header
    assert header.count("|") == rule.count("|") == leduc.count("|") == kuhn.count("|")
    assert "| 5.000 (5.000) | 10.0x | 0.01 / - / 0.02 |" in leduc and "| not run | - | 0.01 / - / - |" in kuhn
    assert header.endswith("| peak MB (ours / OpenSpiel / LiteEFG / noregret) |")
    assert leduc.endswith("| - / - / - / - |")  # no peak measured
    measured = full(_row("leduc", 9_457, "cpu", 0.5), nr=5.0)
    measured["tensorcfr"]["peak_mb"], measured["noregret"]["peak_mb"] = 1234.4, 3.25
    assert bench.markdown([measured], "here", "today").splitlines()[4].endswith("| 1,234 / - / - / 3.2 |")
    assert bench.time_noregret("leduc_poker", "cfr", 10, 1.0, None) is None  # no interpreter named: skipped
    assert "on its CPU kernel, whose sparse products take MKL's default threads" in both
    measured["noregret"]["cuda"] = True  # its CUDA kernel (`--noregret-cuda`): the note says which
    assert "on its CUDA kernel (" in bench.markdown([measured], "here", "today")


def test_sampling_experiment_against_openspiel(tmp_path):
    pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install -e '.[bench]')")
    import sampling

    sampling.main(["--peers-only", "--openspiel-iterations", "20", "--seeds", "1", "--no-readme", "--out", str(tmp_path)])
    rows = json.load(open(tmp_path / "sampling_openspiel.json"))
    assert [r["sampling"] for r in rows] == ["external", "outcome"]
    assert all(r["iterations"] == 20 and r["exploitability"] > 0 and r["openspiel_exploitability"] > 0 for r in rows)
    assert "| leduc | external | 20 | 1 |" in open(tmp_path / "sampling_openspiel.md").read()


def test_sampling_experiment_at_equal_time(tmp_path):
    """`--equal-time`: every solver is stopped at each solving-time mark and evaluated there;
    the table has a row per solver with a column per mark."""
    pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install -e '.[bench]')")
    import sampling

    sampling.main(["--equal-time", "--time-games", "kuhn", "--time-seconds", "0.2", "0.4", "--time-samples", "64",
                   "--seeds", "1", "--no-readme", "--out", str(tmp_path)])
    rows = json.load(open(tmp_path / "sampling_time.json"))
    assert [(r["solver"], r["sampling"], r["samples"]) for r in rows] == [
        ("tensorcfr", "none", 1), ("openspiel", "external", 1), ("tensorcfr", "external", 64),
        ("openspiel", "outcome", 1), ("tensorcfr", "outcome", 64)]
    for r in rows:
        (m0, n0, e0), (m1, n1, e1) = r["points"]
        # (an iteration slowed by other work on the machine may span both marks: 63 and 63 seen)
        assert (m0, m1) == (0.2, 0.4) and 0 < n0 <= n1 and e0 > 0 and e1 > 0
    table = open(tmp_path / "sampling_time.md").read()
    assert "| kuhn | tensorcfr CFR+ external sampling, K = 64 | 1 |" in table and "after 0.4 s" in table


def test_thesis_tables_resume_a_checkpoint_of_the_first_format(tmp_path):
    """A checkpoint written before the script ran on `train` (its points as (iteration, NashConv)
    and the next chunk) still resumes, and ends where an unbroken run ends."""
    import thesis_tables

    base = ["--rows", "ocp(12)", "--no-readme", "--no-probe", "--no-lp", "--out", str(tmp_path), "--logdir", "",
            "--device", "cpu"]
    ckpt = tmp_path / "checkpoints" / "ocp(12).pt"
    thesis_tables.main(base + ["--minutes", "0", "--target", "1e-12"])  # 10 iterations, evaluated, saved
    new = torch.load(ckpt, weights_only=True)
    rows = new["loop"]["rows"]
    old = {"solver": new["solver"], "form": new["form"], "dtype": new["dtype"], "seconds": new["seconds"],
           "solving": new["loop"]["solving"], "compile_seconds": new["compile_seconds"], "next_chunk": 20,
           "chunk": 10, "next_eval": None, "points": [(r["iteration"], r["nash_conv"]) for r in rows]}
    torch.save(old, ckpt)
    resume_ends_as_straight(base, tmp_path, ckpt)


def test_holdem_benchmark_reaches_its_target_on_a_small_deck(tmp_path):
    import holdem

    spot = "holdem_river(board=AsKhQsJh9s, pot=4, stack=8, ranks=AKQJ9, suits=sh)"
    holdem.main(["--spot", spot, "--target", "1", "--algos", "dcfr", "--dtype", "float64", "--threads", "1",
                 "--no-readme", "--out", str(tmp_path)])
    out = json.load(open(tmp_path / "holdem.json"))
    row, = out["rows"]
    assert row["percent_pot"] <= 1.0 and row["percent_pot"] == pytest.approx(100 * row["exploitability"] / 4)
    assert out["sizes"]["types"] == [10, 10] and out["dense_ms_per_iteration"] > 0
    assert 0 < out["start_seconds"] < 600
    text = open(tmp_path / "holdem.md").read()
    assert "| dcfr |" in text and f"the first solver's start {out['start_seconds']:.1f} s" in text


@pytest.mark.skipif(not _has("pyspiel"), reason="needs OpenSpiel")
def test_holdem_batch_equals_the_spots_alone_on_a_small_deck(tmp_path):
    import holdem_batch

    holdem_batch.main(["--spots", "3", "--iterations", "20", "--board", "AsKhQsJh9s", "--ranks", "AKQJT9",
                       "--suits", "shd", "--dtype", "float64", "--threads", "1", "--repeats", "3", "--no-readme",
                       "--out", str(tmp_path)])
    out = json.load(open(tmp_path / "holdem-batch.json"))
    assert out["hands"] == [78, 78] and len(out["percent_pot"]) == 3
    assert all(abs(x - y) <= 1e-9 for x, y in zip(out["percent_pot"], out["percent_pot_solo"]))
    assert len(set(out["percent_pot"])) == 3  # ranges and pots of their own: three different spots
    # the batch and the spots took turns (--repeats 3), the medians reported
    assert len(out["solve_batch_runs_s"]) == len(out["solve_solo_runs_s"]) == 3
    assert out["solve_solo_s"] == sorted(out["solve_solo_runs_s"])[1]


@pytest.mark.skipif(not _has("pyspiel"), reason="needs OpenSpiel")
def test_holdem_batch_on_boards_of_their_own_equals_the_spots_alone(tmp_path):
    """`--boards`: each spot on a random board of its own, the batch dealing the union of their
    hands; after 20 float64 iterations each spot's exploitability is its solo run's."""
    import holdem_batch

    holdem_batch.main(["--boards", "--spots", "3", "--iterations", "20", "--ranks", "AKQJT9", "--suits", "shd",
                       "--dtype", "float64", "--threads", "1", "--no-readme", "--out", str(tmp_path)])
    out = json.load(open(tmp_path / "holdem-boards.json"))
    assert len(set(out["boards"])) == 3 and out["hands"][0] > 78  # more hands than any one board leaves
    assert all(abs(x - y) <= 1e-9 for x, y in zip(out["percent_pot"], out["percent_pot_solo"]))


def test_peers_curve_runs_the_same_cfr_plus_as_openspiel(tmp_path):
    """The README's picture compares like with like: tensorcfr's cfr+ curve and OpenSpiel's
    CFRPlusSolver's are the same iterates (alternating, linear averaging) on Kuhn, so their
    exploitabilities agree at every common iteration to rounding."""
    pytest.importorskip("pyspiel", reason="open-spiel is not installed (pip install -e '.[bench]')")
    import peers_curve

    assert peers_curve.main(["--game", "kuhn", "--algo", "cfr+", "--seconds", "0.05", "--out", str(tmp_path),
                             "--no-docs"]) == 0
    data = json.load(open(tmp_path / "peers_curve.json"))
    by = {c["solver"]: {it: e for it, _, e in c["points"]} for c in data["curves"]}
    ours, theirs = by["tensorcfr cfr+"], by["OpenSpiel C++ CFR+"]
    common = sorted(set(ours) & set(theirs))
    assert common[:3] == [1, 2, 3] and ours[1] == pytest.approx(11 / 24, abs=1e-12)  # uniform play's exploitability
    assert max(abs(ours[i] - theirs[i]) for i in common) < 1e-12
    assert "| tensorcfr cfr+ |" in (tmp_path / "peers_curve.md").read_text()


def test_leaderboard_finds_where_each_target_is_first_met(tmp_path):
    import leaderboard

    leaderboard.main(["--games", "kuhn", "--rules", "cfr+", "pdcfr+", "--iterations", "300", "--seconds", "60",
                      "--no-readme", "--out", str(tmp_path)])
    data = json.load(open(tmp_path / "leaderboard.json"))
    for rule in ("cfr+", "pdcfr+"):
        rows, s = data["curves"]["kuhn"][rule], data["results"]["kuhn"][rule]
        assert rows[0]["iteration"] == 1 and [r["iteration"] for r in rows] == sorted({r["iteration"] for r in rows})
        for t in leaderboard.TARGETS:
            for which, key in (("average", "nash_conv"), ("last", "nash_conv_current")):
                hit = s[f"{which}_{t:g}"]
                met = [r for r in rows if r[key] <= t]
                assert (hit is None) == (not met)
                if hit:  # the first evaluation at or below the target, and none before it
                    assert hit["iteration"] == met[0]["iteration"]
                    assert all(r[key] > t for r in rows if r["iteration"] < hit["iteration"])
    # pdcfr+ reaches 1e-6 on Kuhn within 300 iterations (79 measured), then stops: nothing left to measure
    assert data["results"]["kuhn"]["pdcfr+"]["average_1e-06"] is not None
    assert data["results"]["kuhn"]["pdcfr+"]["iterations"] < 300
    md = open(tmp_path / "leaderboard.md").read()
    assert "| kuhn | pdcfr+ |" in md and (tmp_path / "leaderboard.png").exists()


def test_card_stack_times_both_and_the_runs_agree(tmp_path):
    """experiments/card_stack.py on a small Rhode Island: the stacked solver has fewer groups
    and operations an iteration, and its exploitability after the same iterations is the
    groups-alone solver's (the same sums in another order)."""
    import card_stack

    out = tmp_path / "stack.json"
    card_stack.main(["--games", "rhode_island(ranks='JQKA', suits='sh')", "--dtype", "float64", "--iterations", "2",
                     "--repeats", "2", "--out", str(out)])
    (row,) = json.loads(out.read_text())
    alone, stacked = row["alone"], row["stacked"]
    assert sum(stacked["groups_a_player"]) < sum(alone["groups_a_player"])
    assert stacked["operations"] < alone["operations"]
    assert abs(stacked["nash_conv"] - alone["nash_conv"]) <= 1e-9 * max(1.0, alone["nash_conv"])
    assert row["iterations"] == 3 + 2 * 2


def test_a_suite_stopped_by_its_limit_has_named_its_failures(tmp_path):
    """`experiments/gpu_session.sh suite` sets TENSORCFR_TEST_FAILURES: each failure's traceback
    is in that file as soon as the test fails, under pytest-xdist too, before pytest's summary
    (which a run killed at its time limit never prints: twice on a lent H100, 2026-11-27)."""
    import subprocess

    (tmp_path / "test_two.py").write_text("def test_passes():\n    pass\n\n"
                                          "def test_fails():\n    assert 1 + 1 == 3, 'arithmetic'\n")
    log = tmp_path / "failures.log"
    env = {**os.environ, "TENSORCFR_TEST_FAILURES": str(log), "PYTHONPATH": os.path.dirname(__file__)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "conftest", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_two.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    text = log.read_text()
    assert text.startswith("== test_two.py::test_fails (call, ") and "AssertionError: arithmetic" in text
    # once: not by the worker and again by the controller
    assert "test_passes" not in text and text.count("== test_two.py") == 1


def test_the_gpu_sessions_profile_and_determinism_run_on_the_cpu(tmp_path):
    """`gpu_profile.py` and `gpu_checks.py`'s determinism section, which a GPU session runs with
    its minutes counted, run here on the CPU (eager): a row per game, form and setting, the
    profile's JSON written, deterministic runs equal bit for bit."""
    import gpu_checks
    import gpu_profile

    from tensorcfr.spaces import public

    gpu_profile.main(["--device", "cpu", "--games", "kuhn", "--forms", "generic", "public", "--iterations", "2",
                      "--deterministic", "--out", str(tmp_path)])
    rows = json.load(open(tmp_path / "gpu_profile.json"))["rows"]
    assert [(r["form"], r["deterministic"]) for r in rows] == [("generic", False), ("generic", True),
                                                              ("public", False), ("public", True)]
    # the public form's three ways of adding rows, a row each (`--rows all`), the settings restored
    shipped = public.ROWS_DEVICES, public.MATRIX_DEVICES
    gpu_profile.main(["--device", "cpu", "--games", "kuhn", "--forms", "generic", "public", "--iterations", "2",
                      "--rows", "all", "--out", str(tmp_path), "--name", "rows.json"])
    rows = json.load(open(tmp_path / "rows.json"))["rows"]
    assert [(r["form"], r["rows"]) for r in rows] == [("generic", "shipped"), ("public", "scatter"),
                                                      ("public", "index"), ("public", "matrix")]
    assert (public.ROWS_DEVICES, public.MATRIX_DEVICES) == shipped
    assert all(r["ms_none"] > 0 and r["kernels"] and r["capture_used_none"] == "none" for r in rows)
    row = gpu_checks.determinism([("kuhn", "generic")], 2, device="cpu")[0]
    assert row["deterministic_repeats_bitwise"] and row["default_repeats_bitwise"] and row["cost"] > 0


def test_the_gpu_sessions_profile_times_the_iteration_compiled(tmp_path):
    """`gpu_profile.py --compile` (the river step of a GPU session) times each row compiled too,
    against the floor; on the CPU here."""
    import gpu_profile
    from test_capture import needs_compiler

    needs_compiler("cpu")
    gpu_profile.main(["--device", "cpu", "--games", "kuhn", "--forms", "generic", "--iterations", "2", "--compile",
                      "--out", str(tmp_path)])
    row = json.load(open(tmp_path / "gpu_profile.json"))["rows"][0]
    assert row["capture_used_compile"] == "compile" and 0 < row["ms_compile"] and row["x_floor_compile"] > 0


def test_the_path_table_launches_fewer_kernels_than_the_level_loop(tmp_path):
    """`gpu_profile.py --paths both` counts the kernels an iteration launches with and without the
    launch-bound passes (the CPU runs torch's passes under the counter, as a GPU does), in the
    blocks of 4 iterations a CUDA graph records: player 0's plan made once an iteration but at
    a block's start, 2.25 plans an iteration. On Leduc (L = 4 levels a player): a plan from the
    path table, a gather and a running product against a fill and a gather and a product a level,
    2L + 1 - 2 = 7 fewer; the regrets' bottom-up pass up the paths and the infosets' sums, 7
    kernels against the level loop's 12 (zeros, a product and two adds a level but the top's one),
    a player; the average's multiply and add in one kernel, 2 plans averaged an iteration."""
    import gpu_profile

    gpu_profile.main(["--device", "cpu", "--games", "leduc", "--forms", "generic", "--iterations", "1",
                      "--paths", "both", "--out", str(tmp_path)])
    rows = json.load(open(tmp_path / "gpu_profile.json"))["rows"]
    ops = {r["paths"]: r["ops"] for r in rows}
    plans = 2.25
    assert ops[False] - ops[True] == plans * 7 + 2 * 5 + 2 * 1
    counts = {r["paths"]: r["op_counts"] for r in rows}
    fewer = lambda op: counts[False].get(op, 0) - counts[True].get(op, 0)  # noqa: E731
    assert fewer("index_select") == plans * (4 - 1) - 2 and fewer("fill_") == plans  # (the pass up: a gather)
    assert fewer("cumprod") == -plans - 2 and fewer("index_add_") == 2 * (7 - 2)  # (the sums: one each)
    assert fewer("addcmul_") == -2 and fewer("add_") == 2


def test_the_form_rule_ladder_runs_and_says_what_auto_takes(tmp_path):
    """`form_rule.py` (on the CPU here; a GPU session runs it with --device cuda): a row per game
    with both forms' times, what `choose` takes for that device, written after each game."""
    import form_rule

    form_rule.main(["--games", "kuhn", "dudo(4,1,1)", "--blocks", "1", "--seconds", "0.05", "--out", str(tmp_path)])
    out = json.load(open(tmp_path / "form_rule.json"))
    assert out["device"] == "cpu" and [r["game"] for r in out["rows"]] == ["kuhn", "dudo(4,1,1)"]
    assert all(r["auto"] == "generic" and r["generic_ms"] > 0 and r["public_ms"] > 0 for r in out["rows"])


def test_the_profile_counts_a_card_game_as_a_gpu_runs_it(monkeypatch):
    """`gpu_profile.as_on_a_gpu` on the CPU: a hold'em river spot's card kernels untransposed and
    their gathers merged, as on a GPU (`cards.TRANSPOSED_DEVICES`, `MERGED_ENTRIES`): each merged
    showdown call launches one join and one gather where its 9 separate gathers were, 7 fewer."""
    import gpu_profile
    import tensorcfr.operators.cards as cards

    monkeypatch.setattr(cards, "DENSE_KERNEL_PAIRS", 0)  # prefix-sum kernels, not the dense ones few hands take
    cg = tensorcfr.compile("holdem_river(board=AsKhQsJh9s, ranks=AKQJ9, suits=sh)", form="public")
    counts = {}
    for merged in (0, 1 << 18):
        monkeypatch.setattr(cards, "MERGED_ENTRIES", merged)
        with gpu_profile.as_on_a_gpu("cpu"):
            counts[merged] = gpu_profile.count_ops(tensorcfr.Solver(cg, "cfr+", device="cpu", capture="static",
                                                                    updates="alternating")).ops
    joins = counts[1 << 18]["cat"] - counts[0].get("cat", 0)
    assert joins > 0 and sum(counts[0].values()) - sum(counts[1 << 18].values()) == 7 * joins
    assert cards.TRANSPOSED_DEVICES == ("cpu",)  # (restored)


def test_a_gpu_suite_can_keep_only_the_cuda_cases():
    """TENSORCFR_TEST_DEVICES=cuda (`gpu_session.sh suite`) collects the CUDA case of each test
    that takes a device and none of its CPU cases; unset, both. (The variable is taken out of the
    environment the subprocesses inherit: a GPU session's suite runs with it set.)"""
    import subprocess

    def collected(**env):
        inherited = {k: v for k, v in os.environ.items() if k != "TENSORCFR_TEST_DEVICES"}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "--collect-only",
                               os.path.join(os.path.dirname(__file__), "test_known_values.py")],
                              capture_output=True, text=True, env={**inherited, **env})
        return [line for line in done.stdout.splitlines() if "::" in line]
    both, cuda = collected(), collected(TENSORCFR_TEST_DEVICES="cuda")
    assert len(both) == 2 * len(cuda) > 0
    assert all(t.endswith("[cuda]") for t in cuda) and {t for t in both if t.endswith("[cuda]")} == set(cuda)
