"""This program's declaration, found by `batch.programs`: its sheet, its steps, its intake text and what
it needs from the run (its rules are this folder's YAML files)."""

from batch.programs._kit.program import CROSS_WORKBOOK_LIMITS, Limit, Portfolio, PriorIncentive, Program, Records
from batch.programs.brrap import intake, steps
from batch.programs.brrap.sheet import BRRAP

PROGRAM = Program(
    BRRAP,
    steps.calculate,
    steps.summarize,
    steps.STEPS,
    intake=intake.INTAKE,
    award_column="Grant Amount ($)",
    year_column="First Tax Period",
    needs=frozenset({CROSS_WORKBOOK_LIMITS}),
    prior_incentive=PriorIncentive(name="Business Name"),
    # a business's credit of a tax period, and every grant's together, count the portfolio: the grants
    # of the run's other workbooks and of earlier runs in the years of the sheet's grants
    portfolio=Portfolio(
        steps.portfolio_fields,
        fields=("business", "business_key", "first_period", "tax_periods", "grant"),
        groupings=("business_years", "years"),
        standing=steps.standing,
        rows=steps.rows_of,
        judged=("BUSINESS_ANNUAL_LIMIT_EXCEEDED", "AGGREGATE_ANNUAL_LIMIT_EXCEEDED"),
        reads_computed=False,  # its fields are worked out from the row's own cells, never from its computed columns
    ),
    # each grant's credit per tax period counts against the limits of P.L.2004 c.65 s.7 a. across
    # every workbook of a run: one business's credit, and every grant's together
    records=Records(
        steps.run_credit_by_year,
        fields=("grant", "business", "business_name", "year", "credit"),
        record="grant",
        amount="credit",
        order_by=("year", "grant"),
        limits=(
            Limit("business_annual_limit", group_by=("business", "year")),
            Limit(
                "aggregate_annual_limit",
                group_by=("year",),
                sheet="BRRAP Aggregate",
                title="BRRAP credit per tax period of this run's workbooks only (P.L.2004 c.65 s.7 a.); each row's findings also count "
                "earlier runs, and njcredits portfolio shows the whole portfolio",
                group_headers=("Tax Period",),
                records_header="Grants",
            ),
        ),
    ),
)
