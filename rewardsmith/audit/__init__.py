"""Judge bias audit: held-out sets with verifiable gold, bias metrics with confidence intervals, reports."""
