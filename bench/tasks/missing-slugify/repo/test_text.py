import unittest

from text import slugify


class SlugTest(unittest.TestCase):
    def test_slugify(self):
        self.assertEqual(slugify("Hello World"), "hello-world")
        self.assertEqual(slugify("  Many   Spaces  Here "), "many-spaces-here")


if __name__ == "__main__":
    unittest.main()
