package io.streamwarden.engine.patterns;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.streamwarden.engine.patterns.NfaTestUtilities.KeyDriver;
import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.DoublePredicate;
import java.util.function.Predicate;

/**
 * The harness for the cases ported from Flink CEP's own test suite (the {@code Flink*ITCaseTest}
 * classes), after Flink's {@code NFATestUtilities}: Flink's {@code Event(id, name, price)} is an
 * event string {@code label:name:price} (the label is the variable name Flink's test gives it),
 * conditions read its name or price (field {@link #PRICE} for comparisons with earlier
 * events), and matches are compared as Flink's {@code
 * comparePatterns} does: as a multiset of matches, each a set of events.
 *
 * <p>Events get distinct, increasing times in the order Flink feeds them (Flink's harness feeds
 * them in list order, whatever their timestamps), unless a case depends on time ({@code
 * within}); then it gives Flink's timestamps. After the last event the watermark passes every
 * deadline, as {@code PatternTester.run} does.
 */
final class FlinkCases {
  private FlinkCases() {}

  /** Flink's {@code new Event(id, name, price)}, called {@code label} in Flink's test. */
  static String ev(String label, String name, double price) {
    return label + ":" + name + ":" + price;
  }

  /** Flink's {@code new SubEvent(id, name, price, volume)}: an event with a volume. */
  static String sub(String label, String name, double price, double volume) {
    return ev(label, name, price) + ":" + volume;
  }

  /** {@code subtype(SubEvent.class).where(value.getVolume() > bound)}. */
  static Predicate<String> subVolumeAbove(double bound) {
    return e -> e.split(":").length == 4 && Double.parseDouble(e.split(":")[3]) > bound;
  }

  /** {@code value.getName().equals(name)}. */
  static Predicate<String> name(String name) {
    return e -> e.split(":")[1].equals(name);
  }

  /** {@code value.getName().contains(part)}. */
  static Predicate<String> nameContains(String part) {
    return e -> e.split(":")[1].contains(part);
  }

  /** The field index of an event's price, for comparisons with earlier events. */
  static final int PRICE = 1;

  /** A condition on {@code value.getPrice()}. */
  static Predicate<String> price(DoublePredicate test) {
    return e -> test.test(Double.parseDouble(e.split(":")[2]));
  }

  /** One expected match: its events as a set (Flink sorts each match before comparing). */
  static String match(String... events) {
    List<String> labels = new ArrayList<>();
    for (String e : events) {
      labels.add(e.split(":")[0]);
    }
    Collections.sort(labels);
    return String.join(" ", labels);
  }

  /** The matches the pattern reports on {@code events}, one second apart. */
  static List<String> matches(PatternBuilder pattern, String... events) {
    long[] times = new long[events.length];
    for (int i = 0; i < events.length; i++) {
      times[i] = (i + 1) * 1000L;
    }
    return matchesAt(pattern, times, events);
  }

  /** The matches the pattern reports on {@code events} at {@code times} (milliseconds). */
  static List<String> matchesAt(PatternBuilder pattern, long[] times, String... events) {
    List<String> found = new ArrayList<>();
    for (String line : NfaTestUtilities.only("match", outputsAt(pattern, times, events))) {
      String[] parts = line.split(" ");
      found.add(match(Arrays.copyOfRange(parts, 1, parts.length)));
    }
    Collections.sort(found);
    return found;
  }

  /** Every output line ({@code match ...}, {@code timeout ... @deadline}) in order. */
  static List<String> outputsAt(PatternBuilder pattern, long[] times, String... events) {
    PatternPlan plan = pattern.plan();
    KeyDriver key = new KeyDriver(plan);
    long last = 0;
    for (long t : times) {
      last = Math.max(last, t);
    }
    List<String> out = new ArrayList<>(key.batch(-1, input(pattern, times, events)));
    out.addAll(key.watermark(last + plan.withinMs + 1));
    return out;
  }

  /** Flink's {@code nfa.isEmpty()} after the events: the key holds no partial match (the
   * watermark at the last event, so no window has closed). */
  static boolean noPartialsLeft(PatternBuilder pattern, String... events) {
    KeyDriver key = new KeyDriver(pattern.plan());
    long[] times = new long[events.length];
    for (int i = 0; i < events.length; i++) {
      times[i] = (i + 1) * 1000L;
    }
    key.batch(events.length * 1000L, input(pattern, times, events));
    return key.state.partials.isEmpty();
  }

  /** The events with the masks their conditions give, carrying their name and {@link
   * #PRICE}. */
  private static List<PEvent> input(PatternBuilder pattern, long[] times, String... events) {
    List<PEvent> input = new ArrayList<>();
    for (int i = 0; i < events.length; i++) {
      PEvent e = pattern.event(events[i], times[i]); // the mask its conditions give
      input.add(new PEvent(e.tsMs, e.mask, new String[] {events[i], events[i].split(":")[2]}));
    }
    return input;
  }

  /** Asserts the multiset of matches, as Flink's {@code comparePatterns}. */
  static void assertMatches(List<String> actual, String... expected) {
    List<String> want = new ArrayList<>(Arrays.asList(expected));
    Collections.sort(want);
    assertEquals(want, actual);
  }
}
