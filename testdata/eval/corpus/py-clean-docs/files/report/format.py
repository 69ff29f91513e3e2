def money(cents):
    """Format a non-negative amount of cents as units and cents: 1234 -> "12.34"."""
    return "%d.%02d" % (cents // 100, cents % 100)
