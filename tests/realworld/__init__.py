"""Small workbooks in the package shapes real producers write (Excel's Transitional and Strict
saves, openpyxl, LibreOffice, the .NET Open XML SDK, hand-made packages), each holding one
Transfers intake sheet, built at test time. `packages` writes a package in a given dialect,
`shapes` names each shape and what the returned workbook must say of it, `cells` reads any of
them back with lxml, independently of the product's reader."""
