"""The category of warnings about input that is valid but implausible (no imports: the command
line sets how often it is shown before anything heavy loads)."""


class PlausibilityWarning(UserWarning):
    """Input that is valid but implausible as a table of training runs (swapped columns, losses in
    another unit, a run far from the rest): the work goes on, the warning says what to check.
    ``jaxscale`` commands print each such warning once."""
