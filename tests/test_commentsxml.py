"""batch.commentsxml: the tool's notes below the user's comments, after a marker line, and a
round trip that gives the user's comments back."""

from __future__ import annotations

import re
import zipfile

import openpyxl
import pytest
from defusedxml import ElementTree

from batch.commentsxml import AUTHOR, MARKER, merged, stripped


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
    ns = {"x": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
    root = ElementTree.fromstring(part)
    return {c.get("ref"): "".join(t.text or "" for t in c.iter(f"{{{ns['x']}}}t")) for c in root.iter(f"{{{ns['x']}}}comment")}


def test_the_note_goes_below_the_users_comment_and_a_new_cell_gets_its_own(user_comments):
    part = merged(user_comments, {"B2": "CONSIDERATION_BELOW_75PCT (error): 72.00% ...", "C5": "MISSING_VALUE (error): <blank> & more"})
    texts = _texts(part)
    assert texts["B2"] == f"Check with Treasury\n{MARKER}\nCONSIDERATION_BELOW_75PCT (error): 72.00% ..."
    assert texts["C5"] == f"{MARKER}\nMISSING_VALUE (error): <blank> & more"
    assert f"<author>{AUTHOR}</author>".encode() in part and b"<author>Dana</author>" in part


def test_a_round_trip_gives_the_users_comments_back(user_comments):
    once = merged(user_comments, {"B2": "note one", "C5": "note two"})
    back = stripped(once)
    assert _texts(back) == _texts(user_comments)  # the user's text, and no comment of the tool's left
    assert _texts(stripped(merged(back, {"B2": "note three"}))) == _texts(user_comments)  # and again


def test_a_part_of_the_tools_notes_only_goes_away():
    assert stripped(merged(None, {"A1": "only the tool's"})) is None


NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _part(*comments: bytes) -> bytes:
    return (
        f'<comments xmlns="{NS}"><authors><author>Dana</author><author>{AUTHOR}</author></authors><commentList>'.encode()
        + b"".join(comments)
        + b"</commentList></comments>"
    )


@pytest.mark.parametrize(
    "comment,left",
    [
        # runs joined into one text by a program that saved the workbook: cut at the marker line
        (
            f'<comment ref="B2" authorId="0"><text><t xml:space="preserve">Check with Treasury\n{MARKER}\nnote</t></text></comment>',
            "Check with Treasury",
        ),
        # one run holding the user's text and the note, with formatting
        (
            f'<comment ref="B2" authorId="0"><text><r><rPr><b/></rPr><t xml:space="preserve">Check\n{MARKER}\nnote</t></r>'
            "</text></comment>",
            "Check",
        ),
        # a line feed written as a character reference
        (f'<comment ref="B2" authorId="0"><text><t>Check&#10;{MARKER}&#10;note</t></text></comment>', "Check"),
        # only the tool's note, in one text, with formatting around it: the comment goes
        (f'<comment ref="B2" authorId="1"><text><r><rPr><b/></rPr><t>{MARKER}\nnote</t></r></text></comment>', None),
    ],
)
def test_a_note_joined_to_the_users_text_is_cut_at_the_marker(comment, left):
    part = _part(comment.encode())
    back = stripped(part)
    assert (None if back is None else _texts(back)["B2"]) == left


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
