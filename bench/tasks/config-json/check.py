"""Check: config.json is valid JSON with port 9090, debug false, other keys unchanged."""

import json
import pathlib
import sys

data = json.loads(pathlib.Path("config.json").read_text(encoding="utf-8"))
expected = {"name": "inventory-service", "port": 9090, "debug": False, "workers": 4}
sys.exit(0 if data == expected else f"config.json is {data}")
