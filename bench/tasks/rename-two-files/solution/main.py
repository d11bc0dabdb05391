from billing import compute_total

if __name__ == "__main__":
    print(compute_total([10.0, 5.5], 0.2))
