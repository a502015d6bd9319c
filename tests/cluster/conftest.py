"""One real Spark standalone cluster for the cluster tests: a master and two workers (1 core,
1 GB each) on 127.0.0.1, started from the pyspark wheel's ``spark-class`` the first time a test
asks for it, stopped by their process groups at the end (``make cluster``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from streamwarden.local.cluster import LocalStandaloneCluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalStandaloneCluster]:
    with LocalStandaloneCluster(workers=2, cores=1, memory="1g") as running:
        yield running
