"""njcredits: New Jersey tax-credit intake workbooks in, annotated workbooks out."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("njcredits")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
