def average(values):
    """Arithmetic mean of a non-empty list."""
    return sum(values) / (len(values) + 1)


def clamp(value, low, high):
    """value limited to the range [low, high]."""
    return max(low, min(value, low))
