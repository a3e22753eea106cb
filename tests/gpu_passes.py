"""A pytest plugin that runs the suite on the CPU with the passes a GPU takes, to find a wrong
number in the code only a GPU runs before a lent GPU's minutes are spent on it:

    TENSORCFR_FUSE=0 PYTHONPATH=tests python -m pytest -q -p gpu_passes

Where the library picks a pass by device type, the CPU is given the GPU's: the treeplex's path
table (`treeplex.PATH_DEVICES`, the compiled walks' threshold out of reach), the public form's
masked normalize (`public.MASK_DEVICES`), the broadcast scatter-add of its rows
(`public.ROWS_DEVICES` and `MATRIX_DEVICES` emptied), its stacked card groups and the card
kernels' untransposed layout (the last three as `experiments/gpu_profile.py`'s `as_on_a_gpu`
gives them). `TENSORCFR_FUSE=0` turns off the compiled C loops, which a GPU never
runs, so torch's passes serve. What it cannot stand in for: CUDA's atomics (their order) and the
recording of a graph (`test_capture.py` and `test_paths.py` emulate it). The deterministic
segment sums, which a GPU takes under `--deterministic`, serve everywhere with
`GPU_PASSES_SEGMENTS=1` (`segments.SEGMENT_SUMS = "always"`).

The tests of the compiled loops and of the CPU's own layout assert what this plugin turns off;
they are skipped here (`CPU_ONLY`); with the segment sums, so are the tests of the default sums
(`DEFAULT_SUMS_ONLY`). On 2026-11-28 (2 cores): 1,838 tests passed and 878 were skipped in 9.5
minutes (the code of 07657d9; without the skips those 31 failed, and no other); with
`GPU_PASSES_SEGMENTS=1`, 1,834 passed and 885 were skipped in 9.3 minutes (without the new skips
those 7 failed, and no other).
"""

import os
import sys

import pytest

# node-id fragments of the tests that check the CPU's compiled loops or its transposed layout
CPU_ONLY = (
    "test_native.py::",
    "test_fused.py::test_threshold_and_switch",
    "test_holdem.py::test_compiled_card_values_are_the_eager_ones_to_the_last_bit",
    "test_holdem.py::test_runs_of_loop_groups_between_torch_groups_keep_the_groups_order",
    "test_holdem.py::test_the_card_loop_",
    "test_holdem.py::test_a_batch_on_one_board_runs_the_card_loop_a_member_at_a_time",
    "test_holdem.py::test_a_batch_on_boards_of_their_own_runs_the_card_loop_with_each_members_tables",
    "test_holdem.py::test_the_card_removal_showdown_equals_the_dense_product[prefix sums in C",
    "test_docstrings.py::test_docstring_examples[tensorcfr.operators.cards]",
    "test_docstrings.py::test_docstring_examples[tensorcfr.spaces.public_loop]",
    "test_experiments.py::test_the_profile_counts_a_card_game_as_a_gpu_runs_it",
)


# and with GPU_PASSES_SEGMENTS=1, those that check the default sums' operators, kernel counts or
# bits (a segment sum on the CPU groups a block of levels otherwise than the whole treeplex)
DEFAULT_SUMS_ONLY = (
    "test_experiments.py::test_the_path_table_launches_fewer_kernels_than_the_level_loop",
    "test_forms.py::test_blocks_of_levels_change_nothing",
    "test_forms.py::test_row_sums_and_copies_equal_a_loop[1-",
)
_ON_A_GPU = None  # the entered `gpu_profile.as_on_a_gpu`


def pytest_configure(config):
    if os.environ.get("TENSORCFR_FUSE", "1") != "0":
        raise pytest.UsageError("gpu_passes: set TENSORCFR_FUSE=0 as well (the compiled C loops, which a GPU "
                                "never runs, would serve in place of torch's passes)")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "experiments"))
    import gpu_profile
    from tensorcfr.spaces import public, treeplex

    # the masked normalize, stacked card groups and the untransposed card layout, as the profile
    # counts a GPU's operators: entered for the whole session, and kept (a context manager
    # collected as garbage would close, and put the CPU's passes back)
    global _ON_A_GPU
    _ON_A_GPU = gpu_profile.as_on_a_gpu("cpu")
    _ON_A_GPU.__enter__()
    treeplex.PATH_DEVICES = (*treeplex.PATH_DEVICES, "cpu")
    treeplex.WALK_SEQUENCES = 1 << 62
    public.ROWS_DEVICES = public.MATRIX_DEVICES = ()  # the broadcast scatter-add of a GPU's rows
    if os.environ.get("GPU_PASSES_SEGMENTS") == "1":
        from tensorcfr.spaces import segments

        segments.SEGMENT_SUMS = "always"


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="gpu_passes: checks a CPU-only compiled loop or layout, turned off here")
    sums = pytest.mark.skip(reason="gpu_passes: checks the default sums, replaced here by segment sums")
    segments = os.environ.get("GPU_PASSES_SEGMENTS") == "1"
    for item in items:
        if any(part in item.nodeid for part in CPU_ONLY):
            item.add_marker(skip)
        elif segments and any(part in item.nodeid for part in DEFAULT_SUMS_ONLY):
            item.add_marker(sums)
