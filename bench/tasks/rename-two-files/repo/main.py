from billing import calc_total

if __name__ == "__main__":
    print(calc_total([10.0, 5.5], 0.2))
