package io.streamwarden.engine.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system, minus its child processes.
 *
 * <p>Without Hadoop's native library (which the pyspark wheel does not ship), {@link
 * RawLocalFileSystem} forks {@code chmod} for every file it creates with a permission and
 * {@code readlink} for every link-status lookup, which Spark's checkpoint manager does on each
 * rename. A streaming query writes several checkpoint files per micro-batch and per state
 * partition, so a query forked about 1,400 times in a 12-batch run, each fork copying the page
 * tables of a multi-gigabyte JVM. This class does the same two operations in-process with
 * java.nio; everything else (and every real symbolic link) is Hadoop's own code.
 */
public class InProcessRawLocalFileSystem extends RawLocalFileSystem {
  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE,
    PosixFilePermission.OTHERS_WRITE,
    PosixFilePermission.OTHERS_READ,
    PosixFilePermission.GROUP_EXECUTE,
    PosixFilePermission.GROUP_WRITE,
    PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE,
    PosixFilePermission.OWNER_WRITE,
    PosixFilePermission.OWNER_READ,
  };

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
    short mode = permission.toShort();
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        perms.add(BITS[bit]);
      }
    }
    Files.setPosixFilePermissions(pathToFile(p).toPath(), perms);
  }

  /** For anything that is not a symbolic link, a link's status is the file's own status. */
  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (Files.isSymbolicLink(pathToFile(f).toPath())) {
      return super.getFileLinkStatus(f);
    }
    return getFileStatus(f);
  }
}
