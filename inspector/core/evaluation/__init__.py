"""Gold sets, metrics, configurations, comparisons, sweeps and reports."""
