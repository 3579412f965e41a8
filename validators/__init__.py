"""Intake sheet specifications, type coercion and pandera validation.

Every module that makes the tool's frames imports this package first (the programs, the workbook
reader, the pipeline, the run and its ledger), so the one setting of pandas the tool makes is here:
text is held as Python strings whether or not pyarrow is installed. pandas 3 holds text in pyarrow
when it can import it; with the setting, an install that has pyarrow behaves as the tested one does
(the test suite runs without it), and is faster on the small sheets a monthly batch mostly holds
(a 40-row Transfers workbook: about 0.20 s, against 0.30 s in pyarrow) with less memory on a large
one (100,000 GrowNJ rows: 822 MB resident, against 1,274 MB).
"""

import pandas as _pd

_pd.set_option("mode.string_storage", "python")
