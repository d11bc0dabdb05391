"""TTSR — time-traveling stream rules (agent-behaviour §12).

``rules`` finds and parses rule files, ``matcher`` checks streamed deltas against them
(pure), ``feature`` interrupts the run and injects the violated rule.
"""
