"""pandas 3 holds text in pyarrow when it can import it; njcredits holds it as Python strings on every
install (`validators/__init__.py`), so that an install with pyarrow behaves as the tested one does.
Each way in to the tool's frames sets it, in a fresh interpreter; the command alone does not import
pandas at all (its start-up)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
import {module}
if "pandas" not in sys.modules:
    print("no pandas")
else:
    import pandas as pd
    print(pd.get_option("mode.string_storage"), type(pd.Series(["a"]).array).__name__)
"""


@pytest.mark.parametrize(
    "module, want",
    [
        ("batch.run.preload", "python StringArray"),  # what every worker imports before its first file
        ("batch.run.runner", "python StringArray"),  # the run: its ledger and report
        ("batch.pipeline", "python StringArray"),  # a workbook processed in the calling process
        ("batch.run.ledger.reads", "python StringArray"),  # the portfolio's reads
        ("batch.workbook.writing", "python StringArray"),
        ("batch.cli", "no pandas"),  # `njcredits --help` starts without it
    ],
)
def test_text_is_held_as_python_strings_from_every_way_in(module, want):
    done = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == want
