"""Check: the task's unit tests (a pristine copy kept outside the work dir) pass."""

import subprocess
import sys
from pathlib import Path

hidden = Path(__file__).parent / "hidden_test.py"
sys.exit(subprocess.run([sys.executable, "-c", hidden.read_text(encoding="utf-8")], check=False).returncode)
