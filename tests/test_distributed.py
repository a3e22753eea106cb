"""One game across 2 and 3 processes (torch.distributed, gloo, on the CPU): NashConv and value
equal to one process's to 1e-12 and iterates to 1e-10 (see ITERATE_TOL), every rank's state
equal to the bit, a checkpoint from 2 ranks resumed on 1 and on 3, and a rank that dies
stopping the others with a clear error."""

import os
import time
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

import tensorcfr
from tensorcfr.operators.distributed import bounds, launch_local, shard

CASES = [(game, form, algo) for game, form in [("leduc", "generic"), ("leduc", "public"), ("dudo(4,1,2)", "generic"),
                                               ("dudo(4,1,2)", "public"), ("random(seed=3)", "generic")]
         for algo in ("cfr+", "dcfr", "oftrl")]
ITERATIONS = 25
TOL = 1e-12  # of each number's scale: NashConv and the game value
# of each tensor's scale: the iterates (strategies, averages, the rule's state). A sharded sum
# rounds otherwise than one process's, and regret matching (a ratio of regret sums) amplifies
# that over the iterations: DCFR on Leduc at 3 ranks, 25 iterations, measured on two 2-core
# CPUs: strategies 1.7e-12 and 6.6e-12 apart, regrets 1.55e-12 on the second
ITERATE_TOL = 1e-10


def close(a, b, i):
    """Entry i of a snapshot (iterates [B, S], then NashConv and the value [B]) of one process
    against the ranks'."""
    scale = max(1.0, float(a.abs().max()))
    return float((a - b).abs().max()) <= (TOL if a.dim() == 1 else ITERATE_TOL) * scale


def options(algo):
    # partial sums add in another order than one process's: a regret 0 in exact arithmetic must
    # not turn into a tie broken the other way
    return {} if algo == "oftrl" else {"regret_tolerance": 1e-12}


def snapshot(solver):
    d = solver.state_dict()
    ev = solver.evaluate()["average"]
    return [*d["sigma"], *d["average"], *(t for st in d["state"] for t in st.values()), ev.nash_conv, ev.game_value]


def _worker(rank, world, init, out, task):  # (launch_local passes rank, world, init)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world, timeout=timedelta(seconds=60))
    try:
        if task == "iterates":
            results = {}
            for game, form, algo in CASES:
                # by name: a generic game is compiled as this rank's block only (compile(..., shard=))
                s = tensorcfr.Solver(game, algo, device="cpu", form=form, distributed=True, **options(algo))
                assert (getattr(s.game, "shard", None) == (rank, world)) == (form == "generic")
                s.step(ITERATIONS)
                results[f"{game}|{form}|{algo}"] = snapshot(s)
            s = tensorcfr.Solver("leduc", "dcfr", device="cpu", distributed=True, **options("dcfr"))
            if world == 2:  # a checkpoint after 10 iterations, for the resume on 1 and 3 ranks
                s.step(10)
                if rank == 0:
                    torch.save(s.state_dict(), os.path.join(out, "checkpoint.pt"))
            else:
                s.load_state_dict(torch.load(os.path.join(out, "checkpoint.pt")))
                s.step(ITERATIONS - 10)
                results["resumed"] = snapshot(s)
            torch.save(results, os.path.join(out, f"world{world}-rank{rank}.pt"))
        elif task == "dies":
            from tensorcfr.run.training import train

            s = tensorcfr.Solver("leduc", "cfr+", device="cpu", distributed=True)
            path = os.path.join(out, "checkpoint.pt")

            def checkpoint(loop):  # rank 0 saves every 2 iterations; rank 1 dies at its 6th
                if rank == 1 and s.iteration >= 6:
                    os._exit(3)
                if rank == 0:
                    torch.save(s.state_dict(), path + ".tmp")
                    os.replace(path + ".tmp", path)

            t0 = time.perf_counter()
            try:
                train(s, 1000, 500, checkpoint=checkpoint, checkpoint_every=2)
                message = "no error"
            except tensorcfr.TensorCFRError as e:
                message = str(e)
            with open(os.path.join(out, "dies.txt"), "w") as f:
                f.write(f"{time.perf_counter() - t0:.1f}\n{message}")
            os._exit(0)  # (the group cannot be torn down cleanly without its other rank)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def launch(world, out, task):
    return launch_local(_worker, world, out, out, task, timeout=180)


def test_shards_cover_the_payoff_once():
    assert [bounds(10, r, 3) for r in range(3)] == [(0, 3), (3, 6), (6, 10)]
    for form in ("generic", "public"):
        cg = tensorcfr.compile("leduc", form=form)
        parts = [shard(cg, r, 3) for r in range(3)]
        if form == "generic":
            assert torch.equal(torch.cat([p.payoff_seq for p in parts], 1), cg.payoff_seq)
        else:
            terminals = [p.terminal_seq.shape[1] for p in parts]
            assert sum(terminals) == cg.terminal_seq.shape[1] and max(terminals) - min(terminals) <= 1
            assert all(int(p.class_offsets[-1]) == n for p, n in zip(parts, terminals))
    with pytest.raises(tensorcfr.TensorCFRError, match="rank 3 is not in 0..2"):
        shard(cg, 3, 3)


@pytest.mark.parametrize("game", ["leduc", "dudo(4,1,2)", "random(seed=3)", ("kuhn(ante=1)", "kuhn(ante=2)")])
def test_a_split_compile_builds_the_whole_payoff_in_blocks(game):
    """compile(..., shard=(rank, world)): the ranks' blocks, in rank order, are the whole
    compile's sorted payoff, bit for bit, balanced by terminals (rows of player 0's sequences)."""
    game = list(game) if isinstance(game, tuple) else game
    whole = tensorcfr.compile(game, cache=False)
    for world in (1, 2, 3, 5):
        parts = [tensorcfr.compile(game, shard=(r, world)) for r in range(world)]
        assert all(p.shard == (r, world) for r, p in enumerate(parts))
        assert torch.equal(torch.cat([p.payoff_seq for p in parts], 1), whole.payoff_seq)
        assert torch.equal(torch.cat([p.payoff for p in parts], 1), whole.payoff)
        assert all(p.sizes()["histories"] == whole.sizes()["histories"] for p in parts)
        if game == "dudo(4,1,2)":  # rows of equal terminal counts: blocks within one row's width
            sizes = [p.payoff.shape[1] for p in parts]
            assert max(sizes) - min(sizes) <= 2 * 12


def test_a_block_is_not_a_game_to_save_or_to_split_again(tmp_path):
    block = tensorcfr.compile("kuhn", shard=(1, 2))
    assert shard(block, 1, 2) is block
    with pytest.raises(tensorcfr.TensorCFRError, match="compiled as rank 1's block of 2, not rank 0's of 3"):
        shard(block, 0, 3)
    with pytest.raises(tensorcfr.TensorCFRError, match="not a whole game"):
        block.save(tmp_path / "block.pt")
    for bad in ((2, 2), (-1, 2), (0, 0)):
        with pytest.raises(tensorcfr.TensorCFRError, match="shard must be"):
            tensorcfr.compile("kuhn", shard=bad)


def test_distributed_needs_a_process_group():
    with pytest.raises(tensorcfr.TensorCFRError, match="initialised torch.distributed process group"):
        tensorcfr.Solver("kuhn", "cfr", device="cpu", distributed=True)


def test_two_and_three_ranks_equal_one_process(tmp_path):
    out = str(tmp_path)
    assert launch(2, out, "iterates") == [0, 0]
    assert launch(3, out, "iterates") == [0, 0, 0]
    for world in (2, 3):
        ranks = [torch.load(os.path.join(out, f"world{world}-rank{r}.pt")) for r in range(world)]
        for r in ranks[1:]:  # replicated state: every rank holds the same numbers
            assert all(torch.equal(a, b) for k in ranks[0] for a, b in zip(ranks[0][k], r[k]))
        for game, form, algo in CASES:
            s = tensorcfr.Solver(tensorcfr.compile(game, form=form), algo, device="cpu", **options(algo))
            s.step(ITERATIONS)
            for i, (a, b) in enumerate(zip(snapshot(s), ranks[0][f"{game}|{form}|{algo}"])):
                assert close(a, b, i), (world, game, form, algo, i)
    straight = tensorcfr.Solver("leduc", "dcfr", device="cpu", **options("dcfr"))
    straight.step(ITERATIONS)
    on_one = tensorcfr.Solver("leduc", "dcfr", device="cpu", **options("dcfr"))
    on_one.load_state_dict(torch.load(os.path.join(out, "checkpoint.pt")))
    on_one.step(ITERATIONS - 10)
    on_three = torch.load(os.path.join(out, "world3-rank0.pt"))["resumed"]
    for i, (a, b, c) in enumerate(zip(snapshot(straight), snapshot(on_one), on_three)):
        assert close(a, b, i) and close(a, c, i), i


def test_a_rank_that_dies_stops_the_others_with_a_clear_error(tmp_path):
    out = str(tmp_path)
    codes = launch(2, out, "dies")
    assert codes == [0, 3]
    seconds, message = open(os.path.join(out, "dies.txt")).read().split("\n", 1)
    assert float(seconds) < 60
    assert message.startswith("rank 0: ") and "over the ranks failed (did another rank stop?)" in message
    saved = torch.load(os.path.join(out, "checkpoint.pt"))  # the last checkpoint is whole, and right
    assert saved["iteration"] == 6
    one = tensorcfr.Solver("leduc", "cfr+", device="cpu")
    one.step(6)
    for a, b in zip(one.state_dict()["average"], saved["average"]):
        assert float((a - b).abs().max()) <= ITERATE_TOL * max(1.0, float(a.abs().max()))


def test_cli_under_torchrun_equals_one_process(tmp_path):
    import json
    import subprocess
    import sys

    args = ["solve", "leduc", "--algo", "cfr+", "--iterations", "40", "--eval-every", "20", "--regret-tolerance",
            "1e-12", "--device", "cpu", "--json", "--logdir", str(tmp_path / "runs")]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                        "-m", "tensorcfr", *args, "--distributed"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr  # whole: a rank's own message comes first, torchrun's summary last
    two = json.loads(r.stdout)  # rank 0's output alone
    assert two["config"]["distributed"] is True and len(os.listdir(tmp_path / "runs")) == 1  # rank 0's run only
    one = json.loads(subprocess.run([sys.executable, "-m", "tensorcfr", *args, "--no-log"], capture_output=True,
                                    text=True, timeout=300, env=env, check=True).stdout)
    assert [c["iteration"] for c in two["curve"]] == [c["iteration"] for c in one["curve"]]
    for a, b in zip(two["curve"], one["curve"]):
        assert abs(a["exploitability"] - b["exploitability"]) <= TOL and abs(a["game_value"] - b["game_value"]) <= TOL
    bad = subprocess.run([sys.executable, "-m", "tensorcfr", *args, "--distributed", "--no-log"], capture_output=True,
                         text=True, timeout=300, env=env)
    assert bad.returncode == 2 and "--distributed runs under torchrun" in bad.stderr


@pytest.mark.skipif(not (torch.cuda.is_available() and dist.is_nccl_available()), reason="NCCL needs CUDA")
def test_cli_over_nccl_equals_one_process_on_cuda(tmp_path):
    """The GPU path: `torchrun ... --distributed --device cuda` takes NCCL, one GPU a rank (as
    many ranks as GPUs, at most 2; one on a one-GPU box still runs NCCL's all-reduce), and its
    curve equals one CUDA process's."""
    import json
    import subprocess
    import sys

    ranks = min(torch.cuda.device_count(), 2)
    args = ["solve", "dudo(4,1,2)", "--form", "public", "--algo", "dcfr", "--iterations", "30", "--eval-every", "10",
            "--regret-tolerance", "1e-12", "--device", "cuda", "--json", "--no-log"]
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks),
                        "-m", "tensorcfr", *args, "--distributed"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr  # whole: a rank's own message comes first, torchrun's summary last
    many = json.loads(r.stdout)
    assert many["config"]["distributed"] is True
    one = json.loads(subprocess.run([sys.executable, "-m", "tensorcfr", *args], capture_output=True, text=True,
                                    timeout=600, check=True).stdout)
    assert [c["iteration"] for c in many["curve"]] == [c["iteration"] for c in one["curve"]]
    for a, b in zip(many["curve"], one["curve"]):
        assert abs(a["exploitability"] - b["exploitability"]) <= 1e-10 and abs(a["game_value"] - b["game_value"]) <= 1e-10


def test_the_cli_leaves_the_group_it_joined(monkeypatch, capsys):
    """`main` destroys the process group before returning, on success and on an error: left to
    the interpreter's exit, gloo's threads aborted a correct 2-rank run about 1 time in 6."""
    import socket

    from tensorcfr.cli.commands import main

    with socket.socket() as s:  # a free port for a one-rank group in this process
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for k, v in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                 "MASTER_PORT": str(port)}.items():
        monkeypatch.setenv(k, v)
    assert main(["solve", "kuhn", "--iterations", "3", "--device", "cpu", "--no-log", "--distributed"]) == 0
    assert not dist.is_initialized()
    assert main(["solve", "kuhn", "--iterations", "3", "--device", "cpu", "--no-log", "--distributed",
                 "--save-policy", "/nonexistent-dir/p.json"]) == 2
    assert "tensorcfr: error" in capsys.readouterr().err and not dist.is_initialized()
