def greeting(name):
    return f"hello, {name}"
