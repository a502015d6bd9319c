"""A Kafka source's offsets per partition in a batch's progress become its lag (records behind
the latest offset) and the offsets it read past without a record; sources without offsets per
partition have neither. The report draws the lag as a fifth panel only when there is one."""

from __future__ import annotations

import matplotlib.pyplot as plt

from streamwarden.monitoring.progress_log import BatchRecord
from streamwarden.monitoring.report import build_report_data, draw_chart
from streamwarden.monitoring.summary import BatchSummary, offsets_skipped, source_lag
from tests.support import kafka_source, progress_of

FILES = {
    "description": "FileStreamSource[file:/landing]",
    "startOffset": {"logOffset": 3},
    "endOffset": {"logOffset": 4},
    "latestOffset": None,
    "numInputRows": 7,
}


def test_lag_is_the_latest_offset_minus_the_batch_end_per_topic_partition():
    kafka = kafka_source({"0": 0, "1": 5}, {"0": 10, "1": 15}, {"0": 40, "1": 15}, 20)
    progress = progress_of(1, [kafka])
    assert source_lag(progress) == {"pageviews/0": 30, "pageviews/1": 0}
    assert BatchSummary.from_progress(progress).source_lag == {"pageviews/0": 30, "pageviews/1": 0}


def test_offsets_covered_without_a_record_are_counted():
    # offsets 0-9 and 5-14 covered (20), only 15 records read: 5 deleted before they were read
    kafka = kafka_source({"0": 0, "1": 5}, {"0": 10, "1": 15}, {"0": 10, "1": 15}, 15)
    progress = progress_of(2, [kafka])
    assert offsets_skipped(progress) == 5
    # a partition new in this batch starts at its first offset: nothing skipped there
    first = progress_of(0, [kafka_source({}, {"0": 4}, {"0": 4}, 4)])
    assert offsets_skipped(first) == 0


def test_a_file_source_has_no_lag_and_skips_nothing():
    progress = progress_of(3, [FILES])
    assert source_lag(progress) == {} and offsets_skipped(progress) == 0


def test_the_report_draws_a_lag_panel_only_for_a_source_with_lag():
    kafka = progress_of(1, [kafka_source({"0": 0}, {"0": 10}, {"0": 25}, 10)])
    files = progress_of(1, [FILES])
    for progress, panels in ((kafka, 5), (files, 4)):
        record = BatchRecord(BatchSummary.from_progress(progress), None, [], [], progress)
        data = build_report_data([record])
        figure = draw_chart(data, 1)
        assert len(figure.axes) == panels
        plt.close(figure)
    assert build_report_data(
        [BatchRecord(BatchSummary.from_progress(kafka), None, [], [], kafka)]
    ).panels["lag"] == {"lag pageviews/0": [(1, 15.0)]}
