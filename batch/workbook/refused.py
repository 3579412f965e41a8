"""Why a file is set aside: `Refused`, the one exception every stage of reading raises for a file
it will not read, its message one sentence for the user (what is wrong, and what to do).

A module of its own at the bottom of the workbook layer, so that the XML helpers
(`batch.workbook.xmlparts`) and the checks made before any reader (`batch.workbook.safety`, which
reads XML with those helpers) both raise it without importing each other.
"""

from __future__ import annotations


class Refused(Exception):
    """The file is set aside; the message is one sentence saying what is wrong and what to do."""
