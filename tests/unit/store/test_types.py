"""UtcDateTime on SQLite: SQLAlchemy's own text format, read back aware in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import sqlite

from hansa.store.types import UtcDateTime

_DIALECT = sqlite.dialect()
_STOCK = sa.DateTime().dialect_impl(_DIALECT)  # SQLAlchemy's SQLite DATETIME


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 11, 22, 6, 30, 15, 123456, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),  # no microseconds
        datetime(999, 1, 2, 3, 4, 5, 7, tzinfo=timezone(timedelta(hours=2))),  # not UTC
    ],
)
def test_stored_text_is_sqlalchemys_and_reads_back_in_utc(value: datetime) -> None:
    bind = UtcDateTime()._cached_bind_processor(_DIALECT)
    result = UtcDateTime()._cached_result_processor(_DIALECT, None)
    assert bind is not None and result is not None
    stock = _STOCK.bind_processor(_DIALECT)
    assert bind(value) == stock(value.astimezone(UTC).replace(tzinfo=None))
    back = result(bind(value))
    assert back == value and back.tzinfo is UTC


def test_a_naive_datetime_is_refused() -> None:
    bind = UtcDateTime()._cached_bind_processor(_DIALECT)
    assert bind is not None
    with pytest.raises(ValueError, match="naive"):
        bind(datetime(2026, 11, 22, 6, 30))
