"""Training like a research tool (issue 5): TensorBoard contents, stopping, checkpoints and
bit-identical resume (in-process and through SIGTERM), policy files, eval, play, compare."""

import glob
import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import torch
from cli_run import cli

import tensorcfr
from tensorcfr import normal_form as nf
from tensorcfr.cli.commands import main
from tensorcfr.evaluation import infoset_gaps
from tensorcfr.io.policies import load_policy, save_policy
from tensorcfr.run.checkpoints import load_checkpoint, parse_duration, save_checkpoint
from tensorcfr.run.training import TAGS, Progress, train


def _cli(*args, cwd=None, input=None):
    return cli(*args, cwd=cwd, input=input)  # in this process: `main` as the console script calls it


def _events(run_dir):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(run_dir, size_guidance={"tensors": 0, "scalars": 0, "histograms": 0})
    ea.Reload()
    return ea


def test_event_files_hold_the_promised_tags(tmp_path, capsys):
    assert main(["solve", "kuhn", "--algo", "cfr+", "--iterations", "40", "--eval-every", "20", "--logdir",
                 str(tmp_path), "--track-infosets", "K:pb", "Q:", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    run_dir = out["run_dir"]
    assert os.path.basename(run_dir).startswith("kuhn__cfr+__0__")
    ea = _events(run_dir)
    scalars = set(ea.Tags()["scalars"])
    # (the conditional regrets are the normal-form procedures', the sampled fraction Monte-Carlo runs')
    assert set(TAGS) - {"regret/conditional_p0", "regret/conditional_p1", "perf/sampled_fraction"} <= scalars
    assert {"strategy/K:pb/bet/average", "strategy/K:pb/pass/current", "strategy/Q:/bet/average"} <= scalars
    assert [e.step for e in ea.Scalars("exploitability/average")] == [20, 40]
    assert ea.Scalars("exploitability/average")[-1].value == pytest.approx(out["exploitability"], rel=1e-6)
    assert {"histogram/regret_p0", "histogram/regret_p1", "histogram/infoset_exploitability_p0",
            "histogram/infoset_exploitability_p1"} <= set(ea.Tags()["histograms"])
    text = ea.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert '"algorithm": "cfr+"' in text
    assert "_hparams_/experiment" in ea.PluginTagToContent("hparams")
    # tracked strategies are the solver's own numbers at each evaluation
    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    for event in ea.Scalars("strategy/K:pb/bet/average"):
        s.step(event.step - s.iteration)
        assert event.value == pytest.approx(s.average_policy().infoset("K:pb")["bet"], rel=1e-6)
    # and the histograms are those of the solver's own arrays (the regrets over t, counted as the
    # loop divides them, and the infoset gaps) as float32, in TensorBoard's buckets
    from torch.utils.tensorboard.summary import make_histogram

    from tensorcfr.run.histograms import default_bins

    s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
    for step in (20, 40):
        s.step(step - s.iteration)
        own = s.histograms(0, s.evaluate(infoset_gaps=True))
        for name, values in own.items():
            (event,) = [e for e in ea.Histograms(f"histogram/{name}") if e.step == step]
            h, want = event.histogram_value, make_histogram(values.float().double().numpy(), default_bins())
            assert (list(h.bucket), list(h.bucket_limit), h.min, h.max, h.num) == \
                (list(want.bucket), list(want.bucket_limit), want.min, want.max, want.num), (name, step)
    assert json.load(open(os.path.join(run_dir, "run.json")))["algo"] == "cfr+"


def test_unknown_tracked_infoset_is_a_clear_error(tmp_path, capsys):
    assert main(["solve", "kuhn", "--iterations", "10", "--track-infosets", "X:zz", "--no-log"]) == 2
    assert "unknown infoset(s) ['X:zz']" in capsys.readouterr().err


def test_infoset_gaps_sum_to_each_players_best_response_gain():
    for spec in ["leduc", "random(seed=3)", "dudo(3,1,1)"]:
        s = tensorcfr.Solver(spec, "cfr", device="cpu")
        s.step(7)
        pol = s.average_policy()
        gaps, ev = infoset_gaps(s.game, pol), tensorcfr.evaluate(s.game, pol)
        assert min(g.min().item() for g in gaps) >= -1e-12
        assert (gaps[0].sum() + gaps[1].sum()).item() == pytest.approx(ev.nash_conv.item(), abs=1e-12)


BATCHED_DCFR = "dcfr(alpha=(1,1.5,2),beta=(0,0,0),gamma=(2,2,2))"


@pytest.mark.parametrize("spec,form,algo", [
    ("leduc", "generic", "dcfr"), ("leduc", "public", "dcfr"), ("random(seed=3)", "generic", "dcfr"),
    ("holdem_river(board=Ks7d2c9h4s, pot=10, stack=20, bets=(1,), cap=1, range0='AA,KK,T9s,72o', "
     "range1='QQ,AK,98s')", "public", "dcfr"),
    (["kuhn", "kuhn(ante=2)"], "generic", "dcfr"),  # a batch of games
    ("leduc", "public", BATCHED_DCFR), ("leduc", "generic", BATCHED_DCFR)])  # a batch of settings on one game
def test_an_evaluations_infoset_gaps_are_the_histograms_own(spec, form, algo):
    # the training loop asks the evaluation for the average's gaps and hands them to histograms:
    # the same numbers, bit for bit, as the gaps made on their own, and the evaluation's other
    # figures those of an evaluation without them
    s = tensorcfr.Solver(spec, algo, form=form, device="cpu")
    s.step(5)
    with_gaps, plain = s.evaluate(infoset_gaps=True), s.evaluate()
    assert plain["average"].infoset_gaps is None
    for which in ("average", "current"):
        a, b = with_gaps[which], plain[which]
        for f in ("nash_conv", "exploitability", "game_value"):
            assert torch.equal(getattr(a, f), getattr(b, f)), (which, f)
        assert all(torch.equal(x, y) for x, y in zip(a.best_response, b.best_response))
    alone = infoset_gaps(s.game, s.average_policy())
    assert all(torch.equal(x, y) for x, y in zip(with_gaps["average"].infoset_gaps, alone))
    assert alone[0].shape[0] == s.batch_size  # a row a member, each summing to its NashConv
    torch.testing.assert_close(alone[0].sum(1) + alone[1].sum(1), plain["average"].nash_conv, rtol=0, atol=1e-12)
    for member in range(s.batch_size):
        h, h_alone = s.histograms(member, with_gaps), s.histograms(member)
        assert h.keys() == h_alone.keys() and all(torch.equal(h[k], h_alone[k]) for k in h)
        for without in (plain, {}, {"current": with_gaps["current"]}):  # nothing to take: made afresh
            h = s.histograms(member, without)
            assert all(torch.equal(h[k], h_alone[k]) for k in h)


@pytest.mark.parametrize("algo", ["dcfr", "pcfr+", "oftrl", "cfr"])
def test_interrupted_and_resumed_equals_uninterrupted_in_process(algo, device):
    def fresh():  # (deterministic: on CUDA, sums in a fixed order, so the runs agree bit for bit)
        return tensorcfr.Solver("leduc", algo, device=device, deterministic=True)

    straight = fresh()
    rows_straight = train(straight, 300, 50)
    first, saved = fresh(), {}
    calls = iter(range(10**9))
    rows = train(first, 300, 50, checkpoint=lambda st: saved.update(loop=st, solver=first.state_dict()),
                 checkpoint_every=40, should_stop=lambda: next(calls) >= 5)
    assert rows.stopped == "interrupted" and 0 < first.iteration < 300
    resumed = fresh()
    resumed.load_state_dict(saved["solver"])
    rows2 = train(resumed, 300 - resumed.iteration, 50, loop_state=saved["loop"])
    for a, b in zip(straight.state_dict()["average"] + straight.state_dict()["sigma"],
                    resumed.state_dict()["average"] + resumed.state_dict()["sigma"]):
        assert torch.equal(a, b)
    assert [r["iteration"] for r in rows2] == [r["iteration"] for r in rows_straight]
    assert rows2[-1]["exploitability"] == rows_straight[-1]["exploitability"]


def test_sampled_procedure_resumes_with_its_random_stream():
    a = nf.RegretMatching("blotto(5,3)", "invariant-rm", runs=3, seed=9, device="cpu")
    a.step(120)
    b = nf.RegretMatching("blotto(5,3)", "invariant-rm", runs=3, seed=9, device="cpu")
    b.step(50)
    c = nf.RegretMatching("blotto(5,3)", "invariant-rm", runs=3, seed=1, device="cpu")
    c.load_state_dict(b.state_dict())
    c.step(70)
    assert torch.equal(a.Z, c.Z) and all(torch.equal(x, y) for x, y in zip(a.strategy, c.strategy))
    with pytest.raises(tensorcfr.TensorCFRError, match="another procedure"):
        nf.RegretMatching("blotto(5,3)", "sampled-rm", runs=3).load_state_dict(b.state_dict())


def test_sigterm_then_resume_is_bit_identical(tmp_path):
    """A run stopped by SIGTERM mid-way and resumed equals an uninterrupted run bit for bit."""
    args = ["solve", "leduc", "--algo", "dcfr", "--iterations", "12000", "--eval-every", "3000",
            "--checkpoint-every", "100", "--logdir", str(tmp_path / "runs"), "--json", "--device", "cpu"]
    # (on the CPU: 12,000 deterministic iterations take 3 x 46 s on an H100, launch-bound; the
    # in-process resume test and the public-form CLI resume test hold CUDA runs to the bit)
    proc = subprocess.Popen([sys.executable, "-m", "tensorcfr", *args, "--save-policy", str(tmp_path / "a.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not glob.glob(str(tmp_path / "runs" / "*" / "checkpoint.pt")) and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    stopped = json.loads(out)
    assert stopped["stopped"] == "interrupted" and 0 < stopped["iterations"] < 12000  # really mid-way
    assert "tensorcfr resume" in err
    run_dir = stopped["run_dir"]
    r = _cli("resume", run_dir, "--json", "--save-policy", str(tmp_path / "b.json"))
    assert r.returncode == 0, r.stderr
    resumed = json.loads(r.stdout)
    assert resumed["iterations"] == 12000 and resumed["stopped"] == "iterations"
    r = _cli(*args, "--save-policy", str(tmp_path / "c.json"))
    assert r.returncode == 0, r.stderr
    straight = json.loads(r.stdout)
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "c.json").read_bytes()
    a = load_checkpoint(os.path.join(run_dir, "checkpoint.pt"))["solver"]
    b = load_checkpoint(os.path.join(straight["run_dir"], "checkpoint.pt"))["solver"]
    for k in ("sigma", "average"):
        assert all(torch.equal(x, y) for x, y in zip(a[k], b[k]))
    assert all(torch.equal(x["regrets"], y["regrets"]) for x, y in zip(a["state"], b["state"]))
    assert [c["iteration"] for c in resumed["curve"]] == [c["iteration"] for c in straight["curve"]]
    assert resumed["curve"][-1] == straight["curve"][-1]


def test_truncated_or_altered_checkpoint_is_refused(tmp_path, capsys):
    assert main(["solve", "kuhn", "--iterations", "30", "--logdir", str(tmp_path), "--json"]) == 0
    run_dir = json.loads(capsys.readouterr().out)["run_dir"]
    path = os.path.join(run_dir, "checkpoint.pt")
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) - 100])
    assert main(["resume", run_dir]) == 2
    assert "is truncated" in capsys.readouterr().err
    altered = bytearray(data)
    altered[len(data) // 2] ^= 0xFF  # inside the payload
    open(path, "wb").write(bytes(altered))
    with pytest.raises(tensorcfr.TensorCFRError, match="checksum"):
        load_checkpoint(path)
    altered = bytearray(data)
    altered[-10] ^= 0x40  # a digit of the trailer's length
    open(path, "wb").write(bytes(altered))
    with pytest.raises(tensorcfr.TensorCFRError, match="damaged trailer|truncated or padded"):
        load_checkpoint(path)
    assert main(["resume", str(tmp_path / "nowhere")]) == 2
    assert "not a tensorcfr run directory" in capsys.readouterr().err


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, {"iteration": 1})

    def crash(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(tensorcfr.TensorCFRError, match="disk full"):  # one line at the CLI, not a traceback
        save_checkpoint(path, {"iteration": 2})
    assert load_checkpoint(path)["iteration"] == 1  # the old checkpoint survives a failed write


def test_time_limit_and_target_stop_a_run(tmp_path, capsys):
    assert main(["solve", "leduc", "--iterations", "10000000", "--time-limit", "1", "--logdir", str(tmp_path),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stopped"] == "time_limit" and out["iterations"] < 10_000_000
    assert out["curve"][-1]["iteration"] == out["iterations"]  # evaluated where it stopped
    assert os.path.exists(os.path.join(out["run_dir"], "checkpoint.pt"))
    assert main(["solve", "kuhn", "--algo", "cfr+", "--iterations", "100000", "--eval-every", "10",
                 "--target-exploitability", "1e-3", "--no-log", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stopped"] == "target" and out["exploitability"] <= 1e-3 and out["iterations"] < 1000
    with pytest.raises(SystemExit) as e:
        main(["solve", "kuhn", "--time-limit", "soon"])
    assert e.value.code == 2 and "cannot read duration 'soon'" in capsys.readouterr().err


def test_parse_duration():
    assert [parse_duration(t) for t in ("2h", "90m", "45s", "1h30m", "1d", "12.5")] == [7200, 5400, 45, 5400, 86400, 12.5]
    with pytest.raises(tensorcfr.TensorCFRError):
        parse_duration("-3")


@pytest.mark.parametrize("ext", [".json", ".npz"])
def test_policy_files_round_trip(tmp_path, ext, capsys):
    path = str(tmp_path / f"leduc{ext}")
    assert main(["solve", "leduc", "--algo", "dcfr", "--iterations", "50", "--no-log", "--save-policy", path,
                 "--device", "cpu"]) == 0
    capsys.readouterr()
    d = load_policy(path)
    assert d["game"] == "leduc" and int(d["version"]) == 1 and int(d["iteration"]) == 50
    s = tensorcfr.Solver("leduc", "dcfr", device="cpu", form="auto")  # the CLI's default form
    s.step(50)
    assert d["average"] == s.average_policy().to_dict() and d["current"] == s.current_policy().to_dict()
    assert main(["eval", "leduc", path, "--json"]) == 0
    ev = json.loads(capsys.readouterr().out)
    assert ev["exploitability"] == pytest.approx(s.evaluate()["average"].exploitability.item(), abs=1e-12)


def test_npz_policy_is_readable_with_numpy_alone(tmp_path):
    import numpy as np

    cg = tensorcfr.compile("kuhn")
    path = str(tmp_path / "u.npz")
    save_policy(path, "kuhn", {"average": tensorcfr.Policy.uniform(cg).to_dict()},
                players={k: tp.player for tp in cg.treeplexes for k in tp.infoset_keys})
    z = np.load(path)
    i = list(z["infoset_keys"]).index("K:pb")
    a, b = z["offsets"][i], z["offsets"][i + 1]
    assert list(z["action_names"][a:b]) == ["pass", "bet"] and list(z["average"][a:b]) == [0.5, 0.5]
    assert z["player"][i] == 0 and str(z["format"]) == "tensorcfr-policy"


def test_eval_uniform_kuhn_and_a_against_b(tmp_path, capsys):
    cg = tensorcfr.compile("kuhn")
    uniform = str(tmp_path / "uniform.json")
    save_policy(uniform, "kuhn", {"average": tensorcfr.Policy.uniform(cg).to_dict()})
    assert main(["eval", "kuhn", uniform, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nash_conv"] == pytest.approx(11 / 12, abs=1e-12)
    strong = str(tmp_path / "cfr.json")
    assert main(["solve", "kuhn", "--iterations", "500", "--no-log", "--save-policy", strong, "--json"]) == 0
    capsys.readouterr()
    assert main(["eval", "kuhn", strong, uniform, "--json"]) == 0
    ab = json.loads(capsys.readouterr().out)
    from tensorcfr.cli.play import exact_value

    tables = [load_policy(p)["average"] for p in (strong, uniform)]
    assert ab["value_a_as_player1"] == pytest.approx(exact_value(cg, *tables), abs=1e-12)
    assert ab["value_a"] > 0.1  # a near-equilibrium strategy beats uniform play
    # the exact value lies inside play's 95% confidence interval
    assert main(["play", "kuhn", strong, uniform, "--games", "20000", "--seed", "1", "--json"]) == 0
    pl = json.loads(capsys.readouterr().out)
    assert pl["ci95"][0] <= ab["value_a_as_player1"] <= pl["ci95"][1] and pl["ci95_contains_exact"]
    assert pl["ci95"][1] - pl["ci95"][0] < 0.1


def test_policies_that_do_not_fit_are_refused(tmp_path, capsys):
    cg = tensorcfr.compile("kuhn")
    table = tensorcfr.Policy.uniform(cg).to_dict()
    cases = {"missing": ({k: v for k, v in table.items() if k != "K:pb"}, "infoset 'K:pb' is missing"),
             "sum": ({**table, "K:pb": {"pass": 0.5, "bet": 0.6}}, "do not sum to 1"),
             "actions": ({**table, "K:pb": {"pass": 0.5, "raise": 0.5}}, "has actions ['pass', 'raise']")}
    for name, (bad, message) in cases.items():
        path = str(tmp_path / f"{name}.json")
        save_policy(path, "kuhn", {"average": bad})
        assert main(["eval", "kuhn", path]) == 2
        assert message in capsys.readouterr().err
    (tmp_path / "junk.json").write_text('{"hello": 1}')
    assert main(["eval", "kuhn", str(tmp_path / "junk.json")]) == 2
    assert "not a tensorcfr policy file" in capsys.readouterr().err


def test_play_against_a_person_through_stdin(tmp_path):
    cg = tensorcfr.compile("kuhn")
    path = str(tmp_path / "uniform.json")
    save_policy(path, "kuhn", {"average": tensorcfr.Policy.uniform(cg).to_dict()})
    # Kuhn, seat 0: "raise" is refused, "bet" is legal whatever the card, and player 2's answer
    # (pass or bet) ends the game, so the person is asked nothing more.
    r = _cli("play", "kuhn", path, "--seat", "0", "--games", "1", "--seed", "4", input="raise\nbet\n")
    assert r.returncode == 0, r.stderr
    assert "illegal move 'raise'; legal moves: pass, bet" in r.stdout
    assert "your card" in r.stdout and "game over" in r.stdout and "Total after 1 game(s)" in r.stdout
    r = _cli("play", "kuhn", path, input="")  # end of input: a clean exit
    assert r.returncode == 0


def test_compare_writes_one_log_directory_and_a_table(tmp_path):
    r = _cli("compare", "kuhn", "--algo", "cfr", "cfr+", "dcfr", "--iterations", "60", "--eval-every", "20",
             "--logdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "algorithm" in r.stdout and "exploitability" in r.stdout and "(current)" in r.stdout
    parents = os.listdir(tmp_path)
    assert len(parents) == 1 and parents[0].startswith("compare__kuhn")
    runs = sorted(x for x in os.listdir(tmp_path / parents[0]) if x != "compare.json")  # the comparison's own file
    assert runs == ["cfr", "cfr+", "dcfr"]  # TensorBoard's legend names the algorithms, nothing else
    steps = [[e.step for e in _events(str(tmp_path / parents[0] / x)).Scalars("exploitability/average")] for x in runs]
    assert steps == [[20, 40, 60]] * 3  # identical evaluation points, identical tags


def test_tensorboard_is_readable_as_written(tmp_path):
    """What a user sees with no setting touched: log10 curves beside the raw ones, at least 30
    log-spaced points from iteration 1, runs named by algorithm, a Custom Scalars layout that
    overlays the algorithms and puts a tracked infoset's actions on one chart, and hparams."""
    from tensorboard.plugins.custom_scalar import layout_pb2, metadata as cs_metadata
    from tensorboard.plugins.hparams import metadata as hp_metadata

    r = _cli("compare", "kuhn", "--algo", "cfr", "cfr+", "--iterations", "200", "--logdir", str(tmp_path),
             "--track-infosets", "K:pb")
    assert r.returncode == 0, r.stderr
    (parent,) = os.listdir(tmp_path)
    for algo in ("cfr", "cfr+"):
        ea = _events(str(tmp_path / parent / algo))
        raw = ea.Scalars("exploitability/average")
        logged = ea.Scalars("exploitability/log10_average")
        assert [e.step for e in raw][:5] == [1, 2, 3, 4, 5] and len(raw) >= 30 and raw[-1].step == 200
        assert [e.step for e in logged] == [e.step for e in raw]
        assert all(abs(b.value - math.log10(a.value)) < 1e-6 for a, b in zip(raw, logged))
        assert "nash_conv/log10_current" in ea.Tags()["scalars"]
        tensors = ea.Tags()["tensors"]
        assert cs_metadata.CONFIG_SUMMARY_TAG in tensors and hp_metadata.SESSION_START_INFO_TAG in tensors
        proto = layout_pb2.Layout()
        proto.ParseFromString(ea.Tensors(cs_metadata.CONFIG_SUMMARY_TAG)[0].tensor_proto.string_val[0])
        charts = {c.title: list(c.multiline.tag) for cat in proto.category for c in cat.chart}
        assert charts["K:pb (average)"] == ["^strategy/K:pb/[^/]+/average$"]
        assert charts["exploitability, log10 (average)"] == ["^exploitability/log10_average$"]
        actions = [t for t in ea.Tags()["scalars"] if re.match(charts["K:pb (average)"][0], t)]
        assert sorted(actions) == ["strategy/K:pb/bet/average", "strategy/K:pb/pass/average"]


def test_progress_bar_on_a_terminal():
    import io

    stream = io.StringIO()
    bar = Progress(100, stream=stream, enabled=True)
    bar.update(50, 1e-3)
    assert "50/100" in stream.getvalue() and "it/s" in stream.getvalue() and "1.000e-03" in stream.getvalue()
    quiet = io.StringIO()
    Progress(100, stream=quiet).update(50)  # StringIO is not a terminal: nothing
    assert quiet.getvalue() == ""
    bar.close()  # leave=False: the bar is erased, the lines printed around it stay
    assert stream.getvalue().endswith("\r")


def test_the_progress_bar_says_when_a_checkpoint_is_being_saved():
    # the last save (a flop spot's takes seconds) comes after the iterations: the bar stays
    # and says so, then shows the exploitability again after a save mid-run
    import io

    for iterations, saves in ((50, [20, 40, 50]), (40, [20, 40])):  # the last one after the loop; not twice
        stream = io.StringIO()
        bar = Progress(iterations, stream=stream, enabled=True)
        seen = []
        s = tensorcfr.Solver("kuhn", "cfr+", device="cpu")
        train(s, iterations, 10, progress=bar, checkpoint_every=20,
              checkpoint=lambda st, seen=seen, stream=stream: seen.append((st["rows"][-1]["iteration"],
                                                                           stream.getvalue()[-200:])))
        assert [it for it, _ in seen] == saves
        assert all("saving the checkpoint" in shown for _, shown in seen)
    after_first = stream.getvalue().split("saving the checkpoint", 1)[1]
    assert "exploitability" in after_first.split("saving the checkpoint")[0]  # shown again after it
    assert bar.bar is None  # closed once the run is done


@pytest.mark.parametrize("algo", ["dcfr", "oftrl"])
def test_checkpoints_from_before_the_iteration_refactor_still_load(algo):
    """tests/data holds Kuhn solver states after 5 iterations, written by the code of commit
    a0f4fce (before rules got typed states); they load, and 5 more iterations equal 10 straight
    ones of today's code to 1e-12 of each tensor's scale (bit for bit on the CPU that wrote
    them; another CPU's 5 iterations differ from its by an ulp or two, 7e-15 at most)."""
    path = os.path.join(os.path.dirname(__file__), "data", f"kuhn-{algo}-a0f4fce.ckpt")
    resumed = tensorcfr.Solver("kuhn", algo, device="cpu")
    resumed.load_state_dict(load_checkpoint(path)["solver"])
    resumed.step(5)
    straight = tensorcfr.Solver("kuhn", algo, device="cpu")
    straight.step(10)
    a, b = resumed.state_dict(), straight.state_dict()
    assert a["iteration"] == b["iteration"] == 10
    for x, y in zip([*a["sigma"], *a["average"], *(t for st in a["state"] for t in st.values())],
                    [*b["sigma"], *b["average"], *(t for st in b["state"] for t in st.values())]):
        assert float((x - y).abs().max()) <= 1e-12 * max(1.0, float(y.abs().max()))


def _kernel_at_least(major: int, minor: int) -> bool:
    try:
        return tuple(int(x) for x in os.uname().release.split(".")[:2]) >= (major, minor)
    except (AttributeError, ValueError):
        return False


@pytest.mark.skipif(not (sys.platform.startswith("linux") and _kernel_at_least(5, 4)), reason="MADV_PAGEOUT: Linux 5.4+")
def test_a_mapped_checkpoint_is_copied_in_without_staying_resident(tmp_path):
    """`memory.copy_releasing` (what `Solver.load_state_dict` copies with): a 256 MiB tensor
    mapped from a file arrives whole, and at most two 64 MiB chunks of the file stay resident
    (a plain copy leaves all of it: the resume peak of a large game); memory that is not a
    file's is copied plainly."""
    from tensorcfr.memory import RELEASE_CHUNK, copy_releasing

    def resident_file_mib():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("RssFile")) / 1024

    with open("/proc/mounts") as f:  # a file in memory (tmpfs) has no clean pages to hand back
        mounts = [line.split()[1:3] for line in f]
    fstype = max((m for m in mounts if str(tmp_path).startswith(m[0])), key=lambda m: len(m[0]))[1]
    if fstype in ("tmpfs", "ramfs"):
        pytest.skip(f"{tmp_path} is on {fstype}")
    n = 1 << 26  # float32: 256 MiB
    torch.save({"x": torch.arange(n, dtype=torch.float32)}, tmp_path / "state.pt")
    results = {}
    for how in ("plain", "releasing"):
        src = torch.load(tmp_path / "state.pt", mmap=True, weights_only=True)["x"]
        dst = torch.empty(n)
        before = resident_file_mib()
        dst.copy_(src) if how == "plain" else copy_releasing(dst, src)
        results[how] = resident_file_mib() - before
        assert torch.equal(dst, torch.arange(n, dtype=torch.float32))
        del src
    assert results["plain"] > 200 and results["releasing"] <= 2 * RELEASE_CHUNK / 2**20, results
    anon = torch.rand(n)
    dst = torch.empty(n)
    copy_releasing(dst, anon)
    assert torch.equal(dst, anon)


def test_a_checkpoint_is_a_zip_that_loads_mapped_and_the_first_format_still_loads(tmp_path):
    """The trailer rides in the zip's comment: `torch.load` reads the file as it is, and
    `load_checkpoint` maps its tensors from the file (they share no memory with what was
    saved, and equal it); a file of the first format (header, then payload) is still read."""
    import hashlib
    import io
    import zipfile

    from tensorcfr.memory import _in_mapped_file
    from tensorcfr.run.checkpoints import TRAILER_MAGIC, _header

    state = {"solver": {"x": torch.rand(3, 1000, dtype=torch.float64)}, "iteration": 4}
    path = str(tmp_path / "checkpoint.pt")
    save_checkpoint(path, state)
    assert zipfile.ZipFile(path).comment.startswith(TRAILER_MAGIC)
    assert torch.equal(torch.load(path, weights_only=True)["solver"]["x"], state["solver"]["x"])
    loaded = load_checkpoint(path)
    assert loaded["iteration"] == 4 and torch.equal(loaded["solver"]["x"], state["solver"]["x"])
    if sys.platform.startswith("linux"):
        assert _in_mapped_file(loaded["solver"]["x"].data_ptr())
    payload = io.BytesIO()
    torch.save(state, payload)
    body = payload.getvalue()
    old = str(tmp_path / "old.pt")
    with open(old, "wb") as f:
        f.write(_header(hashlib.sha256(body).hexdigest().encode(), len(body)))
        f.write(body)
    again = load_checkpoint(old)
    assert again["iteration"] == 4 and torch.equal(again["solver"]["x"], state["solver"]["x"])


def test_plot_draws_a_comparison_and_refuses_what_is_not_a_run(tmp_path):
    pytest.importorskip("matplotlib")
    r = _cli("compare", "kuhn", "--algo", "cfr", "cfr+", "--iterations", "100", "--logdir", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stderr
    (parent,) = os.listdir(tmp_path / "runs")
    for x in ("iterations", "seconds"):
        out = tmp_path / f"curves-{x}.png"
        r = _cli("plot", str(tmp_path / "runs" / parent), "--out", str(out), "--x", x)
        assert r.returncode == 0, r.stderr
        from matplotlib.image import imread

        img = imread(str(out))  # [H, W, 4]: not blank, and both curves' colours are there
        assert img.shape[0] > 100 and img[..., :3].std() > 0.05
        c0, c1 = (0.12, 0.47, 0.71), (1.0, 0.5, 0.05)  # matplotlib's C0 and C1
        for c in (c0, c1):
            assert (abs(img[..., :3] - c).sum(-1) < 0.1).sum() > 50
    r = _cli("plot", str(tmp_path), "--out", str(tmp_path / "x.png"))
    assert r.returncode == 2 and "is not a run directory" in r.stderr and len(r.stderr.splitlines()) == 1
