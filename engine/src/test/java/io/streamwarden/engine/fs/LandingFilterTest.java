package io.streamwarden.engine.fs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * The gate lists a guarded folder's files only once the guard passed them, lists any file of a
 * folder never guarded, and forgets a name the guard found gone, so that a file landing again
 * under it waits for the guard.
 */
class LandingFilterTest {
  private final LandingFilter filter = new LandingFilter();

  @Test
  void aGuardedFoldersFileIsListedOnlyOncePassed() {
    LandingFilter.guard("/land/a/");
    assertFalse(filter.accept(new Path("/land/a/x.jsonl")));
    LandingFilter.pass("/land/a", List.of("x.jsonl"));
    assertTrue(filter.accept(new Path("/land/a/x.jsonl")));
    assertFalse(filter.accept(new Path("/land/a/y.jsonl")));
  }

  @Test
  void aFolderNeverGuardedIsNotFiltered() {
    assertTrue(filter.accept(new Path("/elsewhere/y.jsonl")));
  }

  @Test
  void aForgottenNameWaitsForTheGuardAgain() {
    LandingFilter.guard("/land/b");
    LandingFilter.pass("/land/b", List.of("old.jsonl", "kept.jsonl"));
    LandingFilter.forget("/land/b/", List.of("old.jsonl"));
    assertFalse(filter.accept(new Path("/land/b/old.jsonl")));
    assertTrue(filter.accept(new Path("/land/b/kept.jsonl")));
  }
}
