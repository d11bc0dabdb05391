"""Check: compute_total is defined and used, calc_total is gone, main.py prints 18.6."""

import pathlib
import subprocess
import sys

sources = {p.name: p.read_text(encoding="utf-8") for p in pathlib.Path(".").glob("*.py")}
if any("calc_total" in text for text in sources.values()):
    sys.exit("calc_total is still present")
if "def compute_total" not in sources.get("billing.py", ""):
    sys.exit("billing.py does not define compute_total")
out = subprocess.run([sys.executable, "main.py"], capture_output=True, text=True, check=False)
sys.exit(0 if out.stdout.strip() == "18.6" else f"main.py printed {out.stdout!r} {out.stderr!r}")
