"""Check: run.py runs and prints the greeting; helpers.py still defines it."""

import subprocess
import sys

out = subprocess.run([sys.executable, "run.py"], capture_output=True, text=True, check=False)
sys.exit(
    0
    if out.returncode == 0 and out.stdout.strip() == "hello, world"
    else f"run.py: {out.stdout!r} {out.stderr!r}"
)
