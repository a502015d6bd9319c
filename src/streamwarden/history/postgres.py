"""The PostgreSQL history store (``[history] kind = "postgres"``): a table with one row per
session (its latest revision), for serving lookups as well as merging late events.

Tables (created if absent): ``<table>`` keyed by ``session_id`` with an index on ``(key,
end_ms)`` for :meth:`~PostgresHistoryStore.lookup`, and ``<table>_batches``, the ledger of the
batches applied, keyed by ``(run_id, batch_id)`` and holding each batch's output rows. The
sessions table's columns are the session fields (``key text``: the key's value as text;
``state text``: the aggregate state a merge resumes from) and one column per declared aggregate,
of the PostgreSQL type of its Spark type (:data:`PG_TYPES`; an ARRAY as ``type[]``). A table
created for other aggregates (or another version) is refused, at the run's checks and when the
store opens, saying which columns differ: its stored states would be misread. A batch's
sessions, deletions and ledger row are one transaction, so a crash leaves all or none of them;
a replayed batch finds its ledger row and is given the same output (the pipeline writes its
sinks after the store). Upserts are guarded by revision: a stored session is only replaced by
a higher revision. The ledger keeps the last ``keep_batches`` batches of a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from streamwarden.errors import ConfigError, HistoryError, UnreachableError
from streamwarden.history.base import HISTORY_KINDS, Row, StoredColumns, Wanted
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.secrets import Secret, read_secret
from streamwarden.settings.types import ConfigPath

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "APPLICATION_NAME",
    "PG_TYPES",
    "PostgresHistorySettings",
    "PostgresHistoryStore",
    "connect",
    "table_columns",
]

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,50}$")


class PostgresHistorySettings(KindSettings):
    """``[history] kind = "postgres"``: a table of a PostgreSQL database, one row per session.
    Its password is never written in the config file but read at run time from the environment
    variable ``password_env`` names or the file ``password_file`` names."""

    extra: ClassVar[str | None] = "postgres"

    kind: Literal["postgres"]
    host: str | None = Field(default=None, min_length=1)
    port: int = Field(default=5432, ge=1, le=65535)
    database: str | None = Field(default=None, min_length=1)
    user: str | None = Field(default=None, min_length=1)
    password: str | None = None  # refused when given: shown only to say why
    password_env: str | None = None
    password_file: ConfigPath | None = None
    table: str = "streamwarden_sessions"
    connect_timeout_s: float = Field(default=10.0, gt=0)
    #: How many recent batches' outputs the store keeps for replays (Spark replays only the
    #: last uncommitted one; more is cheap).
    keep_batches: int = Field(default=100, ge=2)

    @field_validator("password")
    @classmethod
    def _no_literal_password(cls, value: str | None) -> None:
        if value is not None:
            raise ValueError(
                "a password must not be written in the config file; put it in an environment "
                "variable named by history.password_env, or in a file named by "
                "history.password_file"
            )
        return None

    @field_validator("table")
    @classmethod
    def _plain_table_name(cls, value: str) -> str:
        if not _IDENTIFIER.match(value):
            raise ValueError(
                f"history.table must be a plain lower-case name (letters, digits, _), got {value!r}"
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> PostgresHistorySettings:
        missing = [n for n in ("host", "database", "user") if getattr(self, n) is None]
        if missing:
            raise ValueError(f"a postgres history store needs {', '.join(missing)}")
        if self.password_env is not None and self.password_file is not None:
            raise ValueError("give history.password_env or history.password_file, not both")
        return self

    def secret_password(self) -> Secret | None:
        """The password, read now from its environment variable or file (None: none set)."""
        if self.password_env is None and self.password_file is None:
            return None
        return read_secret(
            env=self.password_env, file=self.password_file, setting="history.password"
        )


#: How the store's connections are named to the server (``pg_stat_activity``): a DBA can tell
#: a pipeline's connection from others, and a test that none is left behind.
APPLICATION_NAME = "streamwarden"

#: The session fields' columns, as ``format_type`` names their types (with their constraints).
_SESSION_COLUMNS = {
    "session_id": ("text", "PRIMARY KEY"),
    "key": ("text", "NOT NULL"),
    "start_ms": ("bigint", "NOT NULL"),
    "end_ms": ("bigint", "NOT NULL"),
    "event_count": ("bigint", "NOT NULL"),
    "bytes": ("bigint", "NOT NULL"),
    "revision": ("integer", "NOT NULL"),
    "truncated": ("boolean", "NOT NULL"),
    "state": ("text", ""),
}
#: The PostgreSQL type of an aggregate's column, by its Spark type (DDL), as PostgreSQL's
#: ``format_type`` names it; an ``array<t>`` is ``PG_TYPES[t] + "[]"``.
PG_TYPES = {
    "tinyint": "bigint",
    "smallint": "bigint",
    "int": "bigint",
    "bigint": "bigint",
    "float": "double precision",
    "double": "double precision",
    "string": "text",
    "boolean": "boolean",
    "timestamp": "timestamp with time zone",
    "date": "date",
}
#: PostgreSQL's longest column name (in bytes; a longer one would be cut).
_MAX_NAME = 63


def table_columns(columns: StoredColumns) -> dict[str, str]:
    """The sessions table's columns for ``columns``: name -> PostgreSQL type, in order. Raises
    :class:`ConfigError` for an aggregate that cannot be a column of it."""
    table = {name: kind for name, (kind, _) in _SESSION_COLUMNS.items()}
    for a in columns.aggregates:
        if a.name in table:
            raise ConfigError(
                f"aggregate {a.name!r} has the name of a column the PostgreSQL history store "
                f"keeps ({', '.join(_SESSION_COLUMNS)}); name the aggregate otherwise"
            )
        if len(a.name.encode()) > _MAX_NAME:
            raise ConfigError(
                f"aggregate {a.name!r} is longer than PostgreSQL's column names "
                f"({_MAX_NAME} bytes); give it a shorter name"
            )
        table[a.name] = _pg_type(a.name, a.spark_type)
    return table


def _pg_type(name: str, spark_type: str) -> str:
    element = spark_type.removeprefix("array<").removesuffix(">")
    found = PG_TYPES.get(element)
    if found is None:
        raise ConfigError(
            f"aggregate {name!r} is {spark_type}, which the PostgreSQL history store has no "
            f"column type for (it keeps {', '.join(PG_TYPES)} and arrays of them)"
        )
    return f"{found}[]" if element != spark_type else found


def _quoted(name: str) -> str:
    """A column name as SQL: quoted, so that an aggregate keeps its case and may be a word
    PostgreSQL reserves (names are letters, digits and ``_``, checked at load)."""
    return '"' + name.replace('"', '""') + '"'


def connect(config: PostgresHistorySettings) -> psycopg.Connection[Any]:
    """A connection to the configured database; :class:`UnreachableError` (exit 1) when the
    server does not answer or refuses the login, never showing the password."""
    import psycopg  # the postgres extra: imported when a store is used, not when configured

    password = config.secret_password()
    try:
        return psycopg.connect(
            host=config.host,
            port=config.port,
            dbname=config.database,
            user=config.user,
            password=password.reveal() if password else None,
            connect_timeout=max(1, int(config.connect_timeout_s)),
            application_name=APPLICATION_NAME,
        )
    except psycopg.OperationalError as exc:
        reason = _first_line(exc, password.reveal() if password else None)
        raise UnreachableError(
            f"the history store's PostgreSQL at {config.host}:{config.port} (database "
            f"{config.database!r}, user {config.user!r}) cannot be reached: {reason}; start it "
            "or fix [history] host/port/database/user and the password it reads"
        ) from None


def _first_line(exc: Exception, secret: str | None) -> str:
    line = (str(exc).strip().splitlines() or ["no answer"])[-1].strip()
    return line.replace(secret, "***") if secret else line


class PostgresHistoryStore:
    """The history store in a PostgreSQL table (see the module's description)."""

    settings_model = PostgresHistorySettings

    def __init__(
        self,
        connection: psycopg.Connection[Any],
        table: str,
        keep_batches: int,
        columns: StoredColumns,
    ) -> None:
        self._db = connection
        self._table = table
        self._ledger = f"{table}_batches"
        self._keep = keep_batches
        try:
            self._columns = table_columns(columns)
            self._fields = tuple(self._columns)
            self._create_tables()
        except BaseException:
            connection.close()
            raise

    @staticmethod
    def check_outputs(settings: KindSettings, outputs: Mapping[str, KindSettings]) -> None:
        """Any sessions sink will do: the store is a table of its own."""

    @staticmethod
    def check(settings: KindSettings, context: RunContext, columns: StoredColumns) -> None:
        history = _own(settings)
        wanted = table_columns(columns)
        with connect(history) as connection:
            try:
                found = _existing_columns(connection, history.table)
            except _psycopg().Error as exc:
                raise HistoryError(
                    f"the history store (table {history.table!r}) failed: {_first_line(exc, None)}"
                ) from None
        if found:
            _check_columns(history.table, found, wanted)

    @staticmethod
    def jars(settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        return ()  # the driver talks to the database through psycopg

    @staticmethod
    def where(settings: KindSettings, context: RunContext) -> str:
        history = _own(settings)
        where = f"{history.user}@{history.host}:{history.port}/{history.database}"
        return f"postgresql://{where} table {history.table}"

    @classmethod
    def open(
        cls, settings: KindSettings, context: RunContext, columns: StoredColumns
    ) -> PostgresHistoryStore:
        history = _own(settings)
        return cls(connect(history), history.table, history.keep_batches, columns)

    def _create_tables(self) -> None:
        columns = ", ".join(
            f"{_quoted(name)} {kind} {_SESSION_COLUMNS.get(name, ('', ''))[1]}".rstrip()
            for name, kind in self._columns.items()
        )
        with self._transaction() as cur:
            cur.execute(f"CREATE TABLE IF NOT EXISTS {self._table} ({columns})")
            _check_columns(self._table, _existing_columns(cur, self._table), self._columns)
            cur.execute(
                f"CREATE INDEX IF NOT EXISTS {self._table}_key_end ON {self._table} (key, end_ms)"
            )
            cur.execute(
                f"CREATE TABLE IF NOT EXISTS {self._ledger} (run_id text, batch_id bigint, "
                "output jsonb NOT NULL, PRIMARY KEY (run_id, batch_id))"
            )

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[Any]]:
        try:
            with self._db.transaction(), self._db.cursor() as cur:
                yield cur
        except _psycopg().Error as exc:
            raise HistoryError(
                f"the history store (table {self._table!r}) failed: {_first_line(exc, None)}"
            ) from None

    def lookup(self, wanted: Sequence[Wanted]) -> list[Row]:
        if not wanted:
            return []
        names = ", ".join(f"s.{_quoted(n)}" for n in self._fields)
        with self._transaction() as cur:
            cur.execute(
                f"SELECT {names} FROM {self._table} s WHERE s.session_id IN (SELECT s.session_id "
                f"FROM {self._table} s JOIN unnest(%s::text[], %s::bigint[], %s::bigint[]) "
                "AS w(key, from_ms, to_ms) ON s.key = w.key AND s.end_ms >= w.from_ms "
                "AND s.start_ms < w.to_ms)",
                ([w.key for w in wanted], [w.from_ms for w in wanted], [w.to_ms for w in wanted]),
            )
            return [dict(zip(self._fields, r, strict=True)) for r in cur.fetchall()]

    def applied(self, run_id: str, batch_id: int) -> list[Row] | None:
        with self._transaction() as cur:
            cur.execute(
                f"SELECT output FROM {self._ledger} WHERE run_id = %s AND batch_id = %s",
                (run_id, batch_id),
            )
            found = cur.fetchone()
        return None if found is None else list(found[0])

    def apply(
        self,
        run_id: str,
        batch_id: int,
        sessions: Sequence[Row],
        deletions: Sequence[str],
        output: Sequence[Row],
    ) -> None:
        fields = self._fields
        names = ", ".join(_quoted(n) for n in fields)
        updates = ", ".join(f"{_quoted(n)} = EXCLUDED.{_quoted(n)}" for n in fields[1:])
        with self._transaction() as cur:
            cur.execute(
                f"INSERT INTO {self._ledger} (run_id, batch_id, output) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                (run_id, batch_id, _jsonb(list(output))),
            )
            if cur.rowcount == 0:
                return  # applied before: the same batch changes nothing twice
            if deletions:
                cur.execute(
                    f"DELETE FROM {self._table} WHERE session_id = ANY(%s)", (list(deletions),)
                )
            cur.executemany(
                f"INSERT INTO {self._table} ({names}) VALUES "
                f"({', '.join(['%s'] * len(fields))}) ON CONFLICT (session_id) DO "
                f"UPDATE SET {updates} WHERE {self._table}.revision < EXCLUDED.revision",
                [tuple(s.get(n) for n in fields) for s in sessions],
            )
            cur.execute(
                f"DELETE FROM {self._ledger} WHERE run_id = %s AND batch_id <= %s",
                (run_id, batch_id - self._keep),
            )

    def size(self) -> int:
        with self._transaction() as cur:
            cur.execute(f"SELECT count(*) FROM {self._table}")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._db.close()


def _existing_columns(db: Any, table: str) -> dict[str, str]:
    """The columns of ``table`` as it is (name -> type, as ``format_type`` names it; empty when
    there is no such table), through a connection or a cursor."""
    rows = db.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped "
        "ORDER BY a.attnum",
        (table,),
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def _check_columns(table: str, found: Mapping[str, str], wanted: Mapping[str, str]) -> None:
    """Raises :class:`ConfigError` if the existing ``table``'s columns are not ``wanted``."""
    if dict(found) == dict(wanted):
        return
    differences = [f"no {n} ({k})" for n, k in wanted.items() if n not in found]
    differences += [f"{n} is {found[n]}, not {k}" for n, k in wanted.items()
                    if n in found and found[n] != k]  # fmt: skip
    differences += [f"an extra {n} ({k})" for n, k in found.items() if n not in wanted]
    raise ConfigError(
        f"the history store's table {table!r} was made for other sessions than this config's "
        f"(its columns differ: {'; '.join(differences)}): its stored sessions cannot be merged "
        "with these aggregates; set [history] table to a new name (the old table keeps the "
        "sessions it has)"
    )


def _own(settings: KindSettings) -> PostgresHistorySettings:
    assert isinstance(settings, PostgresHistorySettings)  # the registry chose this kind by it
    return settings


def _psycopg() -> Any:
    import psycopg

    return psycopg


def _jsonb(value: object) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(value)


HISTORY_KINDS.register("postgres", PostgresHistoryStore)
