#!/usr/bin/env bash
# A GPU session's checks, prepared so that a few calls of a lent machine cover the open GPU work
# (docs/tutorials/gpu.md; what each session measured: docs/results/gpu.md). The GPU image has
# torch, CuPy, scipy, tensorboard, threadpoolctl and pytest; it lacks the packages below, which
# travel as wheels for its Python 3.12 (34 MB).
#
# Here, once:    bash experiments/gpu_session.sh wheels      # -> .whl/ (git-ignored: carry it)
# There, a call: bash experiments/gpu_session.sh STEP ...     # carry [".whl"]; logs under $OUT
#
# A call runs the steps it names in order, each under its own limit, until the call's own: name
# the most wanted first and let the rest use what is left. A session has 15 minutes; a machine
# takes about 60 s to start, and none starts with under 4 minutes left, so the calls after the
# first must follow each other while it is warm (30 s). On 2026-11-27 (third session) the whole
# suite ran in 406 s of a 484-s call. The code CUDA runs has changed since (late on 2026-11-27:
# the path table's running products and values up the paths, CUDA graphs of 4 iterations with a
# graph of one for the rest, the public form's payoff classes in blocks), so next:
# `SUITE_S=480 ... suite small` in a call of 600 s (the suite as shipped; then whether Leduc's
# 42.75 kernels an iteration, counted on the CPU, run under 100 us), then at once, while the
# machine is warm, `profile holdem river` in what is left (Dudo(4,2,2)'s public iteration in 160
# kernels instead of 265, the 1,000-board batch, the river spot compiled); `memory determinism
# rows compiled` in a later session.
#
# Steps, in the order of the open issues' GPU items (seconds each, about):
#   suite         the whole suite on CUDA with the default capture (SUITE_S, default 540: a call of its
#                 own; it ran past 430 s on an H100 on 2026-11-27). Each failure's traceback goes to
#                 failures.log as it happens and each test's outcome to suite.log (-v), so a run
#                 stopped by its limit still says what failed and what had not run. Each worker
#                 runs torch on 2 threads, as CI's 2-core machine does: torch's default there is one
#                 thread a core, 16 workers x 16 threads on 16 cores. Of the tests that take a device
#                 only the CUDA cases run (SUITE_DEVICES=cpu,cuda for both): 1,996 of 2,539 tests on 2026-11-27
#   tests         the tests that $TESTS names (pytest's node ids or -k, as pytest takes them), as
#                 `suite` runs them: a suite's failures run again after their fix (TESTS_S, default 120)
#   small         Kuhn, Leduc, Liar's Dice and Dudo(4,1,2) with the treeplex's path table and with its
#                 level loop, by default and deterministic: the under-100-us target and PATH_ENTRIES (90)
#   river         the hold'em river spot (public form, CFR+, float32) timed and its kernels counted: the
#                 masked normalize and the merged showdown gathers, against the CPU's 0.33 ms of 2026-11-26;
#                 compiled too (as a graph: 0.368 ms, 143 kernels, on an H100 on 2026-11-27: fused, fewer?) (150)
#   determinism   --deterministic's cost against the default, and whether runs repeat (150)
#   holdem        1,000 river spots on boards of their own in one batch, end to end (200)
#   cards         royal Rhode Island and the turn spot with stacked card groups (100)
#   noregret      noregret's CUDA kernel beside tensorcfr's CUDA graph on the GPU peers' games (150)
#   memory        the device estimate against the peak on games it was not fitted on (100): games not
#                 measured before (Dudo(6,1,2), OCP(2000) and 64 Leduc variants were, on 2026-11-25 and -27)
#   profile       where an iteration's time goes, kernel by kernel, by default and deterministic (150)
#   compiled      the large games' iteration compiled (torch.compile's fused passes, recorded as a graph)
#                 beside the graph alone, against the bytes-moved floor: never timed at these sizes (240)
#   rows          the public form's three ways of adding one member's rows (the broadcast scatter-add a
#                 GPU takes, index_add_ along the rows, the sparse product: gpu_profile.py --rows all) on
#                 Dudo(4,2,2) and Liar's Dice with 8 faces, for public.ROWS_DEVICES and MATRIX_DEVICES (90)
#   forms         both forms' ms an iteration from 0.3M to 66M histories, for `choose`'s CUDA threshold
#                 (PUBLIC_FROM_HISTORIES_CUDA, set past Dudo(4,2,2)'s 13.1M on one timing) (120)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-experiments/results/gpu/session}
mkdir -p "$OUT"
# (noregret imports gurobipy and tqdm when it is imported: without them its step fails at once;
# OpenSpiel's Python algorithms import its Python games, one of which needs ml_collections, with
# absl-py and PyYAML: without them the comparison with OpenSpiel's MMD skips)
WHEELS=("phevaluator" "pokerkit" "open_spiel<2" "noregret" "ordered-set" "orjson" "gurobipy" "tqdm"
        "ml-collections" "absl-py" "PyYAML" "attrs")

if [ "${1:-}" = wheels ]; then
    for w in "${WHEELS[@]}"; do
        python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
            --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$w" || exit 1
    done
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
    du -sh .whl
    exit 0
fi

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "the wheels: run 'bash experiments/gpu_session.sh wheels' here first and carry .whl"; exit 1; }
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . || exit 1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'Python', sys.version.split()[0])"
  git log -1 --format='code %h %cs' 2>/dev/null; date -u; } | tee "$OUT/machine.txt"

run() {  # seconds, log name, command...
    local limit=$1 name=$2
    shift 2
    echo "== $name: $*"
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    echo "== $name: exit $? after ${SECONDS}s in all"
    tail -n 25 "$OUT/$name.log"
}

for step in "$@"; do
    case $step in
        suite) TENSORCFR_TEST_FAILURES="$OUT/failures.log" TENSORCFR_TEST_DEVICES="${SUITE_DEVICES:-cuda}" \
               OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 \
               run "${SUITE_S:-540}" suite \
                   python3 -m pytest -v -rf -n 16 --timeout 300 -p no:cacheprovider
               grep -h '^== ' "$OUT/failures.log" 2>/dev/null ;;
        tests) TENSORCFR_TEST_FAILURES="$OUT/failures.log" TENSORCFR_TEST_DEVICES="${SUITE_DEVICES:-cuda}" \
               OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 \
               run "${TESTS_S:-120}" tests python3 -m pytest -v -rf -n 8 --timeout 120 -p no:cacheprovider ${TESTS:?name the tests in TESTS}
               grep -h '^== ' "$OUT/failures.log" 2>/dev/null ;;
        determinism) run 150 determinism python3 experiments/gpu_checks.py --sections determinism --out "$OUT" \
                         --name determinism.json ;;
        holdem) run 200 holdem python3 experiments/holdem_batch.py --boards --spots 1000 --batch-only --device cuda \
                    --threads 8 --repeats 1 --no-readme --out "$OUT" ;;
        cards) run 100 cards python3 experiments/card_stack.py --device cuda --out "$OUT/card_stack.json" \
                   --games "rhode_island(royal=True)" \
                   "holdem_turn(board=Ks7d2c9h, pot=10, stack=100, bets=(0.5,1,allin), cap=2)" ;;
        noregret) run 150 noregret python3 experiments/bench.py --games leduc \
                      "goofspiel(num_cards=5,points_order=descending)" \
                      "battleship(board_width=2,board_height=2,ship_sizes=(1,1),ship_values=(1.0,2.0),num_shots=2)" \
                      --algos cfr+ --dtypes float64 --devices cuda-graph --noregret-python python3 --noregret-cuda \
                      --peer-seconds 20 --no-readme --no-default-rows --out "$OUT" ;;
        forms) run 120 forms python3 experiments/form_rule.py --device cuda --blocks 3 --seconds 1 --out "$OUT" \
                   --games liars_dice "dudo(5,1,2)" "liars_dice(faces=8)" "dudo(4,2,2)" "dudo(6,1,2)" ;;
        memory) run 100 memory python3 experiments/gpu_checks.py --sections memory --out "$OUT" --name memory.json \
                    --memory-games "liars_dice(faces=8):public" "dudo(5,1,2):generic" "liars_dice*32:generic" ;;
        small) run 90 small python3 experiments/gpu_profile.py --games kuhn leduc liars_dice "dudo(4,1,2)" \
                   --forms generic --paths both --deterministic --iterations 100 --out "$OUT" \
                   --name gpu_profile_small.json ;;
        river) run 150 river python3 experiments/gpu_profile.py --forms public --algo cfr+ --dtype float32 \
                   --games "holdem_river(board=Ks7d2c9h4s, pot=10, stack=100, bets=(0.5,1,allin), cap=2)" \
                   --iterations 100 --compile --out "$OUT" --name gpu_profile_river.json ;;
        rows) run 90 rows python3 experiments/gpu_profile.py --games "dudo(4,2,2)" "liars_dice(faces=8)" --forms public \
                  --rows all --out "$OUT" --name gpu_profile_rows.json ;;
        profile) run 150 profile python3 experiments/gpu_profile.py --games "ocp(1000)" "dudo(4,2,2)" \
                     --deterministic --out "$OUT" ;;
        compiled) run 240 compiled python3 experiments/bench.py --games "ocp(1000)" "dudo(4,2,2)" \
                      --forms generic public --algos cfr+ --dtypes float64 --devices cuda-graph cuda-compile \
                      --compile-max-histories 100000000 --no-peers --no-readme --no-default-rows --out "$OUT" ;;
        *) echo "unknown step $step"; exit 2 ;;
    esac
done
