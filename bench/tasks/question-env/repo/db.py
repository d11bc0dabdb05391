import os


def connection_string():
    return os.environ.get("DATABASE_URL", "sqlite:///local.db")


def pool_size():
    return int(os.environ.get("POOL_SIZE", "5"))
