"""batch.workbook.commentsxml: the tool's notes below the user's comments, after a marker line, and a
round trip that gives the user's comments back."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from lxml import etree

from batch.workbook.commentsxml import AUTHOR, BLOCK, END, MARKER, Notes, cut, merged, merged_chunks, note, stripped


@pytest.fixture
def user_comments(tmp_path) -> bytes:
    """The comments part of a workbook whose analyst commented B2 ("Check with Treasury")."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["B2"] = 90_000
    ws["B2"].comment = openpyxl.comments.Comment("Check with Treasury", "Dana")
    wb.save(tmp_path / "user.xlsx")
    with zipfile.ZipFile(tmp_path / "user.xlsx") as z:
        return z.read(next(n for n in z.namelist() if re.fullmatch(r"xl/comments/?comment\d*\.xml|xl/comments\d+\.xml", n)))


def _texts(part: bytes) -> dict[str, str]:
    """Each comment's text (its runs and plain text, not a phonetic guide), whatever the part's namespace and prefix."""
    root = etree.fromstring(part)
    ns = etree.QName(root).namespace
    out = {}
    for c in root.iter(f"{{{ns}}}comment"):
        runs = [[t] if t.tag == f"{{{ns}}}t" else t.findall(f"{{{ns}}}t") if t.tag == f"{{{ns}}}r" else [] for t in c.find(f"{{{ns}}}text")]
        out[c.get("ref")] = "".join(t.text or "" for ts in runs for t in ts)
    return out


def test_the_note_goes_below_the_users_comment_and_a_new_cell_gets_its_own(user_comments):
    part = merged(user_comments, {"B2": "CONSIDERATION_BELOW_75PCT (error): 72.00% ...", "C5": "MISSING_VALUE (error): <blank> & more"})
    texts = _texts(part)
    assert texts["B2"] == f"Check with Treasury\n{MARKER}\nCONSIDERATION_BELOW_75PCT (error): 72.00% ...\n{END}"
    assert texts["C5"] == f"{MARKER}\nMISSING_VALUE (error): <blank> & more\n{END}"
    assert f"<author>{AUTHOR}</author>".encode() in part and b"<author>Dana</author>" in part


def test_a_round_trip_gives_the_users_comments_back(user_comments):
    once = merged(user_comments, {"B2": "note one", "C5": "note two"})
    back = stripped(once)
    assert _texts(back) == _texts(user_comments)  # the user's text, and no comment of the tool's left
    assert _texts(stripped(merged(back, {"B2": "note three"}))) == _texts(user_comments)  # and again


def test_a_part_of_the_tools_notes_only_goes_away():
    assert stripped(merged(None, {"A1": "only the tool's"})) is None


NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
FINDING = "TRANSFER_BELOW_MINIMUM (error): The transfer of $20,000.00 is below the $25,000.00 minimum. [N.J.S.A. 34:1B-246]"
LEGACY = "MISSING_VALUE (warning): Seller is blank. [N.J.A.C. 19:31-18.5]"


def _part(*comments: bytes) -> bytes:
    return (
        f'<comments xmlns="{NS}"><authors><author>Dana</author><author>{AUTHOR}</author></authors><commentList>'.encode()
        + b"".join(comments)
        + b"</commentList></comments>"
    )


def _comment(body: str, author: int = 0) -> bytes:
    return f'<comment ref="B2" authorId="{author}"><text>{body}</text></comment>'.encode()


@pytest.mark.parametrize(
    "body,left",
    [
        # the note as the tool writes it: a run of its own after the user's text
        (f'<r><t>Check</t></r><r><t xml:space="preserve">\n{MARKER}\n{FINDING}\n{END}</t></r>', "Check"),
        # runs joined into one plain text by a program that saved the workbook
        (f'<t xml:space="preserve">Check with Treasury\n{MARKER}\nnote\n{END}</t>', "Check with Treasury"),
        # one run holding the user's text and the note, with formatting
        (f'<r><rPr><b/></rPr><t xml:space="preserve">Check\n{MARKER}\nnote\n{END}</t></r>', "Check"),
        # runs split elsewhere (LibreOffice): the note is found in the comment's text, whatever runs carry it
        ("<r><t>Check\n--- njc</t></r><r><rPr><i/></rPr><t>redits ---\nnote\n--- end</t></r><r><t> njcredits ---</t></r>", "Check"),
        # line breaks as character references, as CR LF, and as Excel's escape of a carriage return
        (f"<t>Check&#10;{MARKER}&#10;note&#10;{END}</t>", "Check"),
        (f"<t>Check&#13;&#10;{MARKER}&#13;&#10;note&#13;&#10;{END}</t>", "Check"),
        (f"<t>Check_x000D_\n{MARKER}_x000D_\nnote_x000D_\n{END}</t>", "Check"),
        # a comment of the tool's only: it goes
        (f"<r><rPr><b/></rPr><t>{MARKER}\nnote\n{END}</t></r>", None),
        # a reviewer's reply after the closing line: the reviewer's, kept
        (f"<t>Check\n{MARKER}\n{FINDING}\n{END}\nAsked the seller: signed at $30,000</t>", "Check\nAsked the seller: signed at $30,000"),
        (f'<r><t>Check</t></r><r><t xml:space="preserve">\n{MARKER}\nnote\n{END}</t></r><r><t>\nOK per Dana</t></r>', "Check\nOK per Dana"),
        (f"<t>Check\n{MARKER}\nnote\n{END} ok</t>", "Check\nok"),  # typed on the closing line
        (f"<t>{MARKER}\nnote\n{END}\nReviewed</t>", "Reviewed"),  # on a comment the tool made
        # a note without a closing line (returned before the tool wrote one): its lines are the tool's findings
        (f"<t>Check\n{MARKER}\n{FINDING}\n\n{LEGACY}\nAsked the seller</t>", "Check\nAsked the seller"),
        (f"<t>Check\n{MARKER}\n{FINDING}</t>", "Check"),
        (f"<t>{MARKER}\n{FINDING}\n\n{LEGACY}</t>", None),
        # two notes (a workbook annotated twice by hand-copying): both go
        (f"<t>Check\n{MARKER}\na\n{END}\n{MARKER}\nb\n{END}</t>", "Check"),
        # the separator inside a line of the user's is the user's text
        (f"<t>Lines like {MARKER} are the tool's</t>", f"Lines like {MARKER} are the tool's"),
    ],
)
def test_only_the_tools_note_is_cut(body, left):
    """The tool's note is the separator line, its text and the closing line; everything else in
    the comment is the user's or the reviewer's."""
    back, gone = cut(_part(_comment(body)))
    assert (None if back is None else _texts(back)["B2"]) == left
    assert gone == ({"B2"} if left is None else set())


# the comments part as producers write it: namespace (Transitional, Strict), prefix, quoting, empty lists
PARTS = {
    "excel": f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<comments xmlns="{NS}"><authors><author>Dana</author>'
    f'</authors><commentList><comment ref="B2" authorId="0"><text><t>Check with Treasury</t></text></comment></commentList></comments>',
    "prefixed": f"<x:comments xmlns:x='{NS}'><x:authors><x:author>Dana</x:author></x:authors><x:commentList>"
    f"<x:comment ref='B2' authorId='0'><x:text><x:r><x:rPr><x:b/></x:rPr><x:t>Check with Treasury</x:t></x:r></x:text>"
    "</x:comment></x:commentList></x:comments>",
    "strict": f'<comments xmlns="{STRICT}"><authors><author>Dana</author></authors><commentList>'
    '<comment ref="B2" authorId="0"><text><t>Check with Treasury</t></text></comment></commentList></comments>',
    "strict prefixed, declared inside": f'<s:comments xmlns:s="{STRICT}"><s:authors><s:author>Dana</s:author></s:authors>'
    f'<s:commentList xmlns:s="{STRICT}"><s:comment ref="B2" authorId="0"><s:text><s:t>Check with Treasury</s:t></s:text>'
    "</s:comment></s:commentList></s:comments>",
    "end tags spaced": f'<comments xmlns="{NS}" ><authors ><author >Dana</author ></authors ><commentList >'
    '<comment ref="B2" authorId="0" ><text ><t >Check with Treasury</t ></text ></comment ></commentList ></comments >',
}


@pytest.mark.parametrize("producer", list(PARTS))
def test_any_spelling_of_a_comments_part(producer):
    """Notes go in, in the part's own namespace and prefix; the round trip gives the user's part
    back; each part written is well-formed XML."""
    user = PARTS[producer].encode()
    root = etree.fromstring(user)
    ns, prefix = etree.QName(root).namespace, root.prefix
    once = merged(user, {"B2": "note one", "C5": "note two"})
    out = etree.fromstring(once)  # well-formed
    assert etree.QName(out).namespace == ns and out.prefix == prefix
    made = [c for c in out.iter() if isinstance(c.tag, str)]
    assert all(etree.QName(c).namespace == ns and c.prefix == prefix for c in made)  # nothing in another namespace or prefix
    assert _texts(once) == {"B2": f"Check with Treasury\n{note('note one')}", "C5": note("note two")}
    assert [a.text for a in out.iter(f"{{{ns}}}author")] == ["Dana", AUTHOR]
    back = stripped(once)
    etree.fromstring(back)
    assert _texts(back) == _texts(user)


REPLY = "Reviewed: the seller confirmed $30,000"


def _typed_at_the_end(body, ns: str) -> None:
    """Excel: the reviewer types at the end of the comment, into the note's run."""
    last = list(body.iter(f"{{{ns}}}t"))[-1]
    last.text += "\n" + REPLY


def _rewritten_as_one_text(body, ns: str) -> None:
    """LibreOffice or a library: the comment saved again as one plain text, the reply below."""
    text = "".join(t.text or "" for t in body.iter(f"{{{ns}}}t"))
    for child in list(body):
        body.remove(child)
    etree.SubElement(body, f"{{{ns}}}t").text = text + "\n" + REPLY


@pytest.mark.parametrize("reply", [_typed_at_the_end, _rewritten_as_one_text])
def test_a_reviewers_reply_after_the_note_is_kept_through_round_trips(user_comments, reply):
    """Run 1 adds the note; the reviewer types a reply below it; run 2 takes out only the tool's
    note and adds its new one below the reply; run 3 the same: the reply is never lost."""
    first = merged(user_comments, {"B2": "TRANSFER_BELOW_MINIMUM (error): first note [cite]"})
    root = etree.fromstring(first)
    ns = etree.QName(root).namespace
    comment = next(c for c in root.iter(f"{{{ns}}}comment") if c.get("ref") == "B2")
    reply(comment.find(f"{{{ns}}}text"), ns)
    reviewed = etree.tostring(root)
    assert _texts(reviewed)["B2"].endswith(f"{END}\n{REPLY}")
    for run in (2, 3):
        again = merged(stripped(reviewed), {"B2": f"TRANSFER_BELOW_MINIMUM (error): note of run {run} [cite]"})
        mine = f"Check with Treasury\n{REPLY}"
        assert _texts(again)["B2"] == f"{mine}\n" + note(f"TRANSFER_BELOW_MINIMUM (error): note of run {run} [cite]"), run
        assert _texts(stripped(again))["B2"] == mine
        reviewed = again


def test_many_new_comments_are_written_a_block_at_a_time():
    """The comments of cells without one are made and written in blocks, never all at once."""
    notes = {f"A{i}": f"MISSING_VALUE (error): row {i} [c]" for i in range(1, 2 * BLOCK + 2)}
    chunks = list(merged_chunks(_part(_comment("<t>Check</t>")), notes))
    assert len(chunks) == 2 + 3  # the part before its list's end, three blocks, the rest
    part = b"".join(chunks)
    texts = _texts(part)
    assert len(texts) == len(notes) + 1 and texts["A7"] == note("MISSING_VALUE (error): row 7 [c]")
    assert _texts(stripped(part)) == {"B2": "Check"}


def test_a_phonetic_guide_stays_after_the_text_and_the_round_trip_keeps_it():
    """A comment with a phonetic guide (Japanese Excel): the note's run goes before the guide, as
    the schema orders a comment's text, and the round trip gives the comment back whole."""
    user = (
        '<comment ref="B2" authorId="0"><text><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh>'
        '<phoneticPr fontId="1"/></text></comment>'
    )
    part = _part(user.encode())
    once = merged(part, {"B2": "note"})
    text = re.search(rb"<text>(.*?)</text>", once, re.S).group(1)
    assert text.index(MARKER.encode()) < text.index(b"<rPh") < text.index(b"<phoneticPr")
    back = stripped(once)
    assert b"<rPh" in back and b"<phoneticPr" in back and "東京" in _texts(back)["B2"] and MARKER not in _texts(back)["B2"]


# -- the comment boxes of the sheet's drawing (VML) -------------------------------------------------

VNS, ONS, XNS = "urn:schemas-microsoft-com:vml", "urn:schemas-microsoft-com:office:office", "urn:schemas-microsoft-com:office:excel"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _box(v: str, o: str, x: str, row: int, col: int, number: int, br: str = "") -> str:
    return (
        f'<{v}:shape id="_x0000_s{number}" type="#_x0000_t202" style="position:absolute;visibility:hidden" {o}:insetmode="auto">'
        f'<{v}:textbox><div style="text-align:left">{br}</div></{v}:textbox><{x}:ClientData ObjectType="Note"><{x}:MoveWithCells/>'
        f"<{x}:Row>{row}</{x}:Row><{x}:Column>{col}</{x}:Column></{x}:ClientData></{v}:shape>"
    )


def _drawing(v: str, o: str, x: str, inner: bool = False, br: str = "") -> str:
    """A drawing of one comment box of the user's (B2), block 1, with the given prefixes."""
    declared = f'xmlns:{v}="{VNS}" xmlns:{o}="{ONS}" xmlns:{x}="{XNS}"'
    shapes = _box(v, o, x, 1, 1, 1025, br)
    if inner:  # the prefixes declared on the elements that use them, none on the root
        idmap = f'<{o}:idmap {v}:ext="edit" data="1"/>'
        layout = f'<{o}:shapelayout xmlns:{o}="{ONS}" xmlns:{v}="{VNS}" {v}:ext="edit">{idmap}</{o}:shapelayout>'
        return "<xml>" + layout + shapes.replace(f"<{v}:shape ", f"<{v}:shape {declared} ", 1) + "</xml>"
    return f'<xml {declared}><{o}:shapelayout {v}:ext="edit"><{o}:idmap {v}:ext="edit" data="1"/></{o}:shapelayout>{shapes}</xml>'


def _sheet_package(drawing: str) -> dict[str, bytes]:
    return {
        "[Content_Types].xml": b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Default Extension="xml" ContentType="application/xml"/></Types>',
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{NS}" xmlns:r="{R}"><sheetData/><legacyDrawing r:id="rId2"/></worksheet>'.encode(),
        "xl/worksheets/_rels/sheet1.xml.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{R}/comments" Target="../comments1.xml"/>'
            f'<Relationship Id="rId2" Type="{R}/vmlDrawing" Target="../drawings/vmlDrawing1.vml"/></Relationships>'
        ).encode(),
        "xl/comments1.xml": _part(_comment("<t>Check with Treasury</t>")),
        "xl/drawings/vmlDrawing1.vml": drawing.encode(),
    }


@pytest.mark.parametrize(
    "drawing,well_formed",
    [
        (_drawing("v", "o", "x"), True),  # as Excel writes it
        (_drawing("vml", "office", "excel"), True),  # other prefixes
        (_drawing("v", "o", "x", inner=True), True),  # declared on inner elements
        (_drawing("v", "o", "x", br="Check<br>"), False),  # old Excel's HTML: not XML, edited as bytes
    ],
)
def test_comment_boxes_go_into_any_drawing_and_come_out_again(drawing, well_formed):
    """New notes get boxes in blocks the drawing's idmap declares, after the user's block, with the
    drawing's own prefixes; the round trip leaves the user's box and block alone."""
    from batch.workbook.inplace import _blocks, _notes, _strip_notes

    parts = _sheet_package(drawing)
    sheet, vml = "xl/worksheets/sheet1.xml", "xl/drawings/vmlDrawing1.vml"
    notes = {"B2": f"{FINDING}", "C5": "MISSING_VALUE (error): x [c]", "D7": "MISSING_VALUE (error): y [c]"}
    blocks = _blocks(parts)
    assert blocks == {1}
    at = (np.array([1, 4, 6]), np.array([1, 2, 3]))  # each note's cell (0-based row, column), in the notes' order
    element = _notes(parts, sheet, notes, at, {}, blocks)
    assert element is None and blocks == {1, 2}  # the sheet had its drawing; the tool's boxes took block 2
    data = parts[vml]
    if well_formed:
        root = etree.fromstring(data)
        shapes = list(root.iter(f"{{{VNS}}}shape"))
        assert [s.get("id") for s in shapes] == ["_x0000_s1025", "_x0000_s2049", "_x0000_s2050"]
        assert next(root.iter(f"{{{ONS}}}idmap")).get("data") == "1,2"
        assert [int(s.find(f"{{{XNS}}}ClientData/{{{XNS}}}Row").text) for s in shapes] == [1, 4, 6]
        prefix = {u: p for p, u in root.nsmap.items()}
        assert all(s.prefix == prefix[VNS] for s in shapes)  # the drawing's own prefix (or the one declared for it)
    else:
        assert re.findall(rb'id="_x0000_s(\d+)"', data) == [b"1025", b"2049", b"2050"] and b'data="1,2"' in data
    assert _texts(parts["xl/comments1.xml"])["C5"] == note("MISSING_VALUE (error): x [c]")
    _strip_notes(parts, sheet)
    back = parts[vml]
    assert re.findall(rb'id="_x0000_s(\d+)"', back) == [b"1025"] and re.search(rb'data="1"', back)
    assert _texts(parts["xl/comments1.xml"]) == {"B2": "Check with Treasury"}
    if well_formed:
        etree.fromstring(back)
        assert etree.fromstring(back).nsmap == etree.fromstring(data).nsmap


def test_a_drawing_of_the_tools_boxes_only_goes_with_its_element():
    """A drawing that held only the tool's boxes goes, with its relationship and the sheet's
    `<legacyDrawing>` (any prefix)."""
    from batch.workbook.inplace import _strip_notes

    parts = _sheet_package(f'<xml xmlns:v="{VNS}" xmlns:o="{ONS}" xmlns:x="{XNS}">{_box("v", "o", "x", 1, 1, 1025)}</xml>')
    parts["xl/comments1.xml"] = _part(_comment(f"<t>{MARKER}\nnote\n{END}</t>", author=1))
    parts["xl/worksheets/sheet1.xml"] = (
        f'<s:worksheet xmlns:s="{NS}" xmlns:rel="{R}"><s:sheetData/><s:legacyDrawing rel:id="rId2" /></s:worksheet>'.encode()
    )
    _strip_notes(parts, "xl/worksheets/sheet1.xml")
    assert "xl/drawings/vmlDrawing1.vml" not in parts and "xl/comments1.xml" not in parts
    sheet = etree.fromstring(parts["xl/worksheets/sheet1.xml"])
    assert [etree.QName(c).localname for c in sheet] == ["sheetData"] and sheet.prefix == "s"


def _reply_typed(path: Path, dest: Path, ref: str) -> Path:
    """The returned workbook with a reviewer's reply typed at the end of the comment on `ref`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if re.fullmatch(r"xl/comments\d*\.xml|xl/comments/comment\d+\.xml", item.filename):
                root = etree.fromstring(data)
                ns = etree.QName(root).namespace
                comment = next(c for c in root.iter(f"{{{ns}}}comment") if c.get("ref") == ref)
                list(comment.iter(f"{{{ns}}}t"))[-1].text += "\n" + REPLY
                data = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
            zout.writestr(item, data)
    return dest


@pytest.mark.parametrize("saved_by", ["the tool's output as it is", "LibreOffice"])
def test_a_reviewers_reply_survives_the_round_trip_of_a_workbook(tmp_path, saved_by):
    """Run 1 notes T-2's credit (H3, the user commented it); the reviewer types a reply below the
    note (and the workbook may be saved by LibreOffice); run 2 keeps the user's comment and the
    reply, and has the tool's note once, below them."""
    from test_in_place import _transfers_book
    from test_tool_sheets import annotate, libreoffice_save

    def commented(ws):
        ws["H3"].comment = openpyxl.comments.Comment("Check with Treasury", "Dana")

    src = _transfers_book(tmp_path / "in" / "review.xlsx", commented)
    first = annotate(src, tmp_path / "out1")
    reviewed = _reply_typed(first, tmp_path / "reviewed" / "review.annotated.xlsx", "H3")
    if saved_by == "LibreOffice":
        reviewed = libreoffice_save(reviewed, tmp_path)
    second = annotate(reviewed, tmp_path / "out2")
    text = openpyxl.load_workbook(second)["Transfers"]["H3"].comment.text
    assert text.startswith(f"Check with Treasury\n{REPLY}\n{MARKER}\nTRANSFER_BELOW_MINIMUM (error)"), text
    assert text.count(MARKER) == text.count("TRANSFER_BELOW_MINIMUM") == 1 and text.endswith(END)


@pytest.mark.parametrize(
    "rows,cols,first_block,start",
    [
        ([1], [0], 1, 0),  # the first row: its box's top row is row 0 as well
        ([2, 3, 10], [0, 1, 25], 1, 0),
        ([1_048_576], [16_383], 3, 0),  # Excel's last cell
        ([5, 5, 6], [2, 2, 0], 2, 5_000),  # a later chunk: numbers (and ids) go on from `start`
        ([], [], 1, 0),
    ],
)
def test_the_comment_boxes_are_the_template_filled_box_by_box(rows, cols, first_block, start):
    # each box's fields as the one-box template is filled with Python's own numbers, box by box:
    # e.g. row 10, column 25: left (25 + 1) * 48 + 11.25 = 1259.25 pt, top (10 - 1) * 15 + 7.5 =
    # 142.5 pt, anchor "26, 15, 9, 10, 32, 15, 18, 15"
    from batch.workbook import sheetxml

    parts = sheetxml._template(sheetxml.NOTE_VML, first_block, 1)[1]
    expected = []
    for k, (r, c) in enumerate(zip(rows, cols, strict=True)):
        top, n = max(r - 1, 0), start + k
        fields = {
            "ID": str(first_block * 1024 + 1 + n),
            "LEFT": repr((c + 1) * 48 + 11.25),
            "TOP": repr(top * 15 + 7.5),
            "Z": str(n + 1),
            "ANCHOR": f"{c + 1}, 15, {top}, 10, {c + 7}, 15, {top + 9}, 15",
            "ROW": str(r),
            "COL": str(c),
        }
        expected.append("".join(fields[p] if i % 2 else p for i, p in enumerate(parts)))
    got = sheetxml._shapes(parts, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), first_block, start)
    assert got == "".join(expected).encode("utf-8")


def _lazy(refs: list[tuple[int, int]], texts: list[str]) -> Notes:
    """`Notes` of cells (row, column), whose texts are made from `texts` a block at a time."""
    rows, cols = (np.array([r[i] for r in refs], dtype=np.int64) for i in (0, 1))
    return Notes(rows, cols, lambda a, b: np.array(texts[a:b], dtype=object))


def test_notes_made_a_block_at_a_time_read_as_the_same_mapping():
    # cells in the order the notes are written (not sorted): row 10 column C, row 2 column A, ...
    cells_ = [(10, 2), (2, 0), (2, 16383), (1048576, 27), (3, 701), (3, 702)]
    texts = [f"note {i}" for i in range(len(cells_))]
    notes = _lazy(cells_, texts)
    want = dict(zip(["C10", "A2", "XFD2", "AB1048576", "ZZ3", "AAA3"], texts, strict=True))
    assert list(notes) == list(want) and len(notes) == len(want) and dict(notes.items()) == want
    for ref, text in want.items():
        assert notes[ref] == text and ref in notes
    # references no cell of it has, or that `Notes` never writes (a dict of them would not hold them)
    for ref in ["A1", "C11", "c10", "$C$10", "C010", "C0", "XFE2", "ZZZ1", "A1048577", "", "C10 ", None, 10]:
        assert notes.get(ref) is None and ref not in notes
    blocks = list(notes.blocks(4))
    assert [len(r) for r, _ in blocks] == [4, 2] and [t for _, ts in blocks for t in ts] == texts


def test_a_part_merged_from_notes_made_a_block_at_a_time_is_the_one_merged_from_a_dict():
    """Notes on cells with and without the user's comment (B2 commented twice: the first takes the
    note, as with a dict), more than a block of them: the same part byte for byte."""
    user = _comment("<t>Check</t>") + _comment("<t>again</t>")
    cells_ = [(2, 1), *((r, 0) for r in range(3, BLOCK + 40)), (1, 3)]
    texts = [f"MISSING_VALUE (error): {i} [c]" for i in range(len(cells_))]
    lazy = _lazy(cells_, texts)
    eager = dict(zip(lazy, texts, strict=True))
    assert b"".join(merged_chunks(_part(user), lazy)) == merged(_part(user), eager)
    assert merged(None, lazy) == merged(None, eager)
