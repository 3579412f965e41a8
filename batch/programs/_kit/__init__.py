"""What every program uses: the declaration (`program`), the calculation types and the shared
vectorized steps, exact money, findings rendering, the rules loader and the hint text helpers."""
