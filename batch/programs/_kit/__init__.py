"""What every program uses: the declaration (`program`: Program, Intake, Sample, Records, Limit),
the steps driver (`driver`: Steps and run), the calculation types, the shared vectorized steps,
exact money, findings rendering, the rules loader, the hint text helpers (`rules_text`) and the
helpers of an explanation column (`text`)."""
