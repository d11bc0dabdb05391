"""xcsh: a coding agent driven over a JSON-lines RPC protocol."""

__version__ = "0.1.0"
