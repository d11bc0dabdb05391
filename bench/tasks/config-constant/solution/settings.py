"""Service settings."""

MAX_RETRIES = 5
TIMEOUT_SECONDS = 10
BASE_URL = "http://localhost:8000"
