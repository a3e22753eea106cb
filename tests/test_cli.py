"""The command line: the issue's done-when commands, JSON keys, bad input, TensorBoard tags."""

import json

import pytest
from cli_run import cli as run  # in this process: `main` as the console script calls it


def test_solve_kuhn_json():
    r = run("solve", "kuhn", "--algo", "cfr+", "--iterations", "1000", "--json", "--device", "cpu")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for key in ("game", "algorithm", "iterations", "exploitability", "nash_conv", "game_value", "seconds", "device"):
        assert key in out
    assert out["iterations"] == 1000 and out["exploitability"] < 1e-3
    assert abs(out["game_value"] + 1 / 18) < 1e-3
    assert out["nash_conv"] == pytest.approx(2 * out["exploitability"])


def test_solve_leduc_json():
    r = run("solve", "leduc", "--algo", "cfr+", "--iterations", "1000", "--json")
    out = json.loads(r.stdout)
    assert out["exploitability"] < 1e-3 and abs(out["game_value"] + 0.0856) < 2e-3


def test_capture_static_gives_the_eager_result():
    outs = [json.loads(run("solve", "leduc", "--algo", "dcfr", "--iterations", "200", "--json", "--device", "cpu",
                           *extra).stdout) for extra in ([], ["--capture", "static"])]
    assert outs[0]["exploitability"] == outs[1]["exploitability"] and outs[1]["config"]["capture"] == "static"
    r = run("solve", "kuhn", "--capture", "cuda-graph", "--device", "cpu")
    assert r.returncode == 2 and "needs a CUDA device" in r.stderr


def test_info_leduc_json():
    out = json.loads(run("info", "leduc", "--json").stdout)
    assert (out["histories"], out["terminals"], out["infosets"], out["sequences"]) == (9457, 5520, [468, 468], [1092, 1092])
    assert out["levels"] == 12


def test_text_output_prints_config_then_one_line_per_evaluation():
    r = run("solve", "kuhn", "--algo", "cfr", "--iterations", "30", "--eval-every", "10", "--updates", "alternating")
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("tensorcfr solve:") and "updates=alternating" in lines[0]
    assert [int(l.split()[0]) for l in lines[2:]] == [10, 20, 30]


@pytest.mark.parametrize("args, message", [
    (["solve", "nosuchgame"], "unknown game 'nosuchgame'; available: kuhn, leduc"),
    (["solve", "kuhn", "--algo", "nosuchalgo"], "unknown algorithm 'nosuchalgo'"),
    (["solve", "kuhn", "--updates", "sideways"], "invalid choice: 'sideways'"),
    (["solve", "kuhn", "--iterations", "0"], "expected a positive integer"),
    (["solve", "kuhn", "--iterations", "-5"], "expected a positive integer"),
    (["solve", "kuhn", "--dtype", "float16"], "invalid choice: 'float16'"),
    (["solve", "kuhn(ante=-1)"], "ante must be positive"),
    (["info", "leduc(x=1)"], "bad parameters for leduc"),
    (["solve", "kuhn", "--device", "tpu"], "unknown device 'tpu'"),
    (["info", "dudo(4,2,2)", "--device", "tpu"], "unknown device 'tpu'"),
])
def test_bad_input_is_one_line_exit_2(args, message):
    r = run(*args)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cuda_without_cuda_is_an_error():
    import torch
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    r = run("solve", "kuhn", "--device", "cuda")
    assert r.returncode == 2 and "CUDA is not available" in r.stderr
    # `info --device cuda` (which form a solve there would take) too: one line, not "compiled: no"
    r = run("info", "dudo(4,2,2)", "--device", "cuda")
    assert r.returncode == 2 and "CUDA is not available" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_logdir_writes_tensorboard_scalars(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    r = run("solve", "kuhn", "--algo", "cfr+", "--iterations", "20", "--eval-every", "5", "--logdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("kuhn__cfr+__0__")
    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in ("exploitability/average", "exploitability/current", "nash_conv/average", "value/average",
                "regret/max_p0", "perf/ms_per_iteration"):
        assert tag in tags
    assert [e.step for e in acc.Scalars("exploitability/average")] == [5, 10, 15, 20]


def test_ftrl_and_oftrl_report_average_and_current():
    r = run("solve", "kuhn", "--algo", "ftrl", "oftrl", "--iterations", "2000", "--eval-every", "1000", "--json",
            "--device", "cpu")
    assert r.returncode == 0, r.stderr
    runs = json.loads(r.stdout)["runs"]
    assert [x["algorithm"] for x in runs] == ["ftrl", "oftrl"]
    assert [c["iteration"] for c in runs[0]["curve"]] == [c["iteration"] for c in runs[1]["curve"]] == [1000, 2000]
    for x in runs:
        assert x["exploitability"] < 1e-2 and x["config"]["eta"] == 2.0
    assert runs[1]["exploitability_current"] < 1e-3  # the optimistic last iterate converges
    assert runs[0]["exploitability_current"] > 1e-2  # plain FTRL's last iterate cycles


def test_ftrl_flags_and_batched_step_sizes():
    r = run("solve", "kuhn", "--algo", "oftrl(eta=(1,2,4))", "--weights", "farina21", "--iterations", "20", "--json")
    out = json.loads(r.stdout)
    assert out["config"]["weights"] == "farina21"
    assert [m["member"] for m in out["members"]] == ["kuhn eta=1", "kuhn eta=2", "kuhn eta=4"]
    r = run("solve", "kuhn", "--algo", "cfr+", "--eta", "2")
    assert r.returncode == 2 and "unknown option(s) ['eta'] for cfr+" in r.stderr


def test_version_and_every_flag_has_help_with_its_default():
    import tensorcfr
    from tensorcfr.cli.parser import build_parser

    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"tensorcfr {tensorcfr.__version__}"
    parser = build_parser()
    subs = parser._subparsers._group_actions[0].choices
    for name, sub in subs.items():
        sub.format_help()  # every help string formats (a stray % would raise)
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings[0]} has no help text"
    solve = subs["solve"].format_help()
    assert "(default: 1000)" in solve and "(default: float64)" in solve, solve


def test_a_batch_header_names_its_count_and_long_names_are_cut():
    """The header line of a batch of four shows its count, first and last; a hold'em spot whose
    range runs to thousands of characters is named in 120 on each line, whole in the JSON."""
    r = run("solve", "kuhn(ante=1)", "kuhn(ante=2)", "kuhn(ante=3)", "kuhn(ante=4)", "--iterations", "5", "--no-log")
    assert r.returncode == 0, r.stderr
    assert "batch=[4 games: 'kuhn', ..., 'kuhn(ante=4)']" in r.stdout.splitlines()[0]
    rng = ",".join(f"{a}{b}s:0.{i + 1}" for i, (a, b) in enumerate(zip("AKQJT98765", "KQJT987654")))
    spots = [f"holdem_river(board=Ks7d2c9h4s, pot={p}, stack={10 * p}, range0='{rng}', range1='AA,KK,QQ,{rng}')"
             for p in (10, 20)]
    r = run("solve", *spots, "--iterations", "3", "--no-log")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines[0]) < 1000 and lines[0].count("...") == 3  # the game and both members, cut
    members = [line for line in lines if ": exploitability" in line and line.startswith("  ")]
    assert len(members) == 2 and all(len(line.split(": exploitability")[0].strip()) == 120 for line in members)
    out = json.loads(run("solve", *spots, "--iterations", "3", "--no-log", "--json").stdout)
    assert [len(m["member"]) > 120 for m in out["members"]] == [True, True]


def test_an_argument_file_stands_for_its_lines(tmp_path):
    """`@FILE` gives the specs of a batch a line each (a thousand spots with ranges are past what
    a command line holds): blank lines and # comments skipped, the same run as the specs named."""
    specs = tmp_path / "specs.txt"
    specs.write_text("# two antes\nkuhn(ante=1)\n\n   kuhn(ante=2)  \n")
    named = json.loads(run("solve", "kuhn(ante=1)", "kuhn(ante=2)", "--iterations", "20", "--no-log", "--json").stdout)
    read = json.loads(run("solve", f"@{specs}", "--iterations", "20", "--no-log", "--json").stdout)
    assert [m["member"] for m in read["members"]] == [m["member"] for m in named["members"]] == ["kuhn", "kuhn(ante=2)"]
    assert read["exploitability"] == named["exploitability"]
    r = run("solve", f"@{tmp_path / 'missing.txt'}")
    assert r.returncode == 2 and r.stderr.startswith("tensorcfr: error:") and "missing.txt" in r.stderr
