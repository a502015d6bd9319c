"""A Kafka topic deleted and made again under the same name: every offset the pipeline skips
because of it is counted, whether Spark starts the partition over (its end offset below its
start) or resumes past records of the new topic without a word (the topic's id changed). Pure
logic and the progress; the real broker case is tests/kafka/test_kafka_data_loss.py."""

from __future__ import annotations

from streamwarden.monitoring.summary import offsets_skipped
from streamwarden.sources.base import SKIPPED_METRIC
from streamwarden.sources.kafka_topics import (
    Recreated,
    TopicsSeen,
    account_recreated,
    count_skipped,
    offsets_by_partition,
    recreated_partitions,
    with_skipped,
)
from tests.support import kafka_source, progress_of


def test_a_partition_whose_offsets_went_back_counts_every_new_offset_below_its_end():
    # the checkpoint ended at 1000; the new topic holds 800: Spark starts over at 800
    progress = progress_of(5, [kafka_source({"0": 1000}, {"0": 800}, {"0": 800}, 0)])
    assert offsets_skipped(progress) == 800
    # beside a partition that read normally, each is counted on its own
    both = kafka_source({"0": 1000, "1": 10}, {"0": 800, "1": 20}, {"0": 800, "1": 20}, 10)
    assert offsets_skipped(progress_of(5, [both])) == 800


def test_a_topic_whose_id_changed_has_its_partitions_noted_with_their_resume_point():
    resume = {"pv/0": 763, "pv/1": 5, "other/0": 50}
    found = recreated_partitions(
        resume,
        seen_ids={"pv": "id-1", "other": "id-9"},
        ids_now={"pv": "id-2", "other": "id-9"},
        watermarks={"pv/0": (0, 800), "pv/1": (5, 9)},
    )
    # pv/1 resumes at its new oldest offset: nothing of the new topic is skipped there
    assert found == {"pv/0": Recreated(resume=763, low=0)}


def test_a_topic_seen_for_the_first_time_or_now_gone_is_not_taken_for_made_again():
    resume = {"pv/0": 763}
    assert recreated_partitions(resume, {}, {"pv": "id-2"}, {"pv/0": (0, 800)}) == {}
    assert recreated_partitions(resume, {"pv": "id-1"}, {}, {}) == {}


def test_the_batch_that_starts_at_the_resume_point_counts_what_it_skipped():
    pending = {"pv/0": Recreated(resume=763, low=0)}
    assert count_skipped(pending, {"pv/0": 763}, {"pv/0": 800}) == (763, {"pv/0"})
    # Spark started the partition over instead: the progress counts it, not the note
    assert count_skipped(pending, {"pv/0": 763}, {"pv/0": 700}) == (0, {"pv/0"})
    # a replayed batch before it, or a batch of another source, settles nothing
    assert count_skipped(pending, {"pv/0": 700}, {"pv/0": 763}) == (0, set())
    assert count_skipped(pending, {"x/0": 1}, {"x/0": 2}) == (0, set())


def test_the_count_reaches_offsets_skipped_through_the_sources_metric():
    progress = progress_of(3, [kafka_source({"0": 763}, {"0": 800}, {"0": 800}, 37)])
    assert offsets_skipped(progress) == 0  # what Spark's progress alone shows: nothing
    counted = with_skipped(progress, 0, 763)
    assert counted["sources"][0]["metrics"][SKIPPED_METRIC] == "763"
    assert offsets_skipped(counted) == 763
    assert with_skipped(counted, 0, 0) is counted


def test_the_topics_seen_survive_a_restart(tmp_path):
    path = TopicsSeen.path(tmp_path, 0)
    assert TopicsSeen.read(path) == TopicsSeen()
    TopicsSeen({"pv": "id-2"}, {"pv/0": Recreated(763, 0)}).write(path)
    assert TopicsSeen.read(path) == TopicsSeen({"pv": "id-2"}, {"pv/0": Recreated(763, 0)})
    assert offsets_by_partition('{"pv": {"0": 763, "1": 5}}') == {"pv/0": 763, "pv/1": 5}
    assert offsets_by_partition(None) == offsets_by_partition("null") == {}


def test_asked_twice_about_a_batch_the_console_and_the_monitor_get_the_same_count(tmp_path):
    path = TopicsSeen.path(tmp_path, 0)
    TopicsSeen({"pageviews": "id-2"}, {"pageviews/0": Recreated(763, 0)}).write(path)

    def batch(n: int, start: int, end: int) -> dict:
        return progress_of(n, [kafka_source({"0": start}, {"0": end}, {"0": end}, end - start)])

    counts = [
        offsets_skipped(account_recreated({}, 1.0, path, 0, batch(3, 763, 800))),
        offsets_skipped(account_recreated({}, 1.0, path, 0, batch(3, 763, 800))),
        offsets_skipped(account_recreated({}, 1.0, path, 0, batch(4, 800, 810))),
    ]
    assert counts == [763, 763, 0]
    assert TopicsSeen.read(path).pending == {}
