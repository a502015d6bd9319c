package io.streamwarden.engine.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The checksummed {@code file://} file system (Hadoop's default) over {@link
 * InProcessRawLocalFileSystem}; set as {@code fs.file.impl}.
 */
public class InProcessLocalFileSystem extends LocalFileSystem {
  public InProcessLocalFileSystem() {
    super(new InProcessRawLocalFileSystem());
  }
}
