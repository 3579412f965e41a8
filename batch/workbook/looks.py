"""How the tool's cells look in the sheets xlsxwriter writes, shared by every sheet the tool
draws (the tool's sheets, `batch.workbook.toolsheets`; the Rules sheet, `batch.workbook.rulebook`;
a workbook written anew, `batch.workbook.writing`; the tool's columns, `batch.workbook.toolcolumns`):
the formats, each made once (`Formats`), the number formats and colours, the writer's options,
the height of wrapped text, and the printed page.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import xlsxwriter

from batch.workbook.xlsxwriter_private import xf_index

MONEY = "#,##0.00"
PERCENT = "0.00%"
DATE = "yyyy-mm-dd"
DATETIME = "yyyy-mm-dd hh:mm:ss"
TIME = "hh:mm:ss"
FILL = {"error": "#FFC7CE", "warning": "#FFEB9C"}
HEADER_BG = "#D9D9D9"
COMPUTED_BG = "#BDD7EE"


class Formats:
    """xlsxwriter formats, each created once."""

    def __init__(self, wb: xlsxwriter.Workbook):
        self.wb = wb
        self.cache: dict[tuple, object] = {}

    def get(
        self,
        num_format: str | None = None,
        fill: str | None = None,
        header: str | None = None,
        wrap=False,
        link=False,
        title=False,
        center=False,
        top=False,
        right=False,
        one_line=False,
    ):
        key = (num_format, fill, header, wrap, link, title, center, top, right, one_line)
        if key not in self.cache:
            props = {}
            if num_format:
                props["num_format"] = num_format
            if fill:
                props.update(bg_color=fill, pattern=1)
            if header:
                props.update(bold=True, bg_color=header, pattern=1, bottom=1, text_wrap=True, valign="top")
            if wrap:
                props.update(text_wrap=True, valign="top")
            if one_line:  # a header of the tool's on the user's header row: one line, whatever its height
                props.pop("text_wrap", None)
            if link:
                props.update(font_color="#0563C1", underline=1)
            if title:  # a title runs over the empty cells to its right: never wrapped
                props.update(bold=True, font_size=12)
            if center:
                props.update(align="center")
            if top:
                props.update(valign="top")
            if right:  # a header over numbers, which Excel aligns right
                props.update(align="right")
            self.cache[key] = self.wb.add_format(props) if props else None
        return self.cache[key]


def style(fmt) -> str:
    """The ` s="N"` attribute of a format (its index in the style table is fixed on first use)."""
    index = xf_index(fmt)
    return f' s="{index}"' if index else ""


LINE_HEIGHT = 15  # points: one line of the default 11-point font

# The advance widths of the printable ASCII characters (space to tilde) in Calibri (and Carlito,
# its metric twin, which LibreOffice uses in its place), regular and bold, in font units of 1/2048
# em. A column's width is counted in widths of the digit `0` (1038 units), the unit Excel sizes
# columns in, so a text's width in that unit is the sum of its characters' advances over 1038.
CALIBRI = (
    "463 667 821 1020 1038 1464 1397 452 621 621 1020 1020 511 627 517 791 1038 1038 1038 1038 1038 1038 "
    "1038 1038 1038 1038 548 548 1020 1020 1020 949 1831 1185 1114 1092 1260 1000 941 1292 1276 516 653 "
    "1064 861 1751 1322 1356 1058 1378 1112 941 998 1314 1162 1822 1063 998 959 628 791 628 1020 1020 596 "
    "981 1076 866 1076 1019 625 964 1076 470 490 931 470 1636 1076 1080 1076 1076 714 801 686 1076 925 "
    "1464 887 927 809 644 943 644 1020"
)
CALIBRI_BOLD = (
    "463 667 898 1020 1038 1493 1443 478 638 638 1020 1020 528 627 547 880 1038 1038 1038 1038 1038 1038 "
    "1038 1038 1038 1038 565 565 1020 1020 1020 949 1840 1241 1148 1084 1291 999 940 1305 1292 546 678 "
    "1120 866 1790 1349 1385 1090 1405 1153 968 1014 1337 1211 1856 1128 1064 979 665 880 665 1020 1020 "
    "615 1011 1099 857 1099 1031 648 971 1099 503 523 983 503 1666 1099 1101 1099 1099 728 817 710 1099 "
    "969 1526 941 970 814 704 973 704 1020"
)
DIGIT = 1038
# Excel measures with widths rounded to whole pixels, LibreOffice without: counted 6% wide, a text
# measured here is never narrower than either shows it
SLACK = 1.06
MARGIN = 0.6  # of a column's width, what the cell's margins take from its text (in digit widths)
WIDE_CHAR = 0x1100  # from here on (Hangul, CJK, emoji) a character is about two digits wide


def _table(advances: str) -> np.ndarray:
    """Widths by character class: the ASCII characters, then (128) any other character a digit
    wide, then (129) a wide one (two digits)."""
    table = np.full(130, 1.0)
    table[32:127] = np.array(advances.split(), dtype=float) / DIGIT
    table[:32] = 0.0  # control characters and the line feed take no width
    table[129] = 2.0
    return (table * SLACK).astype(np.float32)  # half the bytes to gather and sum: a text's width needs no more


WIDTHS = {False: _table(CALIBRI), True: _table(CALIBRI_BOLD)}


def _char_widths(codes: np.ndarray, bold: bool) -> np.ndarray:
    if not len(codes) or codes.max() < 128:  # ASCII: the table's own rows
        return WIDTHS[bold][codes]
    kind = np.minimum(codes, 128)
    kind[codes >= WIDE_CHAR] = 129
    return WIDTHS[bold][kind]


def text_width(text, bold: bool = False) -> float:
    """The width of a text on one line, in widths of the digit `0` (a column's unit of width)."""
    codes = np.frombuffer(str(text).encode("utf-32-le"), dtype=np.uint32)
    return float(_char_widths(codes, bold).sum())


def column_width(text, bold: bool = False) -> float:
    """The width of a column that shows `text` on one line."""
    return round(text_width(text, bold) + MARGIN + 0.5, 1)


LONG_TEXT_WORDS = 400  # a text of more words is counted by a bound (see `line_counts`)


def line_counts(texts: pd.Series, width: float, bold: bool = False) -> np.ndarray:
    """Lines each text takes when wrapped in a column `width` digits wide, as Excel and LibreOffice
    wrap it: word by word, a line feed starting a new line, a word wider than the column broken
    where it reaches the edge.

    All texts are measured at once, as one array of characters; a text that fits on one line is
    done there. The words of the others are placed one word position at a time, for all of them
    at once, so a column of 100,000 texts costs a few array operations per word of its longest
    text. A text of more than LONG_TEXT_WORDS words gets a bound instead: each full line holds at
    least the line's width less its longest word and a space, so the bound is never short.
    A column of many texts that repeat (a citation, a code) measures each text once."""
    t = pd.Series(texts, dtype=object).fillna("").astype(str).to_numpy(dtype=object)
    if len(t) >= REPEATS_FROM:
        codes, uniques = pd.factorize(t)
        if 2 * len(uniques) <= len(t):
            return _line_counts(np.asarray(uniques, dtype=object), width, bold)[codes]
    return _line_counts(t, width, bold)


REPEATS_FROM = 64  # texts from which a column is looked at for repeats (fewer: measured as they are)


def _line_counts(t: np.ndarray, width: float, bold: bool) -> np.ndarray:
    """`line_counts` of the texts `t` (an array of str)."""
    n = len(t)
    out = np.ones(n, dtype=np.int64)
    lengths = np.fromiter(map(len, t), dtype=np.int64, count=n)
    if not n or not lengths.any():
        return out
    usable = max(float(width) - MARGIN, 0.0)
    codes = np.frombuffer("".join(t).encode("utf-32-le"), dtype=np.uint32)
    widths = _char_widths(codes, bold)
    ends = np.cumsum(lengths)
    begins = ends - lengths
    some = lengths > 0
    total = np.zeros(n)
    total[some] = np.add.reduceat(widths, begins[some], dtype=np.float64)
    feed = codes == 10
    feeds = np.zeros(n, dtype=np.int64)
    if feed.any():
        feeds = np.bincount(np.searchsorted(ends, np.flatnonzero(feed), side="right"), minlength=n)
    wrap = (total > usable) | (feeds > 0)
    if not wrap.any():
        return out
    # the words: runs of characters between spaces and line feeds
    gap = feed | (codes == 32)
    edge = np.zeros(len(codes) + 1, dtype=bool)
    edge[begins[some]] = True
    edge[ends[some]] = True
    first_char = np.flatnonzero(~gap & (edge[:-1] | np.r_[True, gap[:-1]]))
    words = np.searchsorted(first_char, ends) - np.searchsorted(first_char, begins)
    owner = np.repeat(np.arange(n), words)
    space = float(WIDTHS[bold][32])
    inked = np.where(gap, np.float32(0), widths)
    # each word's width: the sum from its first character to the next word's, spaces and line
    # feeds as nothing; the spaces after it, counted from where it ends (a line feed counted as a
    # space: a paragraph's first line is never short)
    word_width = np.add.reduceat(inked, first_char).astype(float) if len(first_char) else np.zeros(0)
    last_char = np.flatnonzero(~gap & (edge[1:] | np.r_[gap[1:], True]))
    after = space * (np.r_[first_char[1:], len(codes)] - last_char - 1)
    widest = np.zeros(len(first_char))
    letters = (last_char - first_char + 1).astype(np.int64)
    for w in np.flatnonzero(word_width > usable).tolist():  # a word wider than the column: few
        widest[w] = float(inked[first_char[w] : last_char[w] + 1].max())
    new_text = np.r_[True, owner[1:] != owner[:-1]] if len(owner) else np.zeros(0, dtype=bool)
    # the spaces before each word: those after the word before it; a text's leading spaces
    before_gap = np.r_[0.0, after[:-1]] if len(owner) else np.zeros(0)
    before_gap[new_text] = 0.0
    if feed.any():  # a line feed since the text's last word starts a paragraph
        counted_feeds = np.cumsum(feed, dtype=np.int64)[first_char]
        between = np.diff(counted_feeds)
        broken = np.r_[False, between != 0] & ~new_text
        before_gap[1:] -= space * between  # line feeds are no spaces
        before_gap[new_text] = 0.0
    else:
        broken = np.zeros(len(owner), dtype=bool)
    leading = np.flatnonzero(new_text & (first_char > begins[owner]))
    for w in leading.tolist():  # a text that begins with spaces: few
        before_gap[w] = float(widths[begins[owner[w]] : first_char[w]].sum())
    paragraphs = feeds + 1
    with_words = 1 + np.bincount(owner[broken], minlength=n)  # paragraphs holding a word
    first_word = np.flatnonzero(new_text)
    position = np.arange(len(owner)) - np.repeat(first_word, words[words > 0])
    long = wrap & (words > LONG_TEXT_WORDS)
    if long.any():
        longest = np.zeros(n)
        longest[words > 0] = np.maximum.reduceat(word_width, first_word)
        per_line = np.maximum(usable - np.minimum(longest, usable / 2) - space, 1.0)
        out[long] = (total[long] // per_line[long]).astype(np.int64) + paragraphs[long] + (longest[long] > usable / 2)
    rows = np.flatnonzero(wrap & ~long & (words > 0))
    slot = np.full(n, -1, dtype=np.int64)
    slot[rows] = np.arange(len(rows))
    mine = slot[owner] >= 0
    at = (slot[owner[mine]], position[mine])
    shape = (len(rows), int(words[rows].max(initial=0)))
    grid = np.full(shape, np.nan)
    grid[at] = word_width[mine]
    gaps = np.zeros(shape)
    gaps[at] = before_gap[mine]
    # what breaking a word between its characters needs, kept only where a word can be broken
    wide = count_of = None
    if (widest[mine] > 0).any():
        wide = np.zeros(shape)
        wide[at] = widest[mine]
    if usable <= 2 * SLACK:  # a column narrower than its widest characters
        count_of = np.zeros(shape, dtype=np.int64)
        count_of[at] = letters[mine]
    starts_line = np.zeros(shape, dtype=bool)  # a text's first word, or a paragraph's
    starts_line[at] = (new_text | broken)[mine]
    count = np.zeros(len(rows), dtype=np.int64)
    used = np.zeros(len(rows))
    for k in range(shape[1]):
        w = grid[:, k]
        here = ~np.isnan(w)
        w = np.where(here, w, 0.0)
        g = gaps[:, k]
        fresh = here & starts_line[:, k]
        wraps = here & ~fresh & (used + g + w > usable)
        count += fresh | wraps
        # a line of its own starts with its spaces (counted whole after a line feed: never short)
        used = np.where(fresh, g + w, np.where(wraps, w, np.where(here, used + g + w, used)))
        pushed = fresh & (g > 0) & (used > usable) & (w <= usable)  # leading spaces fill the line: the word goes below
        count += pushed
        used = np.where(pushed, w, used)
        over = here & (used > usable)  # a word wider than the column: broken between its characters
        if over.any():
            capacity = usable - (wide[over, k] if wide is not None else 0.0)  # each full line holds at least this much of it
            fits = capacity > 0
            # no room for even its widest character: a character a line, after what the line holds
            alone = (count_of[over, k] if count_of is not None else 1) - 1 + (used[over] - w[over] > 0)
            extra = np.where(fits, np.ceil(used[over] / np.where(fits, capacity, 1.0)) - 1, alone).astype(np.int64)
            count[over] += extra
            used[over] = np.where(fits, used[over] - extra * np.where(fits, capacity, 0.0), usable)
    # a paragraph without a word (two line feeds in a row, or one at an end) is a line of its own
    out[rows] = count + np.maximum(paragraphs[rows] - with_words[rows], 0)
    empty = wrap & (words == 0)
    out[empty] = paragraphs[empty]
    return out


def lines(text, width: float, bold: bool = False) -> int:
    """Lines a text takes when wrapped in a column `width` digits wide (see `line_counts`)."""
    return _lines(str(text), float(width), bool(bold))


@functools.lru_cache(maxsize=4096)
def _lines(text: str, width: float, bold: bool) -> int:
    """`lines`, worked out once in a process for each text and width: the tables' headers and titles
    are the same in every workbook."""
    if "\n" not in text and text_width(text, bold) <= width - MARGIN:  # one line: most headers and titles
        return 1
    return int(line_counts(pd.Series([text], dtype=object), width, bold)[0])


def print_setup(ws, title_rows: int | None = 0) -> None:
    """Printed as a reviewer reads it: landscape, one page wide, the header row on every page, and
    the sheet, file and page in the footer."""
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    if title_rows is not None:
        ws.repeat_rows(title_rows)
    ws.set_footer("&L&A&C&F&RPage &P of &N")


WRITER_OPTIONS = {
    "constant_memory": True,
    "strings_to_formulas": False,
    "strings_to_urls": False,
    "strings_to_numbers": False,
    "nan_inf_to_errors": True,
}
