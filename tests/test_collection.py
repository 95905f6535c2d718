"""The suite's test ids do not depend on when it is collected.

pytest-xdist collects the suite once per worker and refuses to run when the workers' test
ids differ; a parameter whose id carries the time (a time-stamped signed token) differs
between two workers whenever the clock ticks between them. Collecting twice, in separate
processes whose `time.time()` is days apart, finds every id built from it (Django's signing,
for one). A `datetime.now()` does not read `time.time()`: such an id is not caught here."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# A pytest collection with the process's clock moved `{shift}` seconds ahead.
COLLECT_WITH_A_SHIFTED_CLOCK = """
import sys, time
import pytest
real_time = time.time
time.time = lambda: real_time() + {shift}
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests"]))
"""


def test_test_ids_are_the_same_whatever_the_clock():
    # Both collections at once: the machine's two cores, half the wait.
    runs = [
        subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
            [sys.executable, "-c", COLLECT_WITH_A_SHIFTED_CLOCK.format(shift=shift)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for shift in (0, 3 * 86400 + 17)
    ]
    outputs = [run.communicate(timeout=300)[0] for run in runs]

    assert [run.returncode for run in runs] == [0, 0], outputs
    now, later = ({line for line in output.splitlines() if "::" in line} for output in outputs)
    assert now, outputs[0]
    assert sorted(now ^ later) == []
