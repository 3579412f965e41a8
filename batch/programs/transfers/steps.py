"""Tax credit transfer certificates (README, sheet `Transfers`).

Pure and vectorized: `calculate(frame, rules)` takes the validated rows of the `Transfers`
sheet (money in integer cents) and returns the computed columns and the findings. Every number
comes from `batch/programs/transfers/parameters.yaml`.

The calculation is a sequence of named steps, one per provision of the transfer sections
(C.34:1B-248 Grow NJ, C.34:1B-209.1 Urban Transit Hub, C.34:1B-129 g.(3) BEIP, C.52:27D-489f
b.(3) ERG Residential). Each step reads the columns earlier steps left on the `Transfers` and
adds its own findings and columns; the steps run in the order their findings are reported:

    certificate_amount_248 -> minimum_transfer_248 -> small_transfer_allowance_209_1
    -> erg_no_minimum_489f_b3 -> consideration_ratio_248 -> certificate_total_248
    -> beip_no_retransfer_129g3

A certificate's amount, its total and its BEIP resales, and a Transferor's small-transfer allowance,
count the portfolio (`RunContext.portfolio`: the records of earlier runs and of the run's other
workbooks of the sheet's certificates and of its Transferors' smaller-transfer years) beside the
sheet's rows (`_portfolio_rows`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.programs._kit.calculation import Calculation, RunContext, SummaryTable, codes_by, sum_table, totals_by, with_column
from batch.programs._kit.driver import Steps, run
from batch.programs._kit.exact import Q
from batch.programs._kit.findings import BASIS_POINTS, money_text
from batch.programs._kit.rules import Rules, lookup
from batch.programs._kit.steps import business_key, date_order, listing, name_key, portfolio_rows, running_across
from batch.programs._kit.text import join
from batch.programs.transfers import sheet
from batch.programs.transfers.sheet import TRANSFERS

SPEC = TRANSFERS

ID, PROGRAM, CERT, CERT_AMT = "Transfer ID", "Program", "Certificate ID", "Certificate Amount ($)"
FROM, TO, DATE = "Transferor", "Transferee", "Transfer Date"
CREDIT, PAID = "Credit Amount Transferred ($)", "Consideration Received ($)"
MINIMUM, RATIO, TO_DATE = "Minimum Transfer ($)", "Consideration Ratio", "Certificate Transferred To Date ($)"


def _cents(values) -> pd.Series:
    return pd.Series(values, dtype="Int64")


def _party(names: pd.Series) -> pd.Series:
    """Transferor and Transferee compared by the one business-name rule (`business_key`: `Acme Corp.`
    and `ACME Corporation` are one party). A blank name matches nothing: such a row is a party of its own."""
    key = business_key(names).astype(object)
    return key.where(key.notna(), pd.Series("\x00row " + names.index.astype(str), index=names.index))


def _small_transfer_key(rules: Rules, program: pd.Series, transferor: pd.Series, dates: pd.Series, credit: pd.Series) -> pd.Series:
    """The group a transfer counts in for the Urban Transit Hub small-transfer allowance: its
    Transferor (by the one business-name rule) and the calendar year of its Transfer Date ("2013
    sellerllc"), for a transfer that may use an allowance: of a program that allowed smaller
    transfers on that date, for less than that program's minimum then (a minimum capped at the
    certificate's amount is never above it; a credit not known may be less); None for any other. A
    transfer of at least its minimum neither uses an allowance nor is refused one, so it reads no
    other transfer of the group and no other reads it; a blank Transferor matches nothing."""
    allowance, _ = lookup(rules["small_transfers_per_tax_period"], program, dates)
    minimum, _ = lookup(rules["minimum_transfer"], program, dates)
    at_least = (pd.array(credit, dtype="Int64") >= pd.array(minimum, dtype="Int64")).fillna(False)
    allows = (pd.to_numeric(allowance, errors="coerce").fillna(0) > 0).to_numpy() & ~np.asarray(at_least, dtype=bool)
    key = np.full(len(program), None, dtype=object)
    if allows.any():  # the business-name rule only for the transfers that may use an allowance
        who = business_key(transferor[allows]).to_numpy(dtype=object, na_value=None)
        day = dates.to_numpy(dtype="datetime64[s]")[allows]
        year = np.datetime_as_string(day, unit="Y").astype(object)  # "2013"
        year[np.isnat(day)] = "<NA>"  # as a missing year reads as text
        named = pd.notna(who)  # a blank Transferor matches nothing
        mine = np.full(len(who), None, dtype=object)
        mine[named] = year[named] + " " + who[named]
        key[allows] = mine
    return pd.Series(key, index=program.index, dtype=object)


def portfolio_fields(f: pd.DataFrame, computed: pd.DataFrame | None = None) -> pd.DataFrame:
    """What the ledger keeps of each transfer for the certificate's later transfers (`Portfolio`):
    its certificate (and the certificate's key: IDs compared trimmed and case-insensitively), the
    Certificate Amount, the parties, the Transfer Date and the credit transferred (cents); and, for
    a transfer that may use a small-transfer allowance, the group it counts in (`_small_transfer_key`)."""
    return pd.DataFrame(
        {
            "program": f[PROGRAM],
            "certificate": f[CERT],
            "certificate_amount": f[CERT_AMT],
            "transferor": f[FROM],
            "transferee": f[TO],
            "date": f[DATE].dt.strftime("%Y-%m-%d"),
            "credit": f[CREDIT],
            "certificate_key": name_key(f[CERT]),
            "small_transfer_key": _small_transfer_key(sheet.rules, f[PROGRAM], f[FROM], f[DATE], f[CREDIT]),
        },
        index=f.index,
    )


def rows_of(records: pd.DataFrame) -> pd.DataFrame:
    """The transfers `records` (their kept fields, `record_id`) as rows of the sheet, to be judged
    again (`Portfolio.rows`): the Consideration Received is not kept, and is taken as the credit
    (the consideration rules, which read the row alone, are not judged again)."""
    credit = pd.array(records["credit"], dtype="Int64")
    return pd.DataFrame(
        {
            ID: records["record_id"].astype(str).to_numpy(dtype=object),
            PROGRAM: records["program"].to_numpy(dtype=object),
            CERT: records["certificate"].to_numpy(dtype=object),
            CERT_AMT: pd.array(records["certificate_amount"], dtype="Int64"),
            FROM: records["transferor"].to_numpy(dtype=object),
            TO: records["transferee"].to_numpy(dtype=object),
            DATE: pd.to_datetime(records["date"]).to_numpy(dtype="datetime64[s]"),
            CREDIT: credit,
            PAID: credit,
        }
    )


def _portfolio_rows(s: Transfers) -> pd.DataFrame:
    """Every transfer of the certificates of the sheet across the portfolio (and of the groups of its
    smaller transfers, `small`: a Transferor's year, `_small_transfer_key`), in the order the rules
    count them (`portfolio_rows`: Transfer Date, and on one date the order the run gives)."""
    f = s.f
    own = {
        "cert": s.cert.to_numpy(dtype=object),
        "credit": s.credit.to_numpy(),
        "amount": pd.array(f[CERT_AMT], dtype="Int64"),
        "transferee": f[TO].to_numpy(dtype=object),
        "program": s.program.to_numpy(dtype=object),
        "small": s.small_key.to_numpy(dtype=object),
    }

    def far(out: pd.DataFrame) -> dict:
        return {
            "cert": out["certificate_key"].to_numpy(dtype=object),
            "credit": pd.array(out["credit"], dtype="Int64").astype("int64"),
            "amount": pd.array(out["certificate_amount"], dtype="Int64"),
            "transferee": out["transferee"].to_numpy(dtype=object),
            "program": out["program"].to_numpy(dtype=object),
            "small": out["small_transfer_key"].to_numpy(dtype=object),
            "date": out["date"].to_numpy(dtype=object),
        }

    return portfolio_rows(s.context, own, s.dates, s.rank.to_numpy(), far)


class Transfers(Steps):
    """The rows of the sheet, the rules, and every column the steps have computed so far."""

    def __init__(self, f: pd.DataFrame, rules: Rules, context: RunContext):
        super().__init__(f, rules)
        self.context = context
        self.dates, self.program = f[DATE], f[PROGRAM]
        self.credit = f[CREDIT].astype("int64")
        self.paid = f[PAID].astype("int64")
        # Transfer Date order, row order breaking ties (the index is the row order)
        self.order = date_order(self.dates)
        self.rank = pd.Series(np.arange(len(self.order)), index=self.order).reindex(f.index)
        self.transferor = _party(f[FROM])
        self.cert = name_key(f[CERT])
        self.small_key = _small_transfer_key(rules, self.program, f[FROM], self.dates, self.credit)
        self.across = _portfolio_rows(self)


# -- the steps ----------------------------------------------------------------------------------


def certificate_amount_248(s: Transfers) -> None:
    """C.34:1B-248, C.34:1B-209.1, C.34:1B-129 g.(3), C.52:27D-489f b.(3): the certificate's amount, which
    the certificate total is held to and which caps the BEIP minimum. Given on any record of a
    certificate (a row of the sheet or a record of an earlier run), it applies to every record of it;
    of two different amounts the latest given, in the order the rules count, is used (the conflict is
    reported with the certificate total)."""
    a = s.across
    given = a.dropna(subset=["amount"])
    s.amount_of = given.groupby("cert", sort=False)["amount"].last()  # per certificate key
    s.cert_amount = pd.Series(s.cert.map(s.amount_of).to_numpy(), index=s.idx, dtype="Int64")
    firsts = given.drop_duplicates(["cert", "amount"])
    several = firsts["cert"].duplicated(keep=False).to_numpy()
    s.amount_conflict = s.cert.isin(firsts["cert"][several]).to_numpy()
    s.amounts_given = pd.Series("", index=s.idx, dtype=object)
    if s.amount_conflict.any():  # each amount named with the record that first gave it: the first ten, then how many more
        firsts = firsts[several]
        own_label = SPEC.name + " " + s.f[ID].astype(str).to_numpy(dtype=object) + " (this workbook)"
        label = firsts["label"].where(firsts["row"] < 0, pd.Series(own_label[firsts["row"].clip(lower=0)], index=firsts.index))
        text = "$" + pd.Series(money_text(firsts["amount"].astype("int64")), index=firsts.index) + " (" + label + ")"
        s.amounts_given = s.cert.map(listing(text, firsts["cert"], "; ", "; and {:,} more")).fillna("")


def _minimum(rules: Rules, program: pd.Series, dates: pd.Series, amount: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Each transfer's minimum (cents) in force on its date, and its citation: a BEIP minimum is the
    certificate's amount (`amount`, NA: not given) when that is less."""
    minimum, cite = lookup(rules["minimum_transfer"], program, dates)
    minimum = _cents(minimum)
    capped, _ = lookup(rules["minimum_capped_at_certificate"], program)
    cap = capped.astype(bool) & amount.notna()
    return minimum.where(~cap, np.minimum(minimum, amount)), cite


def minimum_transfer_248(s: Transfers) -> None:
    """C.34:1B-248, C.34:1B-209.1, C.34:1B-129 g.(3), C.52:27D-489f b.(3): a certificate may be sold or
    assigned only in an amount not less than its program's minimum in force on the Transfer Date; a
    BEIP minimum is the refundable credit issued (the Certificate Amount) when that is less."""
    s.minimum, s.min_cite = _minimum(s.rules, s.program, s.dates, s.cert_amount)
    s.below = s.credit < s.minimum


def small_transfer_allowance_209_1(s: Transfers) -> None:
    """C.34:1B-209.1 (the text before P.L.2014, c.63): one transfer in each tax period below the minimum
    is allowed per Transferor, the first in Transfer Date order across the portfolio (this sheet's
    rows, the other workbooks of the run and the records of earlier runs, `Transfers.across`); every
    other transfer below the minimum is reported, with the transfer that used the allowance (named
    with its workbook and run when it is another workbook's)."""
    if not s.below.any():  # every finding of the step is of a transfer below the minimum
        return
    f, dates, a = s.f, s.dates, s.across
    allowance, _ = lookup(s.rules["small_transfers_per_tax_period"], s.program, dates)
    allowance = allowance.astype("int64")
    candidate = s.below & (allowance > 0)
    # the transfers that may use an allowance, in the order the rules count: the sheet's rows below
    # the minimum and the portfolio's records below theirs, of a program allowing one on their date
    row = a["row"].to_numpy()
    own = row >= 0
    uses = np.zeros(len(a), dtype=bool)
    uses[own] = candidate.to_numpy()[row[own]]
    allowed_n = np.zeros(len(a), dtype=np.int64)
    allowed_n[own] = allowance.to_numpy()[row[own]]
    far = ~own & a["small"].notna().to_numpy()
    if far.any():
        other = a[far]
        amount = other["cert"].map(s.amount_of).astype("Int64")
        least, _ = _minimum(s.rules, other["program"], other["date"], amount)
        n, _ = lookup(s.rules["small_transfers_per_tax_period"], other["program"], other["date"])
        n = n.astype("int64")
        uses[far] = ((other["credit"].astype("Int64") < least).fillna(False) & (n > 0)).to_numpy(dtype=bool)
        allowed_n[far] = n.to_numpy()
    # a Transferor whose name gives no business key matches nothing: its row is a group of its own
    group = a["small"].where(a["small"].notna(), "\x00row " + pd.Series(row).astype(str)).to_numpy(dtype=object)
    name = np.where(own, f[ID].astype(str).to_numpy(dtype=object)[np.clip(row, 0, None)], a["label"].to_numpy(dtype=object))
    c = pd.DataFrame({"group": group[uses], "row": row[uses], "n": allowed_n[uses], "name": name[uses], "far": ~own[uses]})
    by = c.groupby("group", sort=False)
    c["allowed"] = by.cumcount().to_numpy() < c["n"].to_numpy()
    c["first"], c["first_far"] = by["name"].transform("first"), by["far"].transform("first")
    mine = c[c["row"] >= 0].set_index(s.idx[c.loc[c["row"] >= 0, "row"].to_numpy()])
    allowed = mine["allowed"].reindex(f.index, fill_value=False).to_numpy(dtype=bool)
    first_far = mine["first_far"].reindex(f.index, fill_value=False).to_numpy(dtype=bool)
    effective = pd.Series(None, index=f.index, dtype=object)
    for case, param in s.rules["minimum_transfer"].items():
        m = (s.program == case).to_numpy()
        effective[m] = param.next_change(dates[m])
    year = dates.dt.year
    fields = dict(program=s.program, credit=s.credit, minimum=s.minimum, date=dates, citation=s.min_cite)
    refused = candidate.to_numpy() & ~allowed
    s.emit("TRANSFER_BELOW_MINIMUM", s.below & ~candidate, **fields)
    s.emit("TRANSFER_BELOW_MINIMUM", refused & ~first_far, variant="allowance_used", transferor=f[FROM], year=year,
           first_id=mine["first"], **fields)  # fmt: skip
    s.emit("TRANSFER_BELOW_MINIMUM", refused & first_far, variant="allowance_used_elsewhere", transferor=f[FROM], year=year,
           record=mine["first"], **fields)  # fmt: skip
    s.emit("SMALL_TRANSFER_ALLOWANCE_USED", allowed, transferor=f[FROM], year=year, effective=effective, **fields)


def erg_no_minimum_489f_b3(s: Transfers) -> None:
    """C.52:27D-489f b.(3), b.(2)(e): an ERG Residential certificate has no minimum, but its credits move
    "as if" awarded under C.34:1B-209.3, which is not in the sources: a transfer under the confirm
    amount is for the reviewer to confirm."""
    confirm_below, confirm_cite = lookup(s.rules["erg_confirm_no_minimum_below"], s.program)
    confirm_below = _cents(confirm_below)
    under = (s.credit < confirm_below).fillna(False).to_numpy(dtype=bool)
    s.emit("ERG_TRANSFER_UNDER_25000", under, credit=s.credit, threshold=confirm_below, date=s.dates, citation=confirm_cite)


def consideration_ratio_248(s: Transfers) -> None:
    """C.34:1B-248, C.34:1B-209.1, C.34:1B-129 g.(3), C.52:27D-489f b.(3): the consideration received
    may not be less than the minimum share (75 percent) of the credit transferred, compared exactly
    in integer cents; consideration above the credit's face is reported too."""
    paid, credit = s.paid, s.credit
    min_ratio, ratio_cite = lookup(s.rules["minimum_consideration_ratio"], s.program)
    ratio_q = Q.from_fractions(min_ratio)  # each distinct ratio taken apart once
    num = pd.Series(ratio_q.num.astype(np.int64), index=min_ratio.index)
    den = pd.Series(ratio_q.den.astype(np.int64), index=min_ratio.index)
    s.ratio = paid / credit  # Credit Amount Transferred is more than $0 (validated)
    ratio_bp = (paid * BASIS_POINTS) // credit  # hundredths of a percent, floored, for messages
    min_bp = (num * BASIS_POINTS) // den
    short = paid * den < credit * num
    ratio_fields = dict(consideration=paid, credit=credit, ratio=ratio_bp, citation=ratio_cite)
    s.emit("CONSIDERATION_BELOW_75PCT", short, minimum_ratio=min_bp, **ratio_fields)
    s.emit("CONSIDERATION_ABOVE_FACE", paid > credit, **ratio_fields)


def certificate_total_248(s: Transfers) -> None:
    """C.34:1B-248, C.34:1B-209.1, C.34:1B-129 g.(3), C.52:27D-489f b.(3): the credit transferred from one
    certificate, summed in Transfer Date order over the portfolio (this sheet's rows and the records
    of earlier runs), may not exceed its Certificate Amount; every row from the one that crosses it
    onward is over. A certificate given no amount on any record is not checked, and says so; one
    given two amounts is checked against the latest, and says so."""
    f, a = s.f, s.across
    limited, limit_cite = lookup(s.rules["certificate_amount_limit"], s.program)
    limited = limited.astype(bool).to_numpy()
    total, crossed, elsewhere, counted, named = running_across(a, a["cert"].to_numpy(), a["cert"].map(s.amount_of).astype("Int64"))
    own = a["row"].to_numpy() >= 0
    at = s.idx[a["row"].to_numpy()[own]]
    s.to_date = pd.Series(total[own], index=at).reindex(s.idx)
    over = pd.Series(crossed[own], index=at).reindex(s.idx).to_numpy() & limited
    far_count = pd.Series(counted[own], index=at).reindex(s.idx)
    far_cents = pd.Series(elsewhere[own], index=at).reindex(s.idx)
    far_named = pd.Series(named[own], index=at).reindex(s.idx)
    s.emit(
        "CERTIFICATE_OVERTRANSFERRED",
        over & (far_count == 0).to_numpy(),
        certificate=f[CERT],
        to_date=s.to_date,
        certificate_amount=s.cert_amount,
        excess=s.to_date - s.cert_amount,
        citation=limit_cite,
    )
    s.emit(
        "CERTIFICATE_OVERTRANSFERRED",
        over & (far_count > 0).to_numpy(),
        variant="elsewhere",
        certificate=f[CERT],
        to_date=s.to_date,
        certificate_amount=s.cert_amount,
        excess=s.to_date - s.cert_amount,
        elsewhere=far_cents,
        records=far_named,
        citation=limit_cite,
    )
    s.emit("CERTIFICATE_AMOUNT_CONFLICT", s.amount_conflict & limited, certificate=f[CERT], amounts=s.amounts_given,
           used=s.cert_amount, citation=limit_cite)  # fmt: skip
    s.emit("CERTIFICATE_AMOUNT_NOT_GIVEN", s.cert_amount.isna().to_numpy() & limited, certificate=f[CERT], citation=limit_cite)


def beip_no_retransfer_129g3(s: Transfers) -> None:
    """C.34:1B-129 g.(3), last sentence: the transferee of a BEIP credit may not transfer it on. A BEIP row
    whose Transferor is the Transferee of another transfer of the same certificate in the portfolio
    (a row of the sheet, a record of another workbook of the run or of an earlier run) dated on or
    before this row's Transfer Date is barred, wherever that transfer stands (a same-day resale listed
    above the purchase is still a resale); a purchase dated after the sale is not one.

    Vectorized: only the first two purchases of each (certificate, transferee) in Transfer Date order
    can be a sale's earliest other purchase (the second stands in when the first is the sale itself),
    so each sale is merged with at most two rows, however large the certificate."""
    f, a = s.f, s.across
    may_retransfer, retransfer_cite = lookup(s.rules["transferee_may_retransfer"], s.program)
    barred = ~may_retransfer.astype(bool).to_numpy()
    if not barred.any():  # only a sale of a program whose transferee may not transfer on can be barred
        return
    # each transfer's Transferee as a party: the business-name rule once per distinct name (a blank
    # name is a party of its own, as `_party` makes it)
    names = pd.Series(a["transferee"].to_numpy(dtype=object))
    distinct = names.dropna().drop_duplicates()
    key = pd.Series(business_key(distinct).astype(object).to_numpy(), index=distinct.to_numpy())
    who = names.map(key)
    a = a.assign(who=who.where(who.notna(), "\x00across " + names.index.astype(str)).to_numpy(dtype=object))
    # nor a sale by a party that bought from no transfer of the same certificate (the keys joined by a
    # NUL: text holding one may meet another key by mistake, which only costs the matching below)
    if not (s.cert + "\x00" + s.transferor)[barred].isin(a["cert"] + "\x00" + a["who"]).any():
        return
    own = a["row"].to_numpy() >= 0
    at = np.where(own, s.idx[np.clip(a["row"].to_numpy(), 0, None)], -1 - np.arange(len(a)))  # a record elsewhere: below 0
    name = np.where(own, f[ID].astype(str).to_numpy(dtype=object)[np.clip(a["row"].to_numpy(), 0, None)], a["label"].to_numpy(dtype=object))
    bought = pd.DataFrame({"cert": a["cert"], "who": a["who"], "bought": at, "rank": np.arange(len(a)), "id": name, "date": a["date"],
                           "far": a["far"]})  # fmt: skip
    bought = bought[bought.groupby(["cert", "who"], sort=False).cumcount() < 2]
    sales = pd.DataFrame({"cert": s.cert, "who": s.transferor, "row": f.index, "sold": s.dates})[barred]
    pairs = sales.merge(bought, on=["cert", "who"], how="inner")
    pairs = pairs[(pairs["bought"] != pairs["row"]) & (pairs["date"] <= pairs["sold"])]
    resold = pairs.sort_values("rank").drop_duplicates("row").set_index("row")
    far = resold["far"].reindex(f.index, fill_value=False).to_numpy(dtype=bool)
    hit = f.index.isin(resold.index)
    fields = dict(transferor=f[FROM], certificate=f[CERT], earlier_date=resold["date"], citation=retransfer_cite)
    s.emit("BEIP_RETRANSFER_PROHIBITED", hit & ~far, earlier_id=resold["id"], **fields)
    s.emit("BEIP_RETRANSFER_PROHIBITED", hit & far, variant="elsewhere", record=resold["id"], **fields)


STEPS = (
    certificate_amount_248,
    minimum_transfer_248,
    small_transfer_allowance_209_1,
    erg_no_minimum_489f_b3,
    consideration_ratio_248,
    certificate_total_248,
    beip_no_retransfer_129g3,
)


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    s = run(Transfers(frame, rules, context or RunContext.today()), STEPS)
    computed = pd.DataFrame(
        {MINIMUM: s.minimum, RATIO: s.ratio.astype("float64"), TO_DATE: s.to_date.astype("Int64")},
        index=frame.index,
    )
    return Calculation(computed, s.findings, ineligible=pd.Series(False, index=frame.index))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Pivot by Program: transfers, credit, consideration, weighted ratio; rows with each finding code by Program.

    `frame` holds every row (typed inputs and computed columns), `status` each row's Status and
    `codes` one row per (row, Code) finding.
    """
    computed = status != "Invalid"
    rows = frame[computed]
    pivot = totals_by(
        rows, [PROGRAM], **{"Transfers": (ID, "size"), "Credit Transferred ($)": (CREDIT, "sum"), "Consideration ($)": (PAID, "sum")}
    )
    pivot["Weighted Consideration Ratio"] = pivot["Consideration ($)"] / pivot["Credit Transferred ($)"]
    # the invalid rows of each program of the table (of a program with no computed row: not shown)
    at = pd.Index(pivot[PROGRAM]).get_indexer(frame.loc[~computed, PROGRAM])
    pivot["Invalid Rows"] = np.bincount(at[at >= 0], minlength=len(pivot)).astype(int)
    flagged = with_column(codes, frame, PROGRAM)
    by_code = codes_by(flagged, PROGRAM)
    formats = {"Credit Transferred ($)": "money", "Consideration ($)": "money", "Weighted Consideration Ratio": "percent"}
    by_year = sum_table(rows[PROGRAM], rows[DATE].dt.year.rename("Year"), rows[CREDIT])
    by_year.columns = [str(c) for c in by_year.columns]
    by_year = by_year.reset_index()
    return [
        SummaryTable("Transfers by Program", pivot, formats),
        SummaryTable("Rows by finding code and Program (the most frequent first)", by_code),
        SummaryTable("Credit transferred ($) by Program and year of transfer", by_year, {c: "money" for c in by_year.columns[1:]}),
    ]


def standing(records: pd.DataFrame, rules: Rules) -> dict[str, SummaryTable]:
    """The `Certificates` sheet of `njcredits portfolio`: each certificate's standing position over
    the latest version of every transfer of it (`records`: the ledger's, with their portfolio fields,
    Status and `tie`), counted as its rules count it (neither Invalid nor Ineligible, in Transfer
    Date order, ties by `tie`): its amount (the latest given), the credit transferred to date, what
    remains or how far it is over, its transfers and workbooks, and the violations standing now
    (CERTIFICATE_OVERTRANSFERRED, CERTIFICATE_AMOUNT_CONFLICT, CERTIFICATE_AMOUNT_NOT_GIVEN, for the
    programs whose certificates are held to their amount)."""
    columns = ["Certificate", "Program", "Certificate Amount ($)", "Transferred To Date ($)", "Remaining ($)", "Over By ($)",
               "Transfers", "Workbooks", "Rows Flagged", "Open Violations"]  # fmt: skip
    money = {c: "money" for c in columns if c.endswith("($)")}
    counted = records[~records["status"].isin(["Invalid", "Ineligible"]) & records["certificate_key"].notna()]
    if counted.empty:
        return {"Certificates": SummaryTable("Certificates", pd.DataFrame(columns=columns), money)}
    a = counted.assign(credit=pd.array(counted["credit"], dtype="Int64"), amount=pd.array(counted["certificate_amount"], dtype="Int64"))
    a = a.sort_values(["date", "tie"], kind="stable")
    by = a.groupby("certificate_key", sort=True)
    given = a.dropna(subset=["amount"]).groupby("certificate_key")["amount"]
    amount = given.last().reindex(by.size().index).astype("Int64")
    total = by["credit"].sum().astype("Int64")
    program = by["program"].last()
    limited, _cite = lookup(rules["certificate_amount_limit"], program)
    limited = pd.Series(limited.astype(bool).to_numpy(), index=program.index)
    over = (total - amount).clip(lower=0).where(amount.notna())
    violations = [
        pd.Series(np.where((over > 0).fillna(False) & limited, "CERTIFICATE_OVERTRANSFERRED", ""), index=amount.index),
        pd.Series(
            np.where((given.nunique().reindex(amount.index) > 1).fillna(False) & limited, "CERTIFICATE_AMOUNT_CONFLICT", ""),
            index=amount.index,
        ),  # fmt: skip
        pd.Series(np.where(amount.isna() & limited, "CERTIFICATE_AMOUNT_NOT_GIVEN", ""), index=amount.index),
    ]
    table = pd.DataFrame(
        {
            "Certificate": by["certificate"].last(),  # as its latest transfer spells it
            "Program": program,
            "Certificate Amount ($)": amount,
            "Transferred To Date ($)": total,
            "Remaining ($)": (amount - total).clip(lower=0),
            "Over By ($)": over,
            "Transfers": by.size(),
            "Workbooks": by["book"].nunique(),
            "Rows Flagged": a["status"].eq("Flagged").groupby(a["certificate_key"]).sum(),
            "Open Violations": pd.Series(join([v.to_numpy(dtype=object) for v in violations], "; "), index=amount.index).replace("", None),
        }
    ).reset_index(drop=True)
    return {"Certificates": SummaryTable("Certificates: the standing position of every certificate in the ledger", table, money)}
