"""The condition language of edges: ``FIELD OP VALUE`` leaves joined by ``and`` / ``or``,
evaluated without ``eval``."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["safe_eval_expr"]

# --- the condition language ---------------------------------------------------------------

_LEAF = re.compile(
    r"^(?P<field>[\w][\w.]*)\s*(?P<op>==|!=|>=|<=|>|<|\s+not\s+in\s+|\s+in\s+)\s*(?P<value>.+)$",
    re.DOTALL,
)
_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}


def _read_field(state: object, path: str) -> object:
    value = state
    for part in path.split("."):
        if value is None:
            return None
        value = value.get(part) if isinstance(value, dict) else getattr(value, part, None)
    return value


def safe_eval_expr(expr: str, state: Mapping[str, object]) -> bool:
    """Evaluate a condition string on ``state`` without ``eval``.

    ``FIELD OP VALUE`` leaves (``FIELD`` a dotted path, ``OP`` one of ``== != >= <= > < in``
    and ``not in``, ``VALUE`` a Python literal) joined by ``and`` / ``or`` (``or`` binds
    loosest; no parentheses, no ``not``). Ordering operators are false on a missing field.

    Example:
        >>> state = {"count": 1, "user": {"role": "admin"}}
        >>> safe_eval_expr("count < 3 and user.role == 'admin'", state)
        True
        >>> safe_eval_expr("missing > 1 or tag in ['a', 'b']", {"tag": "b"})
        True

    Raises:
        ValueError: a part that is not ``FIELD OP VALUE``, or a value that is no literal.
    """
    text = expr.strip()
    if " or " in text:
        left, right = text.split(" or ", 1)
        return safe_eval_expr(left, state) or safe_eval_expr(right, state)
    if " and " in text:
        left, right = text.split(" and ", 1)
        return safe_eval_expr(left, state) and safe_eval_expr(right, state)
    match = _LEAF.match(text)
    if match is None:
        raise ValueError(f"Cannot parse condition expression: {text!r}")
    op = " ".join(match["op"].split())
    raw = match["value"].strip()
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"Cannot parse value {raw!r} in expression: {text!r}") from None
    current = _read_field(state, match["field"])
    if op == "==":
        return bool(current == value)
    if op == "!=":
        return bool(current != value)
    if op == "in":
        return bool(current in value)
    if op == "not in":
        return bool(current not in value)
    if current is None:
        return False
    return bool(_ORDERING[op](current, value))
