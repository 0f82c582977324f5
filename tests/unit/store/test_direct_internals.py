"""What store/direct.py reads of SQLAlchemy beyond its public API, checked one by one.

SQLAlchemy is pinned (pyproject.toml). Before the pin moves, this test says which
attribute a new version renamed or reshaped, instead of the store failing at start-up.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.types import TypeEngine

from hansa.store import direct, tables

_jobs = tables.jobs
_DIALECT = sqlite.dialect()
_STATEMENT = sa.select(_jobs.c.id, _jobs.c.run_at).where(  # a processed parameter, a literal
    _jobs.c.run_at <= sa.bindparam("p_now"), _jobs.c.status == "queued"
)
_WHEN = datetime(2026, 11, 22, 6, 30, 15, 123456, tzinfo=UTC)
_STORED = "2026-11-22 06:30:15.123456"


def _needs(owner: object, name: str, why: str) -> Any:
    where = f"{type(owner).__module__}.{type(owner).__name__}"
    assert hasattr(owner, name), (
        f"SQLAlchemy {sa.__version__}: {where} has no attribute {name!r}, which "
        f"store/direct.py reads ({why}). Adapt store/direct.py before moving the pin."
    )
    return getattr(owner, name)


def _compiled() -> Any:
    return _STATEMENT.compile(dialect=_DIALECT)


def test_a_compiled_statement_gives_its_sql_and_parameter_order() -> None:
    compiled = _compiled()
    assert isinstance(_needs(compiled, "string", "the SQL text run on the driver"), str)
    assert _needs(compiled, "positional", "SQLite's ? parameters") is True
    order = _needs(compiled, "positiontup", "the order of the ? parameters")
    assert list(order) == ["p_now", "status_1"], (
        f"compiled.positiontup is {order!r}: store/direct.py expects bind names in ? order"
    )


def test_binds_say_which_parameters_are_literals() -> None:
    binds = _needs(_compiled(), "binds", "each parameter's BindParameter, by name")
    assert isinstance(binds, Mapping), "compiled.binds: store/direct.py expects a mapping"
    given, literal = binds["p_now"], binds["status_1"]
    assert isinstance(given, BindParameter) and isinstance(literal, BindParameter)
    for attribute in ("required", "value", "callable"):
        _needs(given, attribute, "whether the caller gives the value, or the statement does")
    assert given.required and not literal.required and literal.value == "queued", (
        "BindParameter.required/.value no longer tell a given parameter from a literal"
    )


def test_bind_processors_are_the_ones_sqlalchemy_applies() -> None:
    processors = _needs(_compiled(), "_bind_processors", "parameters' type processors")
    assert isinstance(processors, Mapping), "SQLCompiler._bind_processors is not a mapping"
    process = processors.get("p_now")
    assert callable(process), "SQLCompiler._bind_processors has no processor for 'p_now'"
    assert process(_WHEN) == _STORED, "the UtcDateTime processor is not the one found"


def test_result_columns_name_each_column_and_its_type() -> None:
    columns = _needs(_compiled(), "_result_columns", "result columns' keys and types")
    keys = [entry[0] for entry in columns]
    assert keys == ["id", "run_at"], (
        f"SQLCompiler._result_columns entries start with {keys!r}: expected the keys"
    )
    run_at = columns[1][3]
    assert isinstance(run_at, TypeEngine), (
        "SQLCompiler._result_columns entries no longer hold the type at index 3"
    )
    processor = _needs(run_at, "_cached_result_processor", "result columns' type processors")
    assert processor(_DIALECT, None)(_STORED) == _WHEN


def test_a_connection_gives_the_driver_and_driver_errors_translate() -> None:
    engine = sa.create_engine("sqlite://")
    with engine.connect() as conn:
        assert isinstance(direct.driver(conn), sqlite3.Connection), (
            "Connection.connection.driver_connection is no longer the sqlite3 connection"
        )
        dbapi = _needs(conn.dialect, "loaded_dbapi", "the driver's exception classes")
        try:
            direct.driver(conn).execute("SELECT * FROM missing")
        except dbapi.Error as exc:
            error = sa.exc.DBAPIError.instance("SELECT", [], exc, dbapi.Error, dialect=conn.dialect)
            assert isinstance(error, sa.exc.OperationalError), (
                "DBAPIError.instance no longer translates driver errors to SQLAlchemy's"
            )
    engine.dispose()


def test_direct_compiles_the_statement_with_them() -> None:
    built = direct._build(_DIALECT, _STATEMENT, ())
    assert built.fixed == (None, "queued")
    assert [(i, name) for i, name, _, _ in built.given] == [(0, "p_now")]
    assert built.args({"p_now": _WHEN}) == [_STORED, "queued"]
    assert built.row((1, _STORED)) == {"id": 1, "run_at": _WHEN}
