import unittest

from shapes import circle_area, rectangle_area


class ShapesTest(unittest.TestCase):
    def test_circle(self):
        self.assertAlmostEqual(circle_area(1), 3.14159, places=4)

    def test_rectangle(self):
        self.assertEqual(rectangle_area(3, 4), 12)


if __name__ == "__main__":
    unittest.main(argv=["x"])
