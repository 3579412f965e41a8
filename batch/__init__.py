"""njcredits: New Jersey tax-credit intake workbooks in, annotated workbooks out."""

# The version, written once: pyproject.toml reads it from here. (Asking importlib.metadata for the
# installed version took 30 ms of every start, the command's and the fork server's.)
__version__ = "0.1.0"
