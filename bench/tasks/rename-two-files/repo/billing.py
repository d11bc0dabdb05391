def calc_total(prices, tax_rate):
    """Sum of prices plus tax."""
    subtotal = sum(prices)
    return round(subtotal * (1 + tax_rate), 2)
