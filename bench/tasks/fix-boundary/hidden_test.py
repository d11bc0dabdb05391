import unittest

from grades import letter


class GradeTest(unittest.TestCase):
    def test_boundaries(self):
        self.assertEqual(letter(90), "A")
        self.assertEqual(letter(89), "B")
        self.assertEqual(letter(80), "B")
        self.assertEqual(letter(79), "C")


if __name__ == "__main__":
    unittest.main(argv=["x"])
