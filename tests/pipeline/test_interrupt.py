"""Stop signals: the first SIGINT or SIGTERM only asks the run to stop, even after Spark has
started (its SparkContext puts a SIGINT handler of its own in place, which breaks py4j calls)."""

from __future__ import annotations

import os
import signal

from streamwarden.pipeline.interrupt import stop_requested_on_signals


def test_a_stop_signal_sets_the_request_instead_of_raising():
    with stop_requested_on_signals() as request:
        os.kill(os.getpid(), signal.SIGTERM)
        assert request.is_set() and request.signal_name == "SIGTERM"


def test_reclaim_takes_sigint_back_from_a_handler_installed_after_the_request():
    def spark_like_handler(signum, frame):  # what SparkContext installs: cancel jobs, raise
        raise AssertionError("PySpark's handler ran")

    before = signal.getsignal(signal.SIGINT)
    with stop_requested_on_signals() as request:
        signal.signal(signal.SIGINT, spark_like_handler)
        request.reclaim()
        os.kill(os.getpid(), signal.SIGINT)
        assert request.is_set() and request.signal_name == "SIGINT"
    assert signal.getsignal(signal.SIGINT) is before  # the handler from before is back
