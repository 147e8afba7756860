"""The query language of ``select()``, ``claims.yaml`` and ``export --where``.

A Python-looking boolean expression over a table's columns, e.g.
``year >= 2024 and topology not in ["debate", "swarm"]``: comparisons of one column
with one literal (chains too), ``in``/``not in`` a list of literals, ``and``/``or``/``not``,
parentheses and boolean columns alone. The text is parsed with :mod:`ast`, every node
checked against that whitelist and the masks built with plain pandas comparisons (never
``query`` or ``eval``); a misspelt column or value is an error listing the allowed ones.
"""

from __future__ import annotations

import ast
import functools
import io
import operator
import tokenize
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:  # pandas is imported when a query is evaluated, not when parsed
    import pandas as pd

MAX_LENGTH = 2000  # characters
MAX_NODES = 400  # syntax-tree nodes
MAX_DEPTH = 40  # nesting of the syntax tree

Literal = str | int | float | bool
# ast operator -> the symbol a message shows, and the function that compares
COMPARISONS = {
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
}
OPERATORS = dict(COMPARISONS.values())
# ``5 < year`` is ``year > 5``
MIRRORED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
ORDERING = frozenset({"<", "<=", ">", ">="})


class QueryError(ValueError):
    """A query that is not in the language, or names an unknown column or value."""


class UnknownNameError(QueryError, KeyError):
    """An unknown axis, column or value: a ``ValueError`` and a ``KeyError`` (callers
    catching either keep working) naming every allowed name and the closest match."""

    __str__ = Exception.__str__  # KeyError would quote the whole message


def unknown_name(
    what: str, name: object, allowed: list[Any], label: str, sep: str = ", "
) -> UnknownNameError:
    """``what`` is not among ``allowed`` (listed after ``label``, capped with "and N more"),
    with a did-you-mean: one line even for the pool's ~1,000 authors."""
    from masrl_kb.kb.text import suggest

    return UnknownNameError(f"{what}{suggest(name, allowed, label, sep)}")


# ---------------------------------------------------------------- parsing


def parse(text: str) -> ast.expr:
    """The checked syntax tree; raises :class:`QueryError` for anything outside the language."""
    if not isinstance(text, str):
        raise QueryError(f"a query must be text, not {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise QueryError(f"query too long: {len(text)} characters (at most {MAX_LENGTH})")
    if not text.strip():
        raise QueryError("empty query")
    source = " ".join(text.splitlines())  # YAML block strings: one expression
    _check_tokens(source)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as err:
        where = f" at character {err.offset}" if err.offset else ""
        raise QueryError(f"not a valid query{where}: {err.msg}") from None
    except (ValueError, RecursionError, MemoryError) as err:  # NUL bytes, deep nesting
        raise QueryError(f"not a valid query: {type(err).__name__}") from None
    # Bound the tree before walking it recursively (a hostile query may be deep).
    count = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise QueryError(f"query too complex: more than {MAX_NODES} parts")
        if depth > MAX_DEPTH:
            raise QueryError(f"query nested too deeply: more than {MAX_DEPTH} levels")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    _mask(None, tree.body)
    return tree.body


def _check_tokens(source: str) -> None:
    """Refuse comments and look-alike names (Python folds ``ⅽredit_unit`` into ``credit_unit``)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return  # the parser names the syntax error
    for token in tokens:
        if token.type == tokenize.OP and token.string in ("@", "@="):
            at = token.start[1] + 1
            raise QueryError(f"@ (a pandas variable) is not allowed in a query (at character {at})")
        if token.type == tokenize.COMMENT:  # it would hide the rest of a joined line
            raise QueryError(f"comments (#) are not allowed (at character {token.start[1] + 1})")
        if token.type != tokenize.STRING and not token.string.isascii():
            raise QueryError(
                f"only plain ASCII is allowed outside quoted strings "
                f"(at character {token.start[1] + 1})"
            )


def _where(node: ast.AST) -> str:
    offset = getattr(node, "col_offset", None)
    return f" at character {offset + 1}" if offset is not None else ""


def _refuse(node: ast.AST, what: str) -> QueryError:
    return QueryError(
        f"{what} is not allowed in a query{_where(node)}; allowed: comparisons "
        "(== != < <= > >=), in [...], not in [...], and, or, not, parentheses, "
        "column names and string/number/True/False literals"
    )


def _mask(frame: pd.DataFrame | None, node: ast.AST) -> Any:
    """Which rows of ``frame`` match ``node``; with no frame, only check it is in the language."""
    if isinstance(node, ast.BoolOp):
        join = operator.and_ if isinstance(node.op, ast.And) else operator.or_
        return _joined(join, [_mask(frame, item) for item in node.values])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _mask(frame, node.operand)
        return None if frame is None else ~inner
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        pairs = zip(operands, node.ops, operands[1:], strict=False)
        return _joined(operator.and_, [_pair(frame, *pair, node) for pair in pairs])
    if isinstance(node, ast.Name):
        return None if frame is None else _flag(frame, node.id)
    if isinstance(node, ast.Constant):
        raise QueryError(f"a value alone is not a condition{_where(node)}: {node.value!r}")
    raise _refuse(node, _describe(node))


def _joined(join: Any, masks: list[Any]) -> Any:
    return None if masks[0] is None else functools.reduce(join, masks)


DESCRIBED = {
    ast.Attribute: "an attribute (.name)",
    ast.Call: "a call",
    ast.Subscript: "a subscript ([...])",
    ast.Lambda: "a lambda",
    ast.BinOp: "arithmetic",
    ast.UnaryOp: "a sign or ~",
    ast.IfExp: "if/else",
    ast.NamedExpr: "an assignment (:=)",
    ast.JoinedStr: "an f-string",
    ast.Starred: "*",
}


def _describe(node: ast.AST) -> str:
    return DESCRIBED.get(type(node), type(node).__name__)


def _pair(
    frame: pd.DataFrame | None, left: ast.AST, op: ast.cmpop, right: ast.AST, whole: ast.AST
) -> Any:
    if isinstance(op, ast.In | ast.NotIn):
        if not isinstance(left, ast.Name):
            raise QueryError(f"`in` needs a column name on its left{_where(whole)}")
        if not isinstance(right, ast.List | ast.Tuple):
            raise QueryError(f'`in` needs a list of values such as ["a", "b"]{_where(right)}')
        values = [_literal(item) for item in right.elts]
        if frame is None:
            return None
        column = _column(frame, left.id)
        found = column.isin([_value(left.id, column, v, "in") for v in values])
        return ~found if isinstance(op, ast.NotIn) else found
    if type(op) not in COMPARISONS:
        raise _refuse(whole, f"the operator `{type(op).__name__}`")
    symbol = COMPARISONS[type(op)][0]
    if isinstance(left, ast.Name) and not isinstance(right, ast.Name):
        name, value = left.id, _literal(right)
    elif isinstance(right, ast.Name) and not isinstance(left, ast.Name):
        name, value, symbol = right.id, _literal(left), MIRRORED[symbol]
    else:
        raise QueryError(f"a comparison needs one column and one value{_where(whole)}")
    if frame is None:
        return None
    column = _column(frame, name)
    return OPERATORS[symbol](column, _value(name, column, value, symbol))


def _literal(node: ast.AST) -> Literal:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = node.operand
        if isinstance(inner, ast.Constant) and _is_number(inner.value):
            return -inner.value if isinstance(node.op, ast.USub) else inner.value
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bool | int | float):
        if isinstance(node.value, float) and node.value != node.value:  # pragma: no cover
            raise QueryError("NaN is not a value")
        return node.value
    raise _refuse(node, f"{_describe(node)} as a value")


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# ---------------------------------------------------------------- evaluation


def mask(frame: pd.DataFrame, query: str) -> pd.Series:
    """Which of ``frame``'s rows match ``query`` (its index name, ``key`` or ``id``, counts
    as a column); raises :class:`QueryError` naming an unknown column or value."""
    return _mask(frame, parse(query))


def _flag(frame: pd.DataFrame, name: str) -> pd.Series:
    """A boolean column on its own."""
    import pandas as pd

    column = _column(frame, name)
    if not pd.api.types.is_bool_dtype(column.dtype):
        raise QueryError(
            f"{name} is not a True/False column: compare it with a value, e.g. {name} == ..."
        )
    return column.astype(bool)


def select_rows(frame: pd.DataFrame, query: str | None) -> pd.DataFrame:
    """The rows of ``frame`` matching ``query`` (all rows when it is empty or None)."""
    if query is None or (isinstance(query, str) and not query.strip()):
        return frame
    return frame[mask(frame, query)]


def columns_of(frame: pd.DataFrame) -> list[str]:
    """The names a query over ``frame`` may use: the index name, then the columns."""
    names = [frame.index.name] if isinstance(frame.index.name, str) else []
    return names + [c for c in frame.columns if isinstance(c, str) and _queryable(frame[c])]


def _queryable(column: pd.Series) -> bool:
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        return True
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype):
        return True
    # Text columns qualify; columns of lists or mappings (authors, citation) do not.
    return all(isinstance(v, str) for v in column.dropna())


def _shown(value: Literal) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    import pandas as pd

    if name == frame.index.name and name not in frame.columns:
        return pd.Series(frame.index, index=frame.index, name=name)
    if name in frame.columns and _queryable(frame[name]):
        return frame[name]
    names = columns_of(frame)  # only on the error path: it looks at every column
    raise unknown_name(f"unknown column {_shown(name)}", name, names, "columns")


def _value(name: str, column: pd.Series, value: Literal, op: str) -> Any:
    """The literal as the column's type, or an error naming what the column allows."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        allowed = list(dtype.categories)
        if op in ORDERING and not dtype.ordered:
            raise QueryError(f"{name} has no order: use == != or in")
        if value not in allowed:
            what = f"{name}: {_shown(value)} is not one of its values"
            raise unknown_name(what, value, allowed, "allowed")
        return value
    if pd.api.types.is_bool_dtype(dtype):
        if not isinstance(value, bool):
            raise QueryError(f"{name} is True/False: {_shown(value)} is not allowed")
        if op in ORDERING:
            raise QueryError(f"{name} is True/False: use == or !=")
        return value
    if pd.api.types.is_numeric_dtype(dtype):
        if not _is_number(value):
            raise QueryError(f"{name} is a number: {_shown(value)} is not one")
        return value
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return _date(name, value)
    if not isinstance(value, str):
        raise QueryError(f"{name} is text: compare it with a quoted string, not {value!r}")
    if op in ORDERING:
        raise QueryError(f"{name} is text: use == != or in")
    return value


def _date(name: str, value: Literal) -> Any:
    import pandas as pd

    if not isinstance(value, str):
        raise QueryError(f'{name} is a date: write it as "YYYY-MM-DD", not {_shown(value)}')
    try:
        return pd.Timestamp.fromisoformat(value)
    except ValueError:
        raise QueryError(f"{name} is a date: {_shown(value)} is not YYYY-MM-DD") from None
