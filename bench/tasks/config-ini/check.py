"""Check: settings.ini has server.timeout 60 and logging.level debug, other values unchanged."""

import configparser
import sys

parser = configparser.ConfigParser()
parser.read("settings.ini", encoding="utf-8")
got = {s: dict(parser[s]) for s in parser.sections()}
expected = {
    "server": {"host": "127.0.0.1", "timeout": "60"},
    "logging": {"level": "debug", "file": "app.log"},
}
sys.exit(0 if got == expected else f"settings.ini is {got}")
