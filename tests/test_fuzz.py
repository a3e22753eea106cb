"""A seeded fuzz of the command line (issue 21): command lines built from valid and invalid
specs and options, damaged policy files and edited run.json files, each run in-process through
the CLI's entry point. Every case ends with exit 0, or with exit 2 and one line of error on
stderr: never a traceback, never a hang (each case under an alarm), within a memory bound."""

import json
import os
import random
import resource
import signal

import pytest

from tensorcfr.cli.commands import main

GAMES = ["kuhn", "leduc", "ocp(3)", "dudo(3,1,1)", "liars_dice(faces=3)", "random(seed=2)", "rps",
         "kuhn(ante=2)", "nope", "kuhn(", "kuhn(ante=-1)", "kuhn(ante='x')", "kuhn(ante=(1,2))", "ocp(1)",
         "dudo(100,5,5)", "domino(9,9)", "ocp(1000000000)", "", "leduc(x=1)", "random(seed=-1)"]
ALGOS = ["cfr", "cfr+", "dcfr", "lcfr", "pcfr+", "ftrl", "oftrl", "rm", "rm+", "dcfr(alpha=2)", "dcfr(alpha=())",
         "oftrl(eta=0)", "cfr+(delay=2)", "cfr+(delay=-1)", "zzz", "dcfr(1.5)", "cfr+(", "oftrl(eta=(1,2))"]
NUMBERS = ["1", "0", "-1", "2.5", "nan", "inf", "-inf", "1e308", "1e-308", "x", "", "3", "0.5", "1e999"]
OPTIONS = {"--alpha": NUMBERS, "--beta": NUMBERS, "--gamma": NUMBERS, "--eta": NUMBERS, "--delay": NUMBERS,
           "--eval-every": NUMBERS, "--time-limit": NUMBERS + ["1m", "2h", "-3s"], "--target-exploitability": NUMBERS,
           "--updates": ["simultaneous", "alternating", "both"], "--averaging": ["uniform", "linear", "power", "x"],
           "--weights": ["unit", "kroer17", "farina21", "x"], "--dtype": ["float32", "float64", "float16"],
           "--device": ["cpu", "cuda", "tpu", "auto"], "--capture": ["none", "static", "graph"],
           "--max-histories": ["10", "100000", "0", "-5", "x"], "--max-memory": ["auto", "none", "1G", "10M", "x"],
           "--mu": NUMBERS, "--runs": ["1", "2", "0", "x"], "--checkpoint-every": NUMBERS}
ALARM_SECONDS = 20
MEMORY_BOUND = 3 << 30  # bytes of peak resident memory for the whole fuzz


def run_case(capsys, argv: list[str]) -> tuple[int, str]:
    def too_slow(signum, frame):
        raise TimeoutError(f"no answer within {ALARM_SECONDS} s: {argv}")
    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(ALARM_SECONDS)
    try:
        code = main(argv)
    except SystemExit as e:  # argparse
        code = e.code
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return code, capsys.readouterr().err.strip()


def check(code, err, argv):
    assert code in (0, 2), (code, argv, err)
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("tensorcfr: error:"), (argv, err)
    assert "Traceback" not in err, (argv, err)


def command_lines(rng: random.Random, n: int):
    for _ in range(n):
        argv = [rng.choice(["solve", "solve", "info"]), rng.choice(GAMES)]
        if argv[0] == "solve":
            argv += ["--algo", rng.choice(ALGOS), "--iterations", rng.choice(["5", "20", "0", "-2", "x"]), "--no-log"]
            for opt in rng.sample(sorted(OPTIONS), rng.randint(0, 3)):
                argv += [opt, rng.choice(OPTIONS[opt])]
            if argv[2:].count("--device") and "cuda" in argv:
                argv[argv.index("cuda")] = "cpu"  # CUDA, where present, is not what this fuzz is about
        yield argv


def test_fuzzed_command_lines(capsys):
    rng = random.Random(20261122)
    for argv in command_lines(rng, 200):
        code, err = run_case(capsys, argv)
        check(code, err, argv)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 < MEMORY_BOUND


JUNK = [None, "x", -1, 1e308, [], {}, [1, 2], {"a": 1}, True, float("nan"), "", 0]


def mutate(rng: random.Random, value, depth: int = 0):
    """One random damage somewhere inside a JSON value (in place where it is a container)."""
    if isinstance(value, dict) and value and depth < 4:
        key = rng.choice(sorted(value))
        roll = rng.random()
        if roll < 0.2:
            del value[key]
        elif roll < 0.4:
            value[key] = rng.choice(JUNK)
        else:
            value[key] = mutate(rng, value[key], depth + 1)
        return value
    if isinstance(value, list) and value and depth < 4:
        i = rng.randrange(len(value))
        value[i] = mutate(rng, value[i], depth + 1) if rng.random() < 0.5 else rng.choice(JUNK)
        return value
    return rng.choice(JUNK)


def test_fuzzed_policy_files(capsys, tmp_path):
    rng = random.Random(7)
    assert main(["solve", "kuhn", "--iterations", "10", "--no-log", "--save-policy", str(tmp_path / "good.json"),
                 "--json"]) == 0
    capsys.readouterr()
    good = (tmp_path / "good.json").read_text()
    for k in range(60):
        path = tmp_path / f"p{k}.json"
        if k % 4 == 0:  # bytes cut or flipped
            raw = bytearray(good.encode())
            cut = rng.randrange(len(raw))
            raw = raw[:cut] if k % 8 == 0 else raw[:cut] + bytes([rng.randrange(256)]) + raw[cut + 1:]
            path.write_bytes(bytes(raw))
        else:
            path.write_text(json.dumps(mutate(rng, json.loads(good))))
        code, err = run_case(capsys, ["eval", "kuhn", str(path)])
        check(code, err, ["eval", path.read_bytes()[:200]])


def test_fuzzed_run_files(capsys, tmp_path):
    rng = random.Random(11)
    assert main(["solve", "kuhn", "--algo", "dcfr", "--iterations", "10", "--logdir", str(tmp_path / "runs"),
                 "--json"]) == 0
    run_dir = json.loads(capsys.readouterr().out)["run_dir"]
    path = os.path.join(run_dir, "run.json")
    good = open(path).read()
    for _ in range(40):
        with open(path, "w") as f:
            json.dump(mutate(rng, json.loads(good)), f)
        code, err = run_case(capsys, ["resume", run_dir, "--iterations", "12", "--json"])
        check(code, err, ["resume", open(path).read()[:300]])
        capsys.readouterr()
        with open(path, "w") as f:  # each edit on a good file
            f.write(good)


@pytest.mark.parametrize("content", [b"", b"tensorcfr-checkpoint 1\n", b"\x00" * 100,
                                     b"tensorcfr-checkpoint 1\nabc\n3\nxyz"])
def test_garbage_checkpoints(capsys, tmp_path, content):
    assert main(["solve", "kuhn", "--iterations", "10", "--logdir", str(tmp_path), "--json"]) == 0
    run_dir = json.loads(capsys.readouterr().out)["run_dir"]
    with open(os.path.join(run_dir, "checkpoint.pt"), "wb") as f:
        f.write(content)
    code, err = run_case(capsys, ["resume", run_dir])
    assert code == 2 and len(err.splitlines()) == 1
