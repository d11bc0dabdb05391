"""Service settings."""

MAX_RETRIES = 2
TIMEOUT_SECONDS = 10
BASE_URL = "http://localhost:8000"
