import math


def circle_area(radius):
    """Area of a circle."""
    return math.pi * radius * radius


def rectangle_area(width, height):
    return width * height
