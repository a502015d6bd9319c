package io.streamwarden.engine.fs;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;

/**
 * The {@code FileContext} flavour of {@link InProcessLocalFileSystem} (Spark's checkpoint manager
 * renames through {@code FileContext}); set as {@code fs.AbstractFileSystem.file.impl}.
 */
public class InProcessLocalFs extends ChecksumFs {
  public InProcessLocalFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
    super(new Raw(uri, conf));
  }

  /** Hadoop's {@code RawLocalFs}, delegating to the in-process raw file system. */
  static final class Raw extends DelegateToFileSystem {
    Raw(URI uri, Configuration conf) throws IOException, URISyntaxException {
      super(uri, new InProcessRawLocalFileSystem(), conf, "file", false);
    }

    @Override
    public int getUriDefaultPort() {
      return -1;
    }
  }
}
