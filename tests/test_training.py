"""`train`'s evaluation schedules and stop rules: evaluations where the schedule says, a stop
where the rule says, and a run cut short and continued from its loop state that evaluates where
an unbroken one does."""

import json

import pytest

import tensorcfr
from tensorcfr.cli import main
from tensorcfr.run.training import Every, LogSpaced, Trend, schedule


def test_log_spaced_evaluations():
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    rows = tensorcfr.train(s, 100, eval_every="log")
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 32, 40, 50, 63, 79, 100]


def test_the_trend_places_evaluations_and_the_target_stops_the_run():
    """With a target and no eval_every the evaluations follow `Trend`: each at most twice the last
    gap after it, and none more than 5% past where the power law through the last two meets the
    target; the run stops at the first evaluation at or below it."""
    target = 1e-3
    s = tensorcfr.Solver("leduc", "cfr+", device="cpu")
    rows = tensorcfr.train(s, 5000, target_exploitability=target)
    its = [r["iteration"] for r in rows]
    assert rows.stopped == "target" and rows[-1]["exploitability"] <= target < rows[-2]["exploitability"]
    trend = Trend(target)
    for k in range(len(its) - 1):  # replayed: every point where the rule put it
        assert its[k + 1] == trend.next(its[k], [(r["iteration"], r["exploitability"]) for r in rows[:k + 1]])
    assert len(rows) <= 8 and its[-1] < 1000  # Leduc, CFR+: 1e-3 at about 500 iterations; every tenth: 10 evaluations


@pytest.mark.parametrize("stop_on, key", [("current", "exploitability_current"), ("average", "exploitability")])
def test_the_stop_rule_reads_the_profile_it_names(stop_on, key):
    def run(rule):  # OFTRL on Kuhn: both its last iterate and its average converge
        return tensorcfr.train(tensorcfr.Solver("kuhn", "oftrl", device="cpu"), 5000, eval_every=50,
                               target_exploitability=1e-3, stop_on=rule)

    rows, either = run(stop_on), run("either")
    assert rows.stopped == "target" and rows[-1][key] <= 1e-3 < rows[-2][key]
    assert either[-1]["iteration"] <= rows[-1]["iteration"]
    assert min(either[-1]["exploitability"], either[-1]["exploitability_current"]) <= 1e-3


def test_a_run_continued_from_its_loop_state_evaluates_where_an_unbroken_one_does():
    straight = tensorcfr.train(tensorcfr.Solver("leduc", "dcfr", device="cpu"), 2000, target_exploitability=1e-3)
    s = tensorcfr.Solver("leduc", "dcfr", device="cpu")
    saved = {}
    first = tensorcfr.train(s, 2000, target_exploitability=1e-3, checkpoint=lambda st: saved.update(st),
                            should_stop=lambda: s.iteration >= 100)  # stopped as Ctrl-C stops the CLI
    assert first.stopped == "interrupted" and saved["next_eval"] > s.iteration >= 100
    resumed = tensorcfr.train(s, 2000 - s.iteration, target_exploitability=1e-3, loop_state=saved)
    assert [r["iteration"] for r in resumed] == [r["iteration"] for r in straight]
    assert resumed[-1]["exploitability"] == straight[-1]["exploitability"]


def test_checkpoints_by_solving_time():
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    calls = []
    tensorcfr.train(s, 200, eval_every=100, checkpoint=calls.append, checkpoint_seconds=0)
    assert len(calls) > 2  # every chunk of steps, and the end


def test_bad_schedules_and_stop_rules_are_named():
    with pytest.raises(tensorcfr.TensorCFRError, match="eval_every='trend'.*target"):
        schedule("trend", 100, None)
    with pytest.raises(tensorcfr.TensorCFRError, match="eval_every"):
        schedule(0, 100, None)
    with pytest.raises(tensorcfr.TensorCFRError, match="stop_on must be one of average, current, either"):
        tensorcfr.train(tensorcfr.Solver("kuhn", device="cpu"), 10, stop_on="best")
    with pytest.raises(tensorcfr.TensorCFRError, match="log:N with N a whole number"):
        schedule("log:0", 100, None)
    assert isinstance(schedule(7, 100, None), Every) and isinstance(schedule("log", 100, None), LogSpaced)
    # the default: log-spaced from iteration 1, 30 points or more, the CLI's and the library's alike
    default = schedule(None, 100, None)
    assert isinstance(default, LogSpaced) and default.points(100)[:3] == [1, 2, 3] and len(default.points(100)) >= 30
    assert schedule("log:20", 100, None).per_decade == 20


def test_the_cli_evaluates_by_the_trend_under_a_target(capsys):
    assert main(["solve", "leduc", "--iterations", "5000", "--target-exploitability", "1e-3", "--json", "--no-log",
                 "--device", "cpu"]) == 0
    out = json.loads(capsys.readouterr().out)
    lib = tensorcfr.train(tensorcfr.Solver("leduc", device="cpu"), 5000, target_exploitability=1e-3)
    assert [r["iteration"] for r in out["curve"]] == [r["iteration"] for r in lib]
    assert out["stopped"] == "target" and out["exploitability"] == lib[-1]["exploitability"]
    assert main(["solve", "kuhn", "--eval-every", "trend", "--iterations", "10", "--no-log"]) == 2
    assert "--target-exploitability" in capsys.readouterr().err


def test_a_run_of_the_old_default_resumes_in_the_form_it_was_compiled_in(tmp_path, capsys):
    """Before the shared rule, `--form auto` took the public form wherever a game had one (Leduc
    too), and run.json did not record the form: such a run resumes in the public form; a run of
    today records its form and resumes in it, whatever the rule says later."""
    from resume_check import resume_equals_straight

    # on the CPU: a CUDA run repeats bit for bit only with --deterministic
    args = ["solve", "leduc", "--algo", "cfr+", "--json", "--logdir", str(tmp_path), "--form", "public", "--device", "cpu"]
    assert main([*args, "--iterations", "20"]) == 0
    run_dir = json.loads(capsys.readouterr().out)["run_dir"]
    info = json.load(open(f"{run_dir}/run.json"))
    info["args"]["form"] = "auto"  # as the old default wrote it
    del info["config"]["form"]
    json.dump(info, open(f"{run_dir}/run.json", "w"))
    resumed, straight = resume_equals_straight(main, capsys, args, run_dir, 40, tmp_path)
    assert resumed["config"]["form"] == straight["config"]["form"] == "public"


def test_the_cli_and_the_library_build_one_run_spec_and_parse_the_algorithm_once(monkeypatch, capsys):
    """`tensorcfr solve` builds the same `RunSpec` as `Solver`'s keywords, and a run parses its
    algorithm spec once (the CLI used to parse it before compiling and the solver again)."""
    from tensorcfr.cli.commands import run_spec
    from tensorcfr.cli.parser import build_parser
    from tensorcfr.run.spec import RunSpec
    from tensorcfr.updates import rules

    args = build_parser().parse_args(["solve", "leduc", "--algo", "dcfr", "--device", "cpu", "--sampling", "chance",
                                      "--samples", "4", "--seed", "3", "--form", "generic", "--max-memory", "8G"])
    cli = run_spec(args, "dcfr", {"alpha": 2.0, "sampling": "chance", "samples": 4})
    lib = RunSpec.of("dcfr", alpha=2.0, device="cpu", sampling="chance", samples=4, seed=3, form="generic",
                     max_memory=8 << 30)
    assert cli == lib and cli.capture == "none"
    calls = []
    real = rules.parse_algorithm
    monkeypatch.setattr(rules, "parse_algorithm", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert main(["solve", "kuhn", "--algo", "dcfr(alpha=2)", "--iterations", "10", "--no-log", "--json"]) == 0
    assert len(calls) == 1
    capsys.readouterr()


def test_settings_that_cannot_go_together_are_refused_before_compiling(monkeypatch):
    import tensorcfr.run.solver as solver_module

    monkeypatch.setattr(solver_module, "compile_game", lambda *a, **k: pytest.fail("compiled first"))
    for kw, message in (({"sampling": "chance", "capture": "static"}, "only eager iterations sample"),
                        ({"sampling": "chance", "distributed": True}, "sample on one process"),
                        ({"sampling": "outcome", "epsilon": 0}, "epsilon"),
                        ({"sampling": "chance", "samples": 0}, "samples must be a whole number"),
                        ({"update_scope": "touched", "sampling": "chance", "algo": "dcfr"}, "exact for cfr and cfr+")):
        algo = kw.pop("algo", "cfr+")
        with pytest.raises(tensorcfr.TensorCFRError, match=message):
            tensorcfr.Solver("leduc", algo, device="cpu", **kw)


def test_the_cli_and_the_library_evaluate_at_the_same_default_points(capsys):
    assert main(["solve", "kuhn", "--iterations", "100", "--json", "--no-log", "--device", "cpu"]) == 0
    out = json.loads(capsys.readouterr().out)
    lib = tensorcfr.train(tensorcfr.Solver("kuhn", device="cpu"), 100)
    assert [r["iteration"] for r in out["curve"]] == [r["iteration"] for r in lib]
    assert len(lib) >= 30 and lib[0]["iteration"] == 1


def test_a_batch_stops_at_its_target_only_when_every_member_meets_it():
    """Two DCFR settings on Kuhn: the first meets exploitability 3e-3 by iteration 100, the
    second (alpha 0.5) only at 450; the run goes on until both have."""
    from tensorcfr.run.training import train

    s = tensorcfr.Solver("kuhn", tensorcfr.make_config("dcfr", alpha=(1.5, 0.5), beta=(0.0, 0.0), gamma=(2.0, 2.0)),
                         device="cpu", dtype="float64")
    rows = train(s, 5000, 50, target_exploitability=3e-3, histograms=False)
    assert rows.stopped == "target"
    first = next(r["iteration"] for r in rows if r["exploitability"] <= 3e-3)  # member 0's
    assert first < s.iteration < 5000
    assert all(x <= 3e-3 for x in s.evaluate()["average"].exploitability.tolist())
