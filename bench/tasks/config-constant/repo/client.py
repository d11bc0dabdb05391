from settings import BASE_URL, MAX_RETRIES


def describe():
    return f"{BASE_URL} with {MAX_RETRIES} retries"
