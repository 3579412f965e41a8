"""Tax credit transfer certificates (README, sheet `Transfers`).

Pure and vectorized: `calculate(frame, rules)` takes the validated rows of the `Transfers`
sheet (money in integer cents) and returns the computed columns and the findings. Every number
comes from `batch/rules/transfers/parameters.yaml`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from batch.calculators import Calculation, RunContext, SummaryTable, codes_by
from batch.calculators.shared import business_key, date_order, name_key, running_over
from batch.findings import BASIS_POINTS, emit
from batch.rules import Rules, lookup
from validators.transfers import TRANSFERS

SPEC = TRANSFERS
RULES = "transfers"
# The amount that the Summary chart and the portfolio totals call this sheet's award.
AWARD_COLUMN = "Credit Amount Transferred ($)"
MONTH_COLUMN = "Transfer Date"  # the Summary's by-month pivot
# What the run report groups this sheet by: an area or category column (or None) and a year column.
AREA_COLUMN = "Program"
YEAR_COLUMN = "Transfer Date"

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


def calculate(frame: pd.DataFrame, rules: Rules, context: RunContext | None = None) -> Calculation:
    dates = frame[DATE]
    credit = frame[CREDIT].astype("int64")
    paid = frame[PAID].astype("int64")
    program = frame[PROGRAM]
    # Transfer Date order, row order breaking ties (the index is the row order)
    order = date_order(dates)
    rank = pd.Series(np.arange(len(order)), index=order).reindex(frame.index)
    findings = []

    # Minimum transfer (C.34:1B-248, -209.1, -129 g.(3), 52:27D-489f b.(3)), the step in force at the date
    minimum, min_cite = lookup(rules["minimum_transfer"], program, dates)
    minimum = _cents(minimum)
    capped, _ = lookup(rules["minimum_capped_at_certificate"], program)
    cap = capped.astype(bool) & frame[CERT_AMT].notna()
    minimum = minimum.where(~cap, np.minimum(minimum, frame[CERT_AMT]))
    below = credit < minimum

    # One smaller transfer per Transferor and tax period where the text in force allowed it
    allowance, _ = lookup(rules["small_transfers_per_tax_period"], program, dates)
    allowance = allowance.astype("int64")
    candidate = below & (allowance > 0)
    year = dates.dt.year
    transferor = _party(frame[FROM])
    ordered = frame.loc[order[candidate.reindex(order).to_numpy()]]
    used = ordered.groupby([transferor[ordered.index], year[ordered.index]]).cumcount()
    first_id = ordered.groupby([transferor[ordered.index], year[ordered.index]])[ID].transform("first")
    allowed = pd.Series(False, index=frame.index)
    allowed[used.index] = (used < allowance[used.index]).to_numpy()
    effective = pd.Series(None, index=frame.index, dtype=object)
    for case, param in rules["minimum_transfer"].items():
        m = (program == case).to_numpy()
        effective[m] = param.next_change(dates[m])
    common = dict(program=program, credit=credit, minimum=minimum, date=dates, citation=min_cite)
    findings.append(emit("TRANSFER_BELOW_MINIMUM", frame.index[below & ~candidate], **common))
    findings.append(
        emit(
            "TRANSFER_BELOW_MINIMUM",
            frame.index[candidate & ~allowed],
            variant="allowance_used",
            transferor=frame[FROM],
            year=year,
            first_id=first_id,
            **common,
        )
    )
    findings.append(
        emit(
            "SMALL_TRANSFER_ALLOWANCE_USED",
            frame.index[allowed],
            transferor=frame[FROM],
            year=year,
            effective=effective,
            **common,
        )
    )

    # ERG Residential: no minimum (b.(3)), but the credits move "as if" awarded under C.34:1B-209.3,
    # which is not in the sources: a transfer under $25,000 is for the reviewer to confirm
    confirm_below, confirm_cite = lookup(rules["erg_confirm_no_minimum_below"], program)
    confirm_below = _cents(confirm_below)
    under = (credit < confirm_below).fillna(False).to_numpy(dtype=bool)
    findings.append(
        emit("ERG_TRANSFER_UNDER_25000", frame.index[under], credit=credit, threshold=confirm_below, date=dates, citation=confirm_cite)
    )

    # Consideration at least 75% of the credit transferred, compared exactly in integer cents
    min_ratio, ratio_cite = lookup(rules["minimum_consideration_ratio"], program)
    num = min_ratio.map(lambda f: f.numerator).astype("int64")
    den = min_ratio.map(lambda f: f.denominator).astype("int64")
    ratio = paid / credit
    ratio_bp = (paid * BASIS_POINTS) // credit  # hundredths of a percent, floored, for messages
    min_bp = (num * BASIS_POINTS) // den
    short = paid * den < credit * num
    ratio_fields = dict(consideration=paid, credit=credit, ratio=ratio_bp, citation=ratio_cite)
    findings.append(emit("CONSIDERATION_BELOW_75PCT", frame.index[short], minimum_ratio=min_bp, **ratio_fields))
    findings.append(emit("CONSIDERATION_ABOVE_FACE", frame.index[paid > credit], **ratio_fields))

    # Running total per certificate in Transfer Date order; over the Certificate Amount from the
    # row that crosses it onward
    cert = name_key(frame[CERT])
    limited, limit_cite = lookup(rules["certificate_amount_limit"], program)
    to_date, over = running_over(order, cert, credit, frame[CERT_AMT].where(limited.astype(bool)))
    cert_amount = frame[CERT_AMT][order].groupby(cert[order].to_numpy()).ffill().reindex(frame.index)
    findings.append(
        emit(
            "CERTIFICATE_OVERTRANSFERRED",
            frame.index[over],
            certificate=frame[CERT],
            to_date=to_date,
            certificate_amount=cert_amount,
            excess=to_date - cert_amount,
            citation=limit_cite,
        )
    )

    # BEIP: a transferee may not transfer its credit on (C.34:1B-129 g.(3), last sentence)
    may_retransfer, retransfer_cite = lookup(rules["transferee_may_retransfer"], program)
    first = (
        pd.DataFrame({"cert": cert, "who": _party(frame[TO]), "rank": rank, "id": frame[ID], "date": dates})
        .sort_values("rank")
        .drop_duplicates(["cert", "who"])
    )
    seen = pd.DataFrame({"cert": cert, "who": transferor, "row": frame.index, "rank": rank}).merge(
        first, on=["cert", "who"], how="inner", suffixes=("", "_first")
    )
    seen = seen[seen["rank_first"] < seen["rank"]].set_index("row")
    retransfer = frame.index[(~may_retransfer.astype(bool)) & frame.index.isin(seen.index)]
    findings.append(
        emit(
            "BEIP_RETRANSFER_PROHIBITED",
            retransfer,
            transferor=frame[FROM],
            certificate=frame[CERT],
            earlier_date=seen["date"],
            earlier_id=seen["id"],
            citation=retransfer_cite,
        )
    )

    computed = pd.DataFrame({MINIMUM: minimum, RATIO: ratio.astype("float64"), TO_DATE: to_date.astype("Int64")}, index=frame.index)
    return Calculation(computed, findings, ineligible=pd.Series(False, index=frame.index))


def summarize(frame: pd.DataFrame, status: pd.Series, codes: pd.DataFrame, rules: Rules) -> list[SummaryTable]:
    """Pivot by Program: transfers, credit, consideration, weighted ratio; rows with each finding code by Program.

    `frame` holds every row (typed inputs and computed columns), `status` each row's Status and
    `codes` one row per (row, Code) finding.
    """
    computed = status != "Invalid"
    rows = frame[computed]
    pivot = rows.groupby(PROGRAM, sort=True).agg(
        **{
            "Transfers": (ID, "size"),
            "Credit Transferred ($)": (CREDIT, "sum"),
            "Consideration ($)": (PAID, "sum"),
        }
    )
    pivot["Weighted Consideration Ratio"] = pivot["Consideration ($)"] / pivot["Credit Transferred ($)"]
    pivot["Invalid Rows"] = frame[~computed].groupby(PROGRAM).size().reindex(pivot.index).fillna(0).astype(int)
    flagged = codes.merge(frame[[PROGRAM]], left_on="row", right_index=True)
    by_code = codes_by(flagged, PROGRAM)
    pivot = pivot.reset_index()
    formats = {"Credit Transferred ($)": "money", "Consideration ($)": "money", "Weighted Consideration Ratio": "percent"}
    by_year = rows.assign(Year=rows[DATE].dt.year).pivot_table(index=PROGRAM, columns="Year", values=CREDIT, aggfunc="sum", fill_value=0)
    by_year.columns = [str(c) for c in by_year.columns]
    by_year = by_year.reset_index()
    return [
        SummaryTable("Transfers by Program", pivot, formats),
        SummaryTable("Rows by finding code and Program (the most frequent first)", by_code),
        SummaryTable("Credit transferred ($) by Program and year of transfer", by_year, {c: "money" for c in by_year.columns[1:]}),
    ]
