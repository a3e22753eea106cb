import os
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))

# Every solver test runs on every available device; CUDA cases skip cleanly without CUDA.
# TENSORCFR_TEST_DEVICES=cuda keeps only the CUDA cases of the tests that take a device (a lent
# GPU's minutes: the CPU cases are CI's); tests without a device run as ever.
_WANTED = os.environ.get("TENSORCFR_TEST_DEVICES", "cpu,cuda").split(",")
DEVICES = [d for d in (
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")),
) if (d if isinstance(d, str) else d.values[0]) in _WANTED]


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True, scope="session")
def _value_cache(tmp_path_factory):
    """Dudo continuation values go to a fresh cache file, never to the user's home."""
    os.environ["TENSORCFR_CACHE"] = str(tmp_path_factory.mktemp("cache") / "values.json")
    os.environ["TENSORCFR_LOGDIR"] = str(tmp_path_factory.mktemp("runs"))  # the CLI's default run directories
    yield


_WORKER = False  # whether this process is a pytest-xdist worker (set by pytest_configure)


def pytest_configure(config):
    # (a worker's config has workerinput; an environment variable would not do, as a test's own
    # pytest run in a subprocess inherits its worker's)
    global _WORKER
    _WORKER = hasattr(config, "workerinput")


def pytest_runtest_logreport(report):
    """With TENSORCFR_TEST_FAILURES set to a file, each failure's report is appended to it as it
    happens (under pytest-xdist, on the controller): a run stopped by its time limit, as on a lent
    GPU whose minutes are counted, still names its failures and their tracebacks, which pytest
    prints only at the end. A worker's report reaches the controller too, so workers leave it to
    the controller: each failure is written once (twice on an H100, 2026-11-27, before)."""
    path = os.environ.get("TENSORCFR_TEST_FAILURES")
    if path and report.failed and not _WORKER:
        with open(path, "a") as f:
            f.write(f"== {report.nodeid} ({report.when}, {report.duration:.1f} s)\n{report.longreprtext}\n\n")
