"""Check: settings.MAX_RETRIES is 5 and the other settings are unchanged."""

import runpy
import sys

ns = runpy.run_path("settings.py")
ok = (
    ns.get("MAX_RETRIES") == 5
    and ns.get("TIMEOUT_SECONDS") == 10
    and ns.get("BASE_URL") == "http://localhost:8000"
)
sys.exit(0 if ok else f"settings: {ns.get('MAX_RETRIES')!r} {ns.get('TIMEOUT_SECONDS')!r}")
