package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.streamwarden.engine.sessions.SessionTestUtilities.UserDriver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The property that makes the aggregates trustworthy: however a key's events are split into
 * micro-batches (in arrival order, the watermark keeping every event within the allowed
 * lateness), and whether or not the state is reloaded from its encoding between batches, the
 * final sessions carry the aggregates one direct computation over all their events gives
 * ({@link AggregateReference}). Random cases from fixed seeds, so a failure names its seed.
 */
class AggregatePropertyTest {
  private static final int CASES = 200;
  private static final long GAP = 30;
  private static final long LATENESS = 60;
  private static final SessionPlan PLAN = SessionTestUtilities.plan(GAP, LATENESS,
      SessionTestUtilities.EVERY_KIND, SessionTestUtilities.everyFunction());
  private static final long[] LONGS = {-5, 0, 3, 7, 1_000_000_000_000L, -1_000_000_000_000L};
  private static final double[] DOUBLES = {1e16, -1e16, 1.0, 0.1, 2.5, -3.75, 0.0, -0.0,
      1e-300, 123456.789};
  private static final String[] STRINGS = {"", "a", "b", "ab", "\u00e9", "\uFFFD", "\uE000",
      "\uD83D\uDE00", "z"};

  @Test
  void anyBatchingGivesTheAggregatesOfOneDirectComputationOverAllEvents() {
    for (long seed = 1; seed <= CASES; seed++) {
      Random random = new Random(seed);
      List<Event> arrived = events(random);
      Map<Long, List<Object>> actual = run(arrived, random);
      assertEquals(expected(arrived), actual, "seed " + seed);
    }
  }

  /** 1 to 40 events within 4 hours (many sharing a minute), roughly in time order. */
  private static List<Event> events(Random random) {
    int n = 1 + random.nextInt(40);
    List<long[]> order = new ArrayList<>(); // {arrival key, event time}
    for (int i = 0; i < n; i++) {
      long t = random.nextInt(240) * MIN;
      order.add(new long[] {t + random.nextInt(90) * MIN, t});
    }
    order.sort(Comparator.comparingLong(o -> o[0]));
    List<Event> events = new ArrayList<>();
    for (long[] o : order) {
      events.add(new Event(o[1], 10 + random.nextInt(90), "e" + events.size(), new Object[] {
          random.nextInt(5) == 0 ? null : LONGS[random.nextInt(LONGS.length)],
          random.nextInt(5) == 0 ? null : randomDouble(random),
          random.nextInt(5) == 0 ? null : STRINGS[random.nextInt(STRINGS.length)],
          random.nextInt(5) == 0 ? null : random.nextBoolean()}));
    }
    return events;
  }

  private static Double randomDouble(Random random) {
    int special = random.nextInt(100);
    if (special == 0) {
      return Double.NaN;
    }
    if (special == 1) {
      return random.nextBoolean() ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
    }
    return DOUBLES[random.nextInt(DOUBLES.length)];
  }

  /**
   * The events in random batches, each under a watermark no later than its earliest event yet
   * to come plus the lateness (less 1 ms), then the end of time: the last revision of each
   * session that survived, by start.
   */
  private static Map<Long, List<Object>> run(List<Event> arrived, Random random) {
    UserDriver u = new UserDriver(PLAN);
    boolean reload = random.nextBoolean();
    List<Emitted> out = new ArrayList<>();
    long watermark = Long.MIN_VALUE;
    int from = 0;
    while (from < arrived.size()) {
      int to = Math.min(arrived.size(), from + 1 + random.nextInt(8));
      long earliestToCome = Long.MAX_VALUE;
      for (int i = from; i < arrived.size(); i++) {
        earliestToCome = Math.min(earliestToCome, arrived.get(i).tsMs);
      }
      long bound = earliestToCome + LATENESS * MIN - 1;
      watermark = Math.max(watermark, bound - random.nextInt((int) (LATENESS * MIN)));
      out.addAll(u.rawBatch(watermark, arrived.subList(from, to).toArray(new Event[0])));
      out.addAll(u.rawWatermark(watermark));
      if (reload) {
        u.reloadState();
      }
      from = to;
    }
    out.addAll(u.rawWatermark(Long.MAX_VALUE / 2));
    Map<String, Emitted> last = new LinkedHashMap<>();
    Set<String> absorbed = new HashSet<>();
    for (Emitted e : out) {
      assertEquals(Emitted.SESSION, e.kind, "nothing is dead-lettered: " + e.detail);
      last.put(e.session.getSessionId(), e);
      if (e.mergedIds != null) {
        absorbed.addAll(e.mergedIds);
      }
    }
    Map<Long, List<Object>> byStart = new TreeMap<>();
    for (Emitted e : last.values()) {
      if (!absorbed.contains(e.session.getSessionId())) {
        byStart.put(e.session.getStartMs(), Arrays.asList(e.results));
      }
    }
    return byStart;
  }

  /** The gap's clusters of all events, each aggregated at once, by start. */
  private static Map<Long, List<Object>> expected(List<Event> arrived) {
    List<Event> byTime = new ArrayList<>(arrived);
    byTime.sort(Comparator.comparingLong(e -> e.tsMs));
    Map<Long, List<Object>> out = new TreeMap<>();
    int start = 0;
    for (int i = 1; i <= byTime.size(); i++) {
      if (i == byTime.size() || byTime.get(i).tsMs - byTime.get(i - 1).tsMs >= GAP * MIN) {
        Set<Event> cluster = new HashSet<>(byTime.subList(start, i));
        List<Event> inArrivalOrder = new ArrayList<>();
        for (Event e : arrived) {
          if (cluster.contains(e)) {
            inArrivalOrder.add(e);
          }
        }
        out.put(byTime.get(start).tsMs,
            AggregateReference.compute(PLAN.aggregates, inArrivalOrder));
        start = i;
      }
    }
    return out;
  }
}
