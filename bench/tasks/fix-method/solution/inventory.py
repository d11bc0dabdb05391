class Inventory:
    """Item name -> quantity."""

    def __init__(self):
        self.items = {}

    def add(self, name, quantity):
        self.items[name] = self.items.get(name, 0) + quantity

    def total(self):
        count = 0
        for quantity in self.items.values():
            count += quantity
        return count
