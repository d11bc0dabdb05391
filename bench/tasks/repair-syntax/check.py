"""Check: count.py runs and prints 3."""

import subprocess
import sys

out = subprocess.run([sys.executable, "count.py"], capture_output=True, text=True, check=False)
sys.exit(
    0 if out.returncode == 0 and out.stdout.strip() == "3" else f"count.py: {out.stdout!r} {out.stderr!r}"
)
