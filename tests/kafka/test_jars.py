"""The Kafka jar sets are found where ``make setup`` puts them, or where STREAMWARDEN_JARS_DIR
says; a set missing there is an error that names the folder and the commands that fetch it
(``streamwarden jars --fetch``, and in the source tree ``make setup``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamwarden.errors import ConfigError
from streamwarden.kafka.jars import JARS_DIR_VARIABLE, broker_jars, connector_jars


def test_the_connector_set_is_spark_s_kafka_connector_and_only_what_the_wheel_lacks():
    names = sorted(Path(jar).name for jar in connector_jars())
    assert names == [
        "commons-pool2-2.13.1.jar",
        "kafka-clients-3.9.2.jar",
        "spark-sql-kafka-0-10_2.13-4.2.0.jar",
        "spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
    ]
    assert all(Path(jar).is_absolute() and Path(jar).is_file() for jar in connector_jars())


def test_the_broker_set_is_a_kafka_4_broker_with_a_log4j2_binding():
    names = {Path(jar).name for jar in broker_jars()}
    assert {"kafka_2.13-4.1.1.jar", "log4j-core-2.24.3.jar", "log4j-slf4j-impl-2.24.3.jar"} <= names


def test_the_jar_sets_are_found_where_the_environment_variable_points(monkeypatch, tmp_path):
    folder = tmp_path / "kafka"
    folder.mkdir()
    (folder / "a.jar").write_bytes(b"")
    (folder / ".fetched").write_bytes(b"")
    monkeypatch.setenv(JARS_DIR_VARIABLE, str(tmp_path))
    assert connector_jars() == (str(folder / "a.jar"),)


@pytest.mark.parametrize(
    ("jar_set", "stamped"), [(connector_jars, False), (broker_jars, False), (broker_jars, True)]
)
def test_a_set_never_fetched_or_fetched_only_in_part_names_its_folder_and_the_fix(
    monkeypatch, tmp_path, jar_set, stamped
):
    name = "kafka" if jar_set is connector_jars else "kafka-broker"
    if stamped:  # a stamp but no jars: emptied by hand
        (tmp_path / name).mkdir()
        (tmp_path / name / ".fetched").write_bytes(b"")
    else:  # jars but no stamp: the fetch stopped half-way
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.jar").write_bytes(b"")
    monkeypatch.setenv(JARS_DIR_VARIABLE, str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        jar_set()
    message = str(caught.value)
    assert str(tmp_path / name) in message and "\n" not in message
    assert f"'streamwarden jars --fetch {name}'" in message and "make setup" in message
