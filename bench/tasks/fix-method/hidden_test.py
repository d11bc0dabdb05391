import unittest

from inventory import Inventory


class InventoryTest(unittest.TestCase):
    def test_total_counts_every_item(self):
        inv = Inventory()
        inv.add("apple", 3)
        inv.add("pear", 2)
        self.assertEqual(inv.total(), 5)


if __name__ == "__main__":
    unittest.main(argv=["x"])
