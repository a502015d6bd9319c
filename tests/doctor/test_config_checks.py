"""``doctor`` on configs: each finding is triggered by a minimal bad config, and the example
configs (examples/pageviews.toml, payments.toml, logins.toml) trigger none."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streamwarden.config import load_config
from streamwarden.doctor import Severity, diagnose
from streamwarden.doctor.cluster import mount_type
from streamwarden.errors import ConfigError
from tests.support import pipeline_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ROCKSDB = "spark.sql.streaming.stateStore.rocksdb."
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


def config(**sections):
    return pipeline_config(Path("/nonexistent"), **sections)


def codes(cfg) -> dict[str, Severity]:
    return {f.code: f.severity for f in diagnose(cfg)}


@pytest.mark.parametrize("example", ["pageviews.toml", "payments.toml", "logins.toml"])
def test_the_example_configs_have_no_findings(example):
    assert diagnose(load_config(EXAMPLES / example)) == []


def test_the_minimal_config_has_no_findings():
    assert diagnose(config(spark={"master": "local[2]", "shuffle_partitions": 4})) == []


BAD_CONFIGS = [
    (
        "memory-over-container",
        Severity.ERROR,
        {
            "resources": {"container_memory": "2g"},
            "spark": {
                "conf": {
                    "spark.driver.memory": "2g",
                    f"{ROCKSDB}boundedMemoryUsage": "true",
                    f"{ROCKSDB}maxMemoryUsageMB": "128",
                }
            },
        },
    ),
    (
        "memory-over-container",
        Severity.ERROR,
        {
            "resources": {"container_memory": "4g"},
            "spark": {
                "master": "yarn",
                "conf": {
                    "spark.executor.memory": "3g",
                    "spark.executor.memoryOverhead": "512m",
                    "spark.memory.offHeap.enabled": "true",
                    "spark.memory.offHeap.size": "1g",
                    f"{ROCKSDB}boundedMemoryUsage": "true",
                    f"{ROCKSDB}maxMemoryUsageMB": "256",
                },
            },
        },
    ),
    ("rocksdb-memory-unbounded", Severity.WARNING, {"resources": {"container_memory": "8g"}}),
    (
        "rocksdb-memory-over-overhead",
        Severity.WARNING,
        {
            "spark": {
                "conf": {
                    f"{ROCKSDB}boundedMemoryUsage": "true",
                    f"{ROCKSDB}maxMemoryUsageMB": "2048",
                }
            }
        },
    ),
    (  # RocksDB's 256 MiB fits the default 384 MiB overhead, but not with the JVM's own
        "rocksdb-memory-over-overhead",
        Severity.WARNING,
        {
            "spark": {
                "conf": {
                    f"{ROCKSDB}boundedMemoryUsage": "true",
                    f"{ROCKSDB}maxMemoryUsageMB": "256",
                }
            }
        },
    ),
    (
        "executor-memory-ignored",
        Severity.WARNING,
        {"spark": {"conf": {"spark.executor.memory": "4g"}}},
    ),
    (
        "off-heap-without-size",
        Severity.ERROR,
        {"spark": {"conf": {"spark.memory.offHeap.enabled": "true"}}},
    ),
    (
        "partitions-fewer-than-cores",
        Severity.WARNING,
        {"spark": {"master": "local[4]", "shuffle_partitions": 2}},
    ),
    (
        "partitions-uneven",
        Severity.WARNING,
        {"spark": {"master": "local[4]", "shuffle_partitions": 10}},
    ),
    (
        "no-growth-headroom",
        Severity.WARNING,
        {"spark": {"master": "local[4]", "shuffle_partitions": 4}},
    ),
    (
        "too-many-partitions",
        Severity.WARNING,
        {"spark": {"master": "local[2]", "shuffle_partitions": 200}},
    ),
    (
        "partitions-uneven",
        Severity.WARNING,
        {"resources": {"cores": 16}, "spark": {"master": "yarn", "shuffle_partitions": 40}},
    ),
    ("no-idle-timeout", Severity.WARNING, {"sessions": {"idle_timeout": None}}),
    ("long-state-horizon", Severity.WARNING, {"sessions": {"allowed_lateness": "3d"}}),
    (
        "no-data-batches-off",
        Severity.WARNING,
        {"spark": {"conf": {"spark.sql.streaming.noDataMicroBatches.enabled": "false"}}},
    ),
    (
        "rocksdb-off",
        Severity.ERROR,
        {"spark": {"conf": {"spark.sql.streaming.stateStore.providerClass": HDFS}}},
    ),
    (
        "changelog-off",
        Severity.WARNING,
        {"spark": {"conf": {f"{ROCKSDB}changelogCheckpointing.enabled": "false"}}},
    ),
    (
        "state-rows-untracked",
        Severity.WARNING,
        {"spark": {"conf": {f"{ROCKSDB}trackTotalNumberOfRows": "False"}}},
    ),
    ("ui-kill-links-on", Severity.WARNING, {"spark": {"conf": {"spark.ui.killEnabled": "true"}}}),
    (
        "driver-on-network",
        Severity.WARNING,
        {"spark": {"conf": {"spark.driver.bindAddress": "0.0.0.0"}}},
    ),
    ("cluster-unauthenticated", Severity.WARNING, {"spark": {"master": "spark://m:7077"}}),
    ("cluster-ui-open", Severity.WARNING, {"spark": {"master": "spark://m:7077"}}),
    ("cluster-storage-not-shared", Severity.ERROR, {"spark": {"master": "spark://m:7077"}}),
]


@pytest.mark.parametrize(("code", "severity", "sections"), BAD_CONFIGS)
def test_each_finding_is_triggered_by_a_minimal_bad_config(code, severity, sections):
    found = codes(config(**sections))
    assert found.get(code) == severity, found


def test_every_finding_says_what_to_do():
    for _, _, sections in BAD_CONFIGS:
        for finding in diagnose(config(**sections)):
            assert finding.message and finding.fix and finding.see


@pytest.mark.parametrize(
    "protection",
    [
        {"spark.acls.enable": "true", "spark.ui.view.acls": "ops"},
        {"spark.ui.filters": "com.example.SsoFilter"},
        {"spark.ui.enabled": "false"},
    ],
)
def test_a_cluster_driver_with_authentication_and_a_guarded_ui_has_no_exposure_finding(
    protection,
):
    cfg = config(
        spark={"master": "spark://m:7077", "conf": {"spark.authenticate": "true", **protection}}
    )
    exposure = {
        "ui-kill-links-on",
        "driver-on-network",
        "cluster-unauthenticated",
        "cluster-ui-open",
    }
    assert exposure.isdisjoint(codes(cfg)), codes(cfg)


@pytest.mark.parametrize("master", ["spark://m:7077", "k8s://https://api:6443", "yarn"])
def test_a_cluster_master_needs_the_folders_declared_shared(master):
    findings = diagnose(config(spark={"master": master}))
    [finding] = [f for f in findings if f.code == "cluster-storage-not-shared"]
    assert "'/nonexistent/checkpoint'" in finding.message
    assert "checkpoint" in finding.fix and "shared_storage = true" in finding.fix
    shared = config(spark={"master": master, "shared_storage": True})
    assert "cluster-storage-not-shared" not in codes(shared)


@pytest.mark.parametrize(
    "conf",
    [
        {"spark.executor.instances": "4", "spark.executor.cores": "2"},
        {"spark.cores.max": "8"},
    ],
)
def test_a_cluster_master_s_cores_come_from_its_executor_settings(conf):
    cfg = config(spark={"master": "spark://m:7077", "shuffle_partitions": 4, "conf": conf})
    [finding] = [f for f in diagnose(cfg) if f.code == "partitions-fewer-than-cores"]
    assert "leaves 4 of 8 cores idle" in finding.message


def test_declared_shared_folders_on_this_host_s_own_file_system_are_a_warning():
    shared = config(spark={"master": "spark://m:7077", "shared_storage": True})
    # /nonexistent is under / here, on the machine's own disk (or the container's overlay)
    [finding] = [f for f in diagnose(shared) if f.code == "shared-storage-looks-local"]
    assert finding.severity == Severity.WARNING
    assert "'/nonexistent/checkpoint'" in finding.message


def test_the_file_system_of_a_folder_is_that_of_its_longest_mount_point(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "/dev/sda1 / ext4 rw 0 0\n"
        "server:/export /mnt/shared nfs4 rw 0 0\n"
        "tmpfs /mnt/shared/scratch tmpfs rw 0 0\n"
        "server:/other /mnt/with\\040space nfs rw 0 0\n"
    )
    assert mount_type(Path("/mnt/shared/pipelines/checkpoint"), mounts) == "nfs4"
    assert mount_type(Path("/mnt/shared/scratch/x"), mounts) == "tmpfs"
    assert mount_type(Path("/mnt/sharedness"), mounts) == "ext4"
    assert mount_type(Path("/mnt/with space/x"), mounts) == "nfs"


def test_a_local_master_needs_no_shared_storage():
    assert "cluster-storage-not-shared" not in codes(config(spark={"master": "local[2]"}))


def test_the_local_driver_on_loopback_by_name_is_not_on_the_network():
    cfg = config(spark={"conf": {"spark.driver.bindAddress": "localhost"}})
    assert "driver-on-network" not in codes(cfg)


def test_memory_findings_show_the_parts_that_add_up():
    (finding,) = [
        f for f in diagnose(config(**BAD_CONFIGS[1][2])) if f.code == "memory-over-container"
    ]
    assert "executor asks for 4608 MiB" in finding.message
    assert "container_memory is 4096 MiB" in finding.message


def test_container_memory_reads_spark_and_kubernetes_units():
    for text in ("4g", "4G", "4096m", "4Gi", "4GiB"):
        assert config(resources={"container_memory": text}).resources.container_memory == 4 * 2**30


@pytest.mark.parametrize("bare", [4096, "4096"])
def test_container_memory_without_a_unit_is_refused_as_ambiguous(bare):
    with pytest.raises(ConfigError, match="container_memory needs a unit"):
        config(resources={"container_memory": bare})


@pytest.mark.spark
def test_a_partition_count_the_checkpoint_overrides_is_reported_with_both_ways_out(
    sessions_checkpoint,
):
    # the checkpoint was made with 2 state partitions
    matching = config(checkpoint={"path": str(sessions_checkpoint)})
    assert "partitions-pinned-by-checkpoint" not in codes(matching)
    other = config(
        checkpoint={"path": str(sessions_checkpoint)},
        spark={"master": "local[2]", "shuffle_partitions": 4},
    )
    [finding] = [f for f in diagnose(other) if f.code == "partitions-pinned-by-checkpoint"]
    assert finding.severity == Severity.WARNING
    assert "holds its state in 2 partitions" in finding.message
    assert "set shuffle_partitions = 2" in finding.fix
    assert f"streamwarden rescale {sessions_checkpoint} --partitions 4" in finding.fix


@pytest.mark.spark
def test_the_partition_checks_judge_the_count_the_checkpoint_pins(sessions_checkpoint):
    # 4 in the config would leave room to grow on 2 cores; the checkpoint's 2 do not
    cfg = config(
        checkpoint={"path": str(sessions_checkpoint)},
        spark={"master": "local[2]", "shuffle_partitions": 4},
    )
    [finding] = [f for f in diagnose(cfg) if f.code == "no-growth-headroom"]
    assert "2 state partitions for 2 cores" in finding.message


@pytest.mark.spark
def test_a_damaged_checkpoint_is_an_error_naming_the_file(sessions_checkpoint, tmp_path):
    copy = tmp_path / "checkpoint"
    shutil.copytree(sessions_checkpoint, copy)
    latest = max(int(p.name) for p in (copy / "offsets").iterdir() if p.name.isdigit())
    offsets = copy / "offsets" / str(latest)
    key = '"spark.sql.shuffle.partitions":'
    offsets.write_text(offsets.read_text().replace(key + '"2"', key + '"x3"'))
    findings = diagnose(config(checkpoint={"path": str(copy)}))
    [finding] = [f for f in findings if f.code == "checkpoint-damaged"]
    assert finding.severity == Severity.ERROR
    assert str(offsets) in finding.message and "'x3'" in finding.message


@pytest.mark.spark
def test_a_log_checksum_left_without_its_file_is_an_error_saying_to_delete_it(
    sessions_checkpoint, tmp_path
):
    copy = tmp_path / "checkpoint"
    shutil.copytree(sessions_checkpoint, copy)
    assert "checkpoint-orphan-checksum" not in codes(config(checkpoint={"path": str(copy)}))
    latest = max(int(p.name) for p in (copy / "commits").iterdir() if p.name.isdigit())
    (copy / "commits" / str(latest)).unlink()  # its hidden .N.crc stays
    [finding] = [
        f
        for f in diagnose(config(checkpoint={"path": str(copy)}))
        if f.code == "checkpoint-orphan-checksum"
    ]
    stray = copy / "commits" / f".{latest}.crc"
    assert finding.severity == Severity.ERROR
    assert str(stray) in finding.message and f"delete {stray}" in finding.fix


@pytest.mark.spark
def test_the_checksum_a_killed_rename_leaves_is_not_a_finding(sessions_checkpoint, tmp_path):
    """SIGKILL between Spark's rename of ``commits/N`` into place and the rename of its
    checksum leaves ``commits/N`` without ``.N.crc`` and the temporary file's checksum behind:
    debris Spark never reads or writes again, so a restart must not need a person."""
    copy = tmp_path / "checkpoint"
    shutil.copytree(sessions_checkpoint, copy)
    latest = max(int(p.name) for p in (copy / "commits").iterdir() if p.name.isdigit())
    checksum = copy / "commits" / f".{latest}.crc"
    checksum.rename(copy / "commits" / f"..{latest}.0b7c2f4e-5d1a-4e8b-9f00-6c1d2e3f4a5b.tmp.crc")
    assert "checkpoint-orphan-checksum" not in codes(config(checkpoint={"path": str(copy)}))


def cut_copy(checkpoint: Path, root: Path, *, log: str, uncommit: bool = False) -> Path:
    """A copy of ``checkpoint`` whose latest ``log`` file (offsets or commits) is empty, as a
    power loss right after Spark renamed it into place leaves it; ``uncommit`` also removes
    the latest commit, as if the crash came before the batch ran."""
    copy = root / "checkpoint"
    shutil.copytree(checkpoint, copy)
    latest = max(int(p.name) for p in (copy / "offsets").iterdir() if p.name.isdigit())
    if uncommit:
        (copy / "commits" / str(latest)).unlink()
        (copy / "commits" / f".{latest}.crc").unlink()
    (copy / log / str(latest)).write_text("")
    return copy / log / str(latest)


def cut_finding(cfg):
    [finding] = [f for f in diagnose(cfg) if f.code == "checkpoint-cut-log"]
    assert finding.severity == Severity.ERROR
    return finding


@pytest.mark.spark
def test_a_last_commit_cut_short_is_an_error_saying_to_delete_it(sessions_checkpoint, tmp_path):
    cut = cut_copy(sessions_checkpoint, tmp_path, log="commits")
    finding = cut_finding(config(checkpoint={"path": str(cut.parents[1])}))
    assert str(cut) in finding.message and "Incomplete log file" in finding.message
    assert finding.fix.startswith(f"delete {cut} and {cut.parent / f'.{cut.name}.crc'}")


@pytest.mark.spark
def test_the_offsets_of_a_batch_that_never_ran_cut_short_may_be_deleted(
    sessions_checkpoint, tmp_path
):
    cut = cut_copy(sessions_checkpoint, tmp_path, log="offsets", uncommit=True)
    cfg = pipeline_config(tmp_path)  # its sink folders hold no batch yet
    assert cfg.checkpoint.path == cut.parents[1]
    assert cut_finding(cfg).fix.startswith(f"delete {cut} and ")


@pytest.mark.spark
def test_offsets_cut_short_behind_written_outputs_are_not_to_be_deleted(
    sessions_checkpoint, tmp_path
):
    # committed: the batch's outputs exist, and a new plan of that batch could differ from them
    committed = cut_copy(sessions_checkpoint, tmp_path / "a", log="offsets")
    fix = cut_finding(config(checkpoint={"path": str(committed.parents[1])})).fix
    assert "restore the checkpoint from a copy" in fix and "delete" not in fix
    # never committed, but a sink already wrote the batch (a crash between write and commit)
    written = cut_copy(sessions_checkpoint, tmp_path / "b", log="offsets", uncommit=True)
    cfg = pipeline_config(tmp_path / "b")
    assert cfg.sinks["sessions"] is not None
    (cfg.sinks["sessions"].path / f"batch_id={int(written.name):010d}").mkdir(parents=True)
    fix = cut_finding(cfg).fix
    assert "restore the checkpoint from a copy" in fix and "delete" not in fix


@pytest.mark.spark
def test_an_intact_checkpoint_has_no_cut_logs(sessions_checkpoint):
    assert "checkpoint-cut-log" not in codes(config(checkpoint={"path": str(sessions_checkpoint)}))
