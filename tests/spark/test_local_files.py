"""Local files go through the engine's in-process file system: permissions set with java.nio
(no ``chmod`` child process) and link status without ``readlink``, with the answers Hadoop's
own local file system gives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark


def hadoop_fs(spark, path: Path):
    jvm = spark._jvm
    hpath = jvm.org.apache.hadoop.fs.Path(path.as_uri())
    return hpath, hpath.getFileSystem(spark._jsc.hadoopConfiguration())


def test_file_uris_use_the_in_process_file_system(spark, workdir):
    _, fs = hadoop_fs(spark, workdir)
    assert fs.getClass().getName() == "io.streamwarden.engine.fs.InProcessLocalFileSystem"
    context = spark._jvm.org.apache.hadoop.fs.FileContext.getFileContext(
        spark._jsc.hadoopConfiguration()
    )
    assert "InProcessLocalFs" in context.getDefaultFileSystem().getClass().getName()


@pytest.mark.parametrize("mode", [0o640, 0o755, 0o600])
def test_permissions_are_set_as_asked(spark, workdir, mode):
    target = workdir / f"file-{mode:o}"
    hpath, fs = hadoop_fs(spark, target)
    fs.create(hpath).close()
    fs.setPermission(hpath, spark._jvm.org.apache.hadoop.fs.permission.FsPermission(mode))
    assert stat.S_IMODE(os.stat(target).st_mode) == mode


def test_link_status_is_what_hadoops_own_local_file_system_reports(spark, workdir):
    target = workdir / "target"
    target.write_text("x")
    (workdir / "link").symlink_to(target)
    hadoops = spark._jvm.org.apache.hadoop.fs.RawLocalFileSystem()
    hadoops.initialize(spark._jvm.java.net.URI("file:///"), spark._jsc.hadoopConfiguration())
    for name in ("target", "link"):
        hpath, fs = hadoop_fs(spark, workdir / name)
        ours, theirs = fs.getFileLinkStatus(hpath), hadoops.getFileLinkStatus(hpath)
        assert (ours.isSymlink(), ours.getLen(), ours.isFile()) == (
            theirs.isSymlink(),
            theirs.getLen(),
            theirs.isFile(),
        )
        assert ours.getLen() == 1


def test_a_missing_file_has_no_link_status(spark, workdir):
    hpath, fs = hadoop_fs(spark, workdir / "missing")
    with pytest.raises(Exception, match=r"FileNotFound|does not exist"):
        fs.getFileLinkStatus(hpath)
