"""The conformance kit: black-box protocol scenarios run against any agent speaking the RPC protocol.

``xcsh conformance --agent-cmd "<command>"`` starts the shipped fake LLM server
(:mod:`xcsh.testing`), points the agent at it through a models file, and checks the
frames the agent writes against each scenario's expected frames (docs/conformance.md).
"""
