"""The hot statements, run on the driver's connection instead of ``Connection.execute``.

``Connection.execute`` of a statement SQLAlchemy has already compiled and cached
still costs ~20–50 µs of Python per call (parameter processing, execution
context, result set-up) against ~2 µs for the driver itself; a run's writes
execute ~50 statements, so that machinery was the largest single cost of the
SQLite writer (decision 0007). Here a statement built once at import time is
compiled once more into its SQL text, the order of its parameters and the very
type processors SQLAlchemy would apply, and runs on the driver's connection in
the caller's transaction; driver errors are raised as SQLAlchemy's
(``IntegrityError`` and the rest) as ``Connection.execute`` would.

PostgreSQL's statements run the same way since decision 0028 (its engine is made with the
``format`` paramstyle, so a statement compiles to ``%s`` placeholders in a fixed order):
there ``Connection.execute`` of an ``INSERT`` of many rows compiled a new multi-row
statement at every call, ~40 % of a worker's Python in a burst of runs, and every other
statement paid the same ~50–100 µs as on SQLite. An insert of many rows is one
``INSERT … VALUES (…), (…)`` built from the one-row statement's text (psycopg's
``executemany`` would pipeline, which leaves the session without a Sync: decision 0017).

Only statements without expanding (``IN``) parameters can run here: a set of values
fixed when the statement is built is written with :func:`one_of` instead.

Three private attributes of SQLAlchemy are read here (``SQLCompiler._bind_processors``
and ``._result_columns``, ``TypeEngine._cached_result_processor``): SQLAlchemy is
pinned, and tests/unit/store/test_direct_internals.py fails, naming the attribute, if a
version changes them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.sql.base import Executable

Params = Mapping[str, Any]
Row = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    fixed: tuple[Any, ...]
    """Every parameter's value where the statement fixes it (a literal), None elsewhere."""
    given: tuple[tuple[int, str, bool, Callable[[Any], Any] | None], ...]
    """Parameters the caller gives: position, name, required, type processor."""
    keys: tuple[str, ...]
    results: tuple[tuple[str, Callable[[Any], Any]], ...]
    """Result columns that need processing, with their processor."""

    def args(self, params: Params) -> list[Any]:
        values = list(self.fixed)
        for i, name, required, process in self.given:
            if name in params:
                value = params[name]
            elif required:
                problem = f"a value is required for bind parameter {name!r}"
                raise sa.exc.StatementError(problem, self.sql, dict(params), None)
            else:
                value = None
            values[i] = value if process is None else process(value)
        return values

    def row(self, values: Sequence[Any]) -> dict[str, Any]:
        found = dict(zip(self.keys, values, strict=True))
        for key, process in self.results:
            found[key] = process(found[key])
        return found


CACHE_LIMIT = 512
"""Compiled statements kept at most. The hot statements are a few dozen, built once at import;
a statement built anew at each call would be compiled each time once the cache is full, slow
but correct, rather than grow the cache without end."""

_compiled: dict[tuple[Executable, tuple[str, ...], str], _Compiled | None] = {}
"""By statement, the columns of an insert and the dialect's name (a test process uses both)."""

_UNCOMPILED: Any = object()
_MAX_PARAMETERS = 32_767
"""Parameters of one multi-row insert at most (PostgreSQL takes 65,535)."""


def one_of(column: sa.ColumnElement[Any], values: Iterable[str]) -> sa.ColumnElement[bool]:
    """``column`` equal to one of ``values``, as fixed equalities: an ``IN`` list is an
    expanding parameter, which ``direct`` cannot run and SQLAlchemy renders at every
    execution."""
    found = sorted(values)
    return sa.or_(*(column == v for v in found)) if found else sa.false()


def only_checks(column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """``column`` for a condition that checks the row another condition finds (the tenant of
    a lookup by primary key), written so that no index on ``column`` can serve it.

    Without statistics (a fresh schema, until autovacuum's first ANALYZE: every benchmark,
    every new install) PostgreSQL costs ``id = $1 AND tenant_id = $2`` the same by the
    primary key as by an index leading with ``tenant_id``, and took the latter: a scan of all
    the tenant's rows per lookup, quadratic in a burst (decision 0028). ``coalesce`` of a
    column with itself is the column (it is NOT NULL), which neither database indexes.
    """
    return sa.func.coalesce(column, column)


def driver(conn: Connection) -> sqlite3.Connection:
    """The sqlite3 connection under ``conn`` (``direct``, the group writer and the loop's
    reader run SQL on it)."""
    found = conn.connection.driver_connection
    if found is None:
        raise sa.exc.ResourceClosedError("the connection is closed")
    return cast(sqlite3.Connection, found)


def _driver(conn: Connection) -> Any:
    """The driver's connection under ``conn``: sqlite3's or psycopg's."""
    found = conn.connection.driver_connection
    if found is None:
        raise sa.exc.ResourceClosedError("the connection is closed")
    return found


def execute(conn: Connection, statement: Executable, params: Params) -> int:
    """Run a statement that returns no rows; the number of rows it changed."""
    compiled = _compile(conn, statement, params)
    if compiled is None:
        return int(conn.execute(statement, params).rowcount)
    cursor = _run(conn, compiled, params)
    if compiled.keys:  # RETURNING: read to the end, or the statement stays open until commit
        cursor.fetchall()
    return int(cursor.rowcount)


def execute_many(conn: Connection, statement: Executable, rows: Sequence[Params]) -> None:
    """Run a statement once per parameter set (an insert of many rows, say)."""
    if not rows:
        return
    compiled = _compile(conn, statement, rows[0])
    if compiled is None:
        conn.execute(statement, list(rows))
        return
    if conn.dialect.name != "sqlite":
        if not isinstance(statement, sa.Insert) or compiled.keys:
            for params in rows:
                _run(conn, compiled, params)
            return
        # one INSERT … VALUES (…), (…): psycopg's executemany runs in pipeline mode and
        # leaves the session without a Sync, where PostgreSQL's
        # idle_in_transaction_session_timeout is never armed (a frozen worker would then
        # hold its locks for ever; decision 0017)
        head, values = compiled.sql.split(" VALUES ", 1)
        per = max(1, _MAX_PARAMETERS // max(1, len(compiled.fixed)))
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            sql = f"{head} VALUES {', '.join([values] * len(chunk))}"
            flat = [value for params in chunk for value in compiled.args(params)]
            try:
                _driver(conn).execute(sql, flat)
            except conn.dialect.loaded_dbapi.Error as exc:
                raise _translated(conn, compiled, flat, exc) from exc
        return
    args = [compiled.args(p) for p in rows]
    try:
        driver(conn).executemany(compiled.sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _translated(conn, compiled, args, exc) from exc


def rows(conn: Connection, statement: Executable, params: Params) -> list[Row]:
    """The rows of a ``SELECT`` or of a statement with ``RETURNING``, as mappings."""
    compiled = _compile(conn, statement, params)
    if compiled is None:
        return cast(list[Row], list(conn.execute(statement, params).mappings()))
    cursor = _run(conn, compiled, params)
    found = cursor.fetchall()
    if found and not compiled.keys:  # textual SQL (``sa.text``): its columns are the cursor's
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in found]
    return [compiled.row(values) for values in found]


def first(conn: Connection, statement: Executable, params: Params) -> Row | None:
    """The first row, or None."""
    found = rows(conn, statement, params)
    return found[0] if found else None


def scalar(conn: Connection, statement: Executable, params: Params) -> Any:
    """The first column of the first row, or None."""
    row = first(conn, statement, params)
    return None if row is None else next(iter(row.values()))


def _run(conn: Connection, compiled: _Compiled, params: Params) -> Any:
    args = compiled.args(params)
    try:
        return _driver(conn).execute(compiled.sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise _translated(conn, compiled, args, exc) from exc


def _translated(conn: Connection, compiled: _Compiled, args: Any, exc: Exception) -> Exception:
    error: Exception = sa.exc.DBAPIError.instance(
        compiled.sql, args, exc, conn.dialect.loaded_dbapi.Error, dialect=conn.dialect
    )
    return error


def _compile(conn: Connection, statement: Executable, params: Params) -> _Compiled | None:
    """The statement compiled for ``conn``'s database; None when ``Connection.execute`` must
    run it (on PostgreSQL, a numeric result: SQLAlchemy processes it by the type the server
    reports, known only once it ran)."""
    # an INSERT's text depends on the columns given; other statements are fixed
    keys = tuple(params) if isinstance(statement, sa.Insert) else ()
    key = (statement, keys, conn.dialect.name)
    found = _compiled.get(key, _UNCOMPILED)
    if found is _UNCOMPILED:
        found = _build(conn.dialect, statement, keys)
        if len(_compiled) < CACHE_LIMIT:
            _compiled[key] = found
    return cast("_Compiled | None", found)


def _build(dialect: sa.Dialect, statement: Executable, keys: tuple[str, ...]) -> _Compiled | None:
    options = {"column_keys": list(keys)} if keys else {}
    compiled: Any = statement.compile(dialect=dialect, **options)  # type: ignore[attr-defined]
    if "POSTCOMPILE" in compiled.string or not compiled.positional:
        raise ValueError(f"cannot run directly (expanding parameters?): {compiled.string}")
    processors = _private(compiled, "_bind_processors")  # what SQLAlchemy applies when executing
    fixed: list[Any] = []
    given = []
    for i, name in enumerate(compiled.positiontup):
        bind = compiled.binds[name]
        literal = not bind.required and bind.value is not None and bind.callable is None
        fixed.append(bind.value if literal else None)
        if not literal:
            given.append((i, name, bool(bind.required), processors.get(name)))
    columns = _private(compiled, "_result_columns")  # (key, name, objects, type) per column
    results = []
    for column in columns:
        if dialect.name != "sqlite" and isinstance(column[3], sa.Numeric | sa.Float):
            return None  # processed by the type the server reports: Connection.execute
        process = _private(column[3], "_cached_result_processor")(dialect, None)
        if process is not None:
            results.append((column[0], process))
    return _Compiled(
        sql=compiled.string,
        fixed=tuple(fixed),
        given=tuple(given),
        keys=tuple(c[0] for c in columns),
        results=tuple(results),
    )


def _private(owner: Any, name: str) -> Any:
    try:
        return getattr(owner, name)
    except AttributeError:
        raise RuntimeError(
            f"SQLAlchemy {sa.__version__} has no {type(owner).__name__}.{name}, which "
            "store/direct.py reads (decision 0007): adapt it to this version, or pin the "
            "version it was written for"
        ) from None
