"""Render one sheet of a returned workbook to PNG pages, as LibreOffice prints it.

    .venv/bin/python docs/render.py OUTPUT.xlsx SHEET [--out docs/] [--dpi 110] [--fit-width]
                                   [--picture FILE.png]

Works on a temporary copy whose xl/workbook.xml is edited in place (nothing goes through
openpyxl, so charts, comments and styles stay exactly as the tool wrote them): every other sheet
is hidden, since LibreOffice does not print hidden sheets, and SHEET becomes the active tab. The
copy goes through `soffice --headless --convert-to pdf`, the PDF through `pdftoppm`
(poppler-utils; ImageMagick `convert` if it is missing). Pages land in OUT as
<workbook>--<sheet>-<n>.png. The sheet's own page setup is kept, so the pages show what a
reviewer gets on paper; --fit-width prints the copy landscape, one page wide. --picture also
writes page 1, trimmed and scaled to 1500 px wide, to FILE (needs ImageMagick), e.g. the README's:

    .venv/bin/python docs/render.py outbox/transfers-2026-11.annotated.xlsx Transfers \
        --fit-width --dpi 220 --out /tmp/pages --picture docs/returned-workbook.png

Only OUT, FILE and a temporary folder are written; the workbook itself is never touched.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from xml.sax.saxutils import quoteattr

SHEET = r"<(?:\w+:)?sheet\b[^>]*/>"


def patch(src, dst, sheet, fit_width):
    """Copy src to dst with only `sheet` visible (and, if asked, printed one page wide)."""
    with zipfile.ZipFile(src) as zin:
        book = zin.read("xl/workbook.xml").decode("utf-8")
        tags = re.findall(SHEET, book)
        wanted = [t for t in tags if f" name={quoteattr(sheet)}" in t]
        if not wanted:
            names = [re.search(r'name="([^"]*)"', t).group(1) for t in tags]
            sys.exit(f"no sheet {sheet!r} in {src}; sheets: {', '.join(names)}")
        index = tags.index(wanted[0])
        book = re.sub(
            SHEET,
            lambda m: re.sub(r'\sstate="\w+"', "", m.group(0)).replace(
                "<sheet ", "<sheet " if m.group(0) == wanted[0] else '<sheet state="hidden" ', 1
            ),
            book,
        )
        book = re.sub(r'\s(activeTab|firstSheet)="\d+"', "", book)
        book = re.sub(r"<((?:\w+:)?workbookView)\b", rf'<\1 activeTab="{index}" firstSheet="{index}"', book, count=1)
        part = None
        if fit_width:  # the sheet's part, through its relationship id
            rid = re.search(r'\br:id="([^"]+)"', wanted[0]).group(1)
            rels = zin.read("xl/_rels/workbook.xml.rels").decode("utf-8")
            rel = next(r for r in re.findall(r"<Relationship\b[^>]*>", rels) if f'Id="{rid}"' in r)
            part = "xl/" + re.search(r'Target="/?(?:xl/)?([^"]+)"', rel).group(1)
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
            for item in zin.infolist():
                data = zin.read(item.filename)
                if item.filename == "xl/workbook.xml":
                    data = book.encode("utf-8")
                elif item.filename == part:
                    data = one_page_wide(data.decode("utf-8")).encode("utf-8")
                zout.writestr(item, data)


def one_page_wide(xml):
    """Landscape, fit to one page wide (any number of pages tall)."""
    xml = re.sub(r"<pageSetup\b[^>]*/>|<pageSetUpPr\b[^>]*/>", "", xml)
    fit = '<pageSetUpPr fitToPage="1"/>'
    if re.search(r"<sheetPr\b[^>]*/>", xml):
        xml = re.sub(r"<sheetPr\b([^>]*)/>", rf"<sheetPr\1>{fit}</sheetPr>", xml, count=1)
    elif "</sheetPr>" in xml:
        xml = xml.replace("</sheetPr>", fit + "</sheetPr>", 1)
    else:
        xml = re.sub(r"(<worksheet\b[^>]*>)", rf"\1<sheetPr>{fit}</sheetPr>", xml, count=1)
    after = re.search(
        r"<(headerFooter|rowBreaks|colBreaks|customProperties|cellWatches|ignoredErrors|"
        r"smartTags|drawing|legacyDrawing|legacyDrawingHF|picture|oleObjects|controls|"
        r"webPublishItems|tableParts|extLst)\b",
        xml,
    )
    at = after.start() if after else xml.rindex("</worksheet>")
    return xml[:at] + '<pageSetup orientation="landscape" fitToWidth="1" fitToHeight="0"/>' + xml[at:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workbook", type=pathlib.Path)
    ap.add_argument("sheet")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("docs"), help="folder for the pages [docs]")
    ap.add_argument("--dpi", type=int, default=110)
    ap.add_argument("--fit-width", action="store_true", help="print the sheet landscape, one page wide")
    ap.add_argument("--picture", type=pathlib.Path, help="also write page 1, trimmed, 1500 px wide, here")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"\.(annotated|summary)$", "", a.workbook.stem)
    prefix = f"{stem}--{re.sub(r'[^A-Za-z0-9_-]+', '_', a.sheet)}" + ("-fit" if a.fit_width else "")
    with tempfile.TemporaryDirectory(prefix="njc-render-") as tmp:
        tmp = pathlib.Path(tmp)
        patch(a.workbook, tmp / "sheet.xlsx", a.sheet, a.fit_width)
        subprocess.run(
            [
                "soffice",
                f"-env:UserInstallation={(tmp / 'profile').as_uri()}",
                "--headless",
                "--convert-to",
                "pdf",
                "--outdir",
                str(tmp),
                str(tmp / "sheet.xlsx"),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        if shutil.which("pdftoppm"):
            subprocess.run(["pdftoppm", "-png", "-r", str(a.dpi), str(tmp / "sheet.pdf"), str(tmp / "p")], check=True)
        else:
            subprocess.run(
                [
                    "convert",
                    "-density",
                    str(a.dpi),
                    str(tmp / "sheet.pdf"),
                    "-background",
                    "white",
                    "-alpha",
                    "remove",
                    str(tmp / "p-%d.png"),
                ],
                check=True,
            )
        for old in a.out.glob(f"{prefix}-*.png"):
            old.unlink()
        pages = sorted(tmp.glob("p-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
        for n, page in enumerate(pages, 1):
            shutil.move(page, a.out / f"{prefix}-{n}.png")
            print(a.out / f"{prefix}-{n}.png")
    if a.picture:
        subprocess.run(
            [
                "convert",
                str(a.out / f"{prefix}-1.png"),
                "-trim",
                "+repage",
                "-bordercolor",
                "white",
                "-border",
                "16",
                "-resize",
                "1500x>",
                "-strip",
                "-colors",
                "64",
                f"PNG8:{a.picture}",
            ],
            check=True,
        )
        print(a.picture)


if __name__ == "__main__":
    main()
