"""The ``[kafka]`` section: one Kafka cluster, shared by a Kafka source and every Kafka sink.

Secrets are never written in a config file: the SASL password is read at run time from the
environment variable that ``sasl_password_env`` names, or from the file ``sasl_password_file``
names (:mod:`streamwarden.settings.secrets`). A literal password, in ``sasl_password`` or in a
client option whose name says it holds one, is refused at load.

Spark's Kafka source runs the Java client and the sinks run librdkafka; the settings here are
the ones both understand, translated for each (:meth:`KafkaConfig.java_options`,
:meth:`KafkaConfig.librdkafka_options`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from streamwarden.settings.secrets import Secret, read_secret
from streamwarden.settings.types import ConfigPath, Strict

__all__ = ["KafkaConfig", "looks_secret", "refuse_literal_secrets"]

#: Option names that hold a secret: their values must come from the environment or a file.
_SECRET_NAME = re.compile(r"(?i)password|secret|jaas|token|credential|ssl\.key\.pem|private")


def looks_secret(option: str) -> bool:
    """Whether a client option's name says it holds a secret."""
    return bool(_SECRET_NAME.search(option))


def refuse_literal_secrets(options: dict[str, str], where: str) -> dict[str, str]:
    """``options`` unless one of them writes a secret in the config (then a ValueError that
    names the option, never its value)."""
    for name in options:
        if looks_secret(name):
            raise ValueError(
                f"{where} option {name!r} holds a secret, which must not be written in the "
                "config file; set the password with [kafka] sasl_password_env (an environment "
                "variable) or sasl_password_file"
            )
    return options


class KafkaConfig(Strict):
    """How to reach the Kafka cluster: bootstrap servers and security. ``producer_options``
    are passed to the sinks' producer as they are (librdkafka names, such as ``linger.ms``)."""

    bootstrap_servers: str = Field(min_length=1)
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None  # refused when given: shown only to say why
    sasl_password_env: str | None = None
    sasl_password_file: ConfigPath | None = None
    ssl_ca_location: ConfigPath | None = None
    #: How long a check at start-up (doctor, the sinks' first contact) waits for the broker.
    connect_timeout_s: float = Field(default=10.0, gt=0)
    producer_options: dict[str, str] = Field(default_factory=dict)

    @field_validator("sasl_password")
    @classmethod
    def _no_literal_password(cls, value: str | None) -> None:
        if value is not None:
            raise ValueError(
                "a password must not be written in the config file; put it in an environment "
                "variable named by sasl_password_env, or in a file named by sasl_password_file"
            )
        return None

    @field_validator("producer_options")
    @classmethod
    def _no_literal_secret_options(cls, value: dict[str, str]) -> dict[str, str]:
        return refuse_literal_secrets(value, "kafka.producer_options")

    @model_validator(mode="after")
    def _sasl_fits(self) -> KafkaConfig:
        sasl = self.security_protocol.startswith("SASL_")
        given = self.sasl_password_env is not None or self.sasl_password_file is not None
        if self.sasl_password_env is not None and self.sasl_password_file is not None:
            raise ValueError("give sasl_password_env or sasl_password_file, not both")
        if sasl and (self.sasl_mechanism is None or self.sasl_username is None or not given):
            raise ValueError(
                f"security_protocol {self.security_protocol!r} needs sasl_mechanism, "
                "sasl_username and sasl_password_env (or sasl_password_file)"
            )
        if not sasl and (self.sasl_mechanism or self.sasl_username or given):
            raise ValueError(
                "sasl_* settings need security_protocol 'SASL_PLAINTEXT' or 'SASL_SSL'"
            )
        return self

    def password(self) -> Secret | None:
        """The SASL password, read now from its environment variable or file."""
        if self.sasl_password_env is None and self.sasl_password_file is None:
            return None
        return read_secret(
            env=self.sasl_password_env, file=self.sasl_password_file, setting="kafka.sasl_password"
        )

    def java_options(self) -> dict[str, str]:
        """The settings for Spark's Kafka source (the Java client), each prefixed ``kafka.``."""
        out = {
            "kafka.bootstrap.servers": self.bootstrap_servers,
            "kafka.security.protocol": self.security_protocol,
        }
        if self.ssl_ca_location is not None:
            out["kafka.ssl.truststore.type"] = "PEM"
            out["kafka.ssl.truststore.location"] = str(self.ssl_ca_location)
        password = self.password()
        if password is not None:
            assert self.sasl_mechanism is not None and self.sasl_username is not None
            module = (
                "org.apache.kafka.common.security.plain.PlainLoginModule"
                if self.sasl_mechanism == "PLAIN"
                else "org.apache.kafka.common.security.scram.ScramLoginModule"
            )
            out["kafka.sasl.mechanism"] = self.sasl_mechanism
            out["kafka.sasl.jaas.config"] = (
                f'{module} required username="{_jaas_quoted(self.sasl_username)}" '
                f'password="{_jaas_quoted(password.reveal())}";'
            )
        return out

    def librdkafka_options(self) -> dict[str, str]:
        """The connection settings for a confluent-kafka client (librdkafka)."""
        out = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol.lower(),
        }
        if self.ssl_ca_location is not None:
            out["ssl.ca.location"] = str(self.ssl_ca_location)
        password = self.password()
        if password is not None:
            assert self.sasl_mechanism is not None and self.sasl_username is not None
            out["sasl.mechanism"] = self.sasl_mechanism
            out["sasl.username"] = self.sasl_username
            out["sasl.password"] = password.reveal()
        return out


def _jaas_quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
