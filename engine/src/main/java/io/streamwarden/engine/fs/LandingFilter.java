package io.streamwarden.engine.fs;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;

/**
 * The landing guard's gate in front of Spark's file source: a file of a guarded landing folder
 * is listed only once the guard (Python, {@code sources/landing_guard.py}) has checked and
 * passed it. Spark plans a batch on its own thread, at any time between two polls of the guard;
 * without this gate a bad file that lands in between (a glob character or a colon in its name,
 * a truncated gzip, a Parquet file of other columns) is read unchecked. With it, such a file
 * stays unlisted until the next poll moves it aside.
 *
 * <p>Set as the files source's Hadoop path filter ({@code mapreduce.input.pathFilter.class},
 * which Spark's file index reads); the passed names live in this JVM (the driver, which lists
 * the folder), filled by {@link #pass} on each poll. A file of a folder never guarded passes.
 */
public final class LandingFilter implements PathFilter {
  /** Hadoop's setting that names the path filter of a file listing. */
  public static final String SETTING = "mapreduce.input.pathFilter.class";

  private static final Map<String, Set<String>> PASSED = new ConcurrentHashMap<>();

  /** Lets Spark list the files {@code names} of the landing folder {@code folder}. */
  public static void pass(String folder, List<String> names) {
    PASSED.computeIfAbsent(withoutSlash(folder), f -> ConcurrentHashMap.newKeySet()).addAll(names);
  }

  /**
   * Forgets the names {@code names} of {@code folder}, files the guard found gone (deleted by a
   * retention job): without it a stream beside such a job would keep every name it ever read.
   * A file landing again under a forgotten name waits, unlisted, for the guard to check it.
   */
  public static void forget(String folder, List<String> names) {
    Set<String> passed = PASSED.get(withoutSlash(folder));
    if (passed != null) {
      names.forEach(passed::remove); // not removeAll: it would scan the whole set per name
    }
  }

  /** Guards {@code folder}: from now on Spark lists only its files passed with {@link #pass}. */
  public static void guard(String folder) {
    PASSED.computeIfAbsent(withoutSlash(folder), f -> ConcurrentHashMap.newKeySet());
  }

  @Override
  public boolean accept(Path path) {
    Path parent = path.getParent();
    if (parent == null) {
      return true;
    }
    Set<String> passed = PASSED.get(withoutSlash(parent.toUri().getPath()));
    return passed == null || passed.contains(path.getName());
  }

  private static String withoutSlash(String folder) {
    return folder.length() > 1 && folder.endsWith("/")
        ? folder.substring(0, folder.length() - 1) : folder;
  }
}
