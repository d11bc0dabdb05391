"""Check: the agent's final answer (file given by XCSH_BENCH_ANSWER) mentions 8765."""

import os
import pathlib
import re
import sys

answer = pathlib.Path(os.environ["XCSH_BENCH_ANSWER"]).read_text(encoding="utf-8")
missing = [p for p in ["\\b8765\\b"] if not re.search(p, answer, re.IGNORECASE)]
sys.exit(0 if not missing else f"answer lacks {missing}: {answer!r}")
