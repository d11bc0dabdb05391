import math


def circle_area(radius):
    """Area of a circle."""
    return math.pi * radius * radius
