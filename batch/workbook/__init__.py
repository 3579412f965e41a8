"""The Excel layer: reading a workbook (safety, the package, sheet rows, cells), and writing the
returned one (in place, or anew), the tool's sheets, the rulebook and the template."""
