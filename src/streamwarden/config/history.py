"""The ``[history]`` section: the store that keeps closed sessions outside streaming state
(lesson L8), and from which late events within ``[sessions] history_lateness`` are merged.

``kind = "delta"`` (the default) is the pipeline's Delta sessions table itself
(:mod:`streamwarden.history.delta`), with no settings of its own. ``kind = "postgres"`` is a
table of a PostgreSQL database, one row per session; its password is never written in the
config file but read at run time from the environment variable ``password_env`` names or the
file ``password_file`` names (:mod:`streamwarden.config.secrets`).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator, model_validator

from streamwarden.config.secrets import Secret, read_secret
from streamwarden.config.types import ConfigPath, Strict
from streamwarden.history.base import HISTORY_KINDS

__all__ = ["HistoryConfig"]

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,50}$")


class HistoryConfig(Strict):
    """Where closed sessions are kept. Each kind reads only its own settings."""

    kind: Annotated[str, AfterValidator(HISTORY_KINDS.check)] = "delta"
    # postgres
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
    def _fits_the_kind(self) -> HistoryConfig:
        kind = HISTORY_KINDS[self.kind]
        for name in sorted(self.model_fields_set - kind.settings - {"kind"}):
            default = "" if "kind" in self.model_fields_set else " (the default)"
            raise ValueError(
                f"history.{name} is not a setting of kind {self.kind!r}{default}; remove it"
                + ("" if default == "" else ', or set history.kind = "postgres"')
            )
        kind.check_config(self)
        return self

    def secret_password(self) -> Secret | None:
        """The password, read now from its environment variable or file (None: none set)."""
        if self.password_env is None and self.password_file is None:
            return None
        return read_secret(
            env=self.password_env, file=self.password_file, setting="history.password"
        )
