"""The readers' fuzz (tests/test_fuzz_readers.py) run longer, on fresh random cases.

The suite runs each property on a fixed, derandomised set of a few hundred cases; this runs
`--scale` times as many, drawn afresh, and writes how many cases each property accepted and
refused into the `fuzz` section of docs/guide.md. Any failure is printed by hypothesis with
the smallest input that shows it (and a `@reproduce_failure` line to replay it).

    python experiments/fuzz_readers.py --scale 20
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from readme_section import ROOT, command, replace_section


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=20.0, help="cases per property, times the suite's")
    p.add_argument("--no-write", action="store_true", help="print the table; leave docs/guide.md alone")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "tally.json")
        env = {**os.environ, "FUZZ_EXAMPLES": str(args.scale), "FUZZ_REPORT": report}
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
                            "ignore::DeprecationWarning", os.path.join(ROOT, "tests", "test_fuzz_readers.py")],
                           env=env, cwd=ROOT)
        seconds = time.perf_counter() - t0
        tally = json.load(open(report)) if os.path.exists(report) else []
    counts: dict[str, dict[str, int]] = {}
    for test, outcome, n in tally:
        if test != "test_the_fuzz_finds_what_it_should":
            counts.setdefault(test.removeprefix("test_").replace("_", " "), {})[outcome] = n
    lines = [f"`{command('fuzz_readers.py', argv)}`: {sum(sum(c.values()) for c in counts.values()):,} cases "
             f"in {seconds:.0f} s, {'every property held' if r.returncode == 0 else 'A PROPERTY FAILED (see above)'}.",
             "", "| reader | accepted | refused, one line |", "|---|---:|---:|"]
    lines += [f"| {name} | {c.get('accepted', 0):,} | {c.get('refused', 0):,} |" for name, c in sorted(counts.items())]
    table = "\n".join(lines) + "\n"
    print(table)
    if not args.no_write and r.returncode == 0:
        replace_section("fuzz", table)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
