"""The user's records: a schema declared in Spark DDL, with its key, event time, required
fields, value checks and record rules."""

from streamwarden.schema.ddl import DdlError, ddl_of, parse_fields
from streamwarden.schema.model import FieldChecks, Rule, Schema, field_type

__all__ = ["DdlError", "FieldChecks", "Rule", "Schema", "ddl_of", "field_type", "parse_fields"]
