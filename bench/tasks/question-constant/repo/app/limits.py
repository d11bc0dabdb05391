"""Request limits."""

MAX_UPLOAD_MB = 25
MAX_FILES = 10
