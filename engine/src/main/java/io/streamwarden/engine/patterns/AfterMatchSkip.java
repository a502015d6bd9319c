package io.streamwarden.engine.patterns;

import java.util.Comparator;
import java.util.List;

/**
 * Flink's AfterMatchSkipStrategy over the matches one NFA step completed: which partial matches
 * (and matches not yet reported) each reported match discards, in Flink's order.
 */
final class AfterMatchSkip {
  private static final Comparator<Partial> MATCH_ORDER =
      Comparator.<Partial>comparingLong(p -> p.first().ord)
          .thenComparingInt(p -> p.events.size())
          .thenComparingLong(p -> p.last().ord);
  private static final Comparator<Partial> HELD_ORDER =
      Comparator.<Partial>comparingLong(p -> p.first().ord)
          .thenComparing(Comparator.<Partial>comparingInt(p -> p.events.size()).reversed())
          .thenComparingLong(p -> p.last().ord);

  private final PatternPlan plan;

  AfterMatchSkip(PatternPlan plan) {
    this.plan = plan;
  }

  /**
   * Reports completed matches earliest-start first; after each, the skip strategy discards
   * partial matches (and not yet reported matches) as Flink's AfterMatchSkipStrategy does.
   * Under a skip strategy a match waits (in {@code s.held}) while a partial match that started
   * earlier is still open, as in Flink: that partial may complete first and its skip may
   * discard the waiting match. Matches with the same start go longest first.
   */
  void emit(List<Partial> done, KeyState s, List<Found> out) {
    if (plan.skip == PatternPlan.Skip.NO_SKIP) {
      done.sort(MATCH_ORDER);
      for (Partial m : done) {
        out.add(Found.match(m));
      }
      return;
    }
    s.held.addAll(done);
    s.held.sort(HELD_ORDER);
    while (!s.held.isEmpty() && !startedEarlier(s.partials, s.held.get(0).first().ord)) {
      Partial m = s.held.remove(0);
      out.add(Found.match(m));
      long pruneBefore = pruningOrd(m);
      if (pruneBefore == Long.MIN_VALUE) {
        continue;
      }
      boolean inclusive = plan.skip == PatternPlan.Skip.SKIP_TO_NEXT
          || plan.skip == PatternPlan.Skip.SKIP_PAST_LAST_EVENT;
      s.partials.removeIf(p -> prunes(p, pruneBefore, inclusive));
      s.held.removeIf(p -> prunes(p, pruneBefore, inclusive));
    }
  }

  /** The event a skip_to_first/last prunes before; with throw_on_miss, no such event (or the
   * match's own first event, which would find the match again) is a {@link SkipMissException},
   * as Flink's {@code throwExceptionOnMiss}. Without it, no event means no skip. */
  private long skipTarget(Partial m, PEvent e, String strategy) {
    String stage = plan.stages.get(plan.skipStage).name;
    if (plan.skipThrowOnMiss && e == null) {
      throw new SkipMissException(strategy + "('" + stage + "') with throw_on_miss: the match "
          + "has no event of stage '" + stage + "'; make the stage mandatory, or drop "
          + "throw_on_miss to skip nothing then");
    }
    if (plan.skipThrowOnMiss && e == m.first()) {
      throw new SkipMissException(strategy + "('" + stage + "') with throw_on_miss: it would "
          + "skip to the match's own first event and find the match again; skip to a later "
          + "stage");
    }
    return e == null ? Long.MIN_VALUE : e.ord;
  }

  private static boolean startedEarlier(List<Partial> partials, long ord) {
    for (Partial p : partials) {
      if (p.first().ord < ord) {
        return true;
      }
    }
    return false;
  }

  private static boolean prunes(Partial p, long pruneOrd, boolean inclusive) {
    long start = p.first().ord;
    return inclusive ? start <= pruneOrd : start < pruneOrd;
  }

  private long pruningOrd(Partial m) {
    switch (plan.skip) {
      case SKIP_TO_NEXT:
        return m.first().ord;
      case SKIP_PAST_LAST_EVENT:
        return m.last().ord;
      case SKIP_TO_FIRST:
        return skipTarget(m, m.firstOf(plan.skipStage), "skip_to_first");
      case SKIP_TO_LAST:
        return skipTarget(m, m.lastOf(plan.skipStage), "skip_to_last");
      default:
        return Long.MIN_VALUE;
    }
  }
}
