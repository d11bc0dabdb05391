"""The ``calc`` tool: evaluate arithmetic expressions safely.

Contract (reference ``calc``): ``{calculations: [{expression, prefix, suffix}]}``;
the result has one line per calculation, ``prefix + value + suffix``; ``details``
is ``{results: [{expression, value, output}]}``. Expressions are parsed with
Python's ``ast`` and only numbers (decimal, ``0x``, ``0b``, ``0o``, scientific),
``+ - * / // % **``, unary signs, parentheses, the constants ``pi``, ``e``, ``tau``
and a few ``math`` functions are evaluated; anything else is an error naming the
calculation. Integer results stay exact, up to 4300 digits (more is an error, as
are powers that would exceed that, so a call cannot hang). A failed calculation fails the call. Class shared.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xcsh.agent.tool import AgentTool
from xcsh.agent.types import AgentToolResult, ToolUpdate
from xcsh.ai.abort import AbortSignal
from xcsh.coding.tools.defs_search import CALC_DESCRIPTION as _DESCRIPTION
from xcsh.coding.tools.defs_search import CALC_PARAMETERS as _PARAMETERS
from xcsh.coding.tools.errors import ToolError

Number = int | float
MAX_EXPRESSION_CHARS = 1000
MAX_RESULT_DIGITS = 4300
"""The most digits an integer result may have (Python's own limit for turning one into text)."""

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "floor": math.floor,
    "ceil": math.ceil,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "min": min,
    "max": max,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _power(base: Number, exponent: Number) -> Number:
    exact = isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and base not in (0, 1, -1)
    if exact and exponent * math.log10(abs(base)) > MAX_RESULT_DIGITS:
        raise ToolError(f"the result of {base} ** {exponent} is too large")
    result = base**exponent
    if isinstance(result, complex):
        raise ToolError("the result is not a real number")
    return result


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        handler = _BINARY.get(type(node.op))
        if handler is not None:
            try:
                return handler(left, right)  # type: ignore[no-any-return]
            except ZeroDivisionError as exc:
                raise ToolError("division by zero") from exc
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        try:
            return _FUNCTIONS[node.func.id](*[_eval(arg) for arg in node.args])
        except (ValueError, TypeError) as exc:
            raise ToolError(f"{node.func.id}(): {exc}") from exc
    raise ToolError(
        f"unsupported syntax: {ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__}"
    )


def evaluate(expression: str) -> Number:
    """The value of ``expression``; raises ToolError for anything but arithmetic."""
    text = expression.strip()
    if not text:
        raise ToolError("the expression is empty")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ToolError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"invalid expression: {exc.msg}") from exc
    try:
        value = _eval(tree)
    except OverflowError as exc:
        raise ToolError("the result is too large") from exc
    if isinstance(value, float) and not math.isfinite(value):
        raise ToolError("the result is not a finite number")
    if isinstance(value, int) and value.bit_length() * math.log10(2) > MAX_RESULT_DIGITS:
        digits = int(value.bit_length() * math.log10(2)) + 1
        raise ToolError(
            f"the result has about {digits} digits; at most {MAX_RESULT_DIGITS} can be shown "
            "(use python for exact bigger numbers)"
        )
    return value


def format_number(value: Number) -> str:
    """Integers exactly; whole floats without ``.0``; other floats in shortest round-trip form."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _run(calculations: list[Any]) -> AgentToolResult:
    results: list[dict[str, Any]] = []
    for index, item in enumerate(calculations):
        if not isinstance(item, dict) or not isinstance(item.get("expression"), str):
            raise ToolError(f"calculations[{index}] needs a string expression")
        expression = item["expression"]
        try:
            value = evaluate(expression)
        except ToolError as exc:
            raise ToolError(f"calculations[{index}] ({expression!r}): {exc}") from exc
        output = f"{item.get('prefix') or ''}{format_number(value)}{item.get('suffix') or ''}"
        results.append({"expression": expression, "value": value, "output": output})
    result: AgentToolResult = {
        "content": [{"type": "text", "text": "\n".join(r["output"] for r in results)}],
        "details": {"results": results},
    }
    return result


def create_calc_tool(cwd: Path) -> AgentTool:
    """The ``calc`` tool (``cwd`` unused; kept for the factory signature)."""

    async def execute(
        tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate
    ) -> AgentToolResult:
        calculations = args.get("calculations")
        if not isinstance(calculations, list):
            raise ToolError("calculations must be an array of {expression, prefix, suffix}")
        return _run(calculations)

    return AgentTool(
        name="calc",
        label="Calc",
        description=_DESCRIPTION,
        parameters=_PARAMETERS,
        execute=execute,
        concurrency="shared",
        abortable=False,
    )
