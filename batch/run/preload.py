"""What the fork server imports before it forks any worker, so that every worker starts with it done:
the modules a worker runs, and the set-up the libraries do on first use that every worker would
otherwise do again for its one file (pandera registers its pandas back ends on the first
validation, importing its checks and, where installed, hypothesis: about 0.1 s a file)."""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

import batch.pipeline  # noqa: F401 - imported for the workers
import batch.workbook.writing  # noqa: F401 - imported for the workers

pa.DataFrameSchema({"warm": pa.Column(int)}).validate(pd.DataFrame({"warm": [0]}))
