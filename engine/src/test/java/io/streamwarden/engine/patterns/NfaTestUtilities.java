package io.streamwarden.engine.patterns;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Builders for the NFA tests, after Flink CEP's {@code NFATestUtilities}: a pattern built the
 * way Python's {@code Pattern} builds it (same stage defaults, same plan JSON), events named by
 * a string whose prefix decides which stage conditions they meet (the mask Spark would compute),
 * and each output written as one line, e.g. {@code match a b1}.
 */
final class NfaTestUtilities {
  static final long HOUR_MS = 3_600_000L;
  static final int UNTIL_BITS = 40;
  private static final ObjectMapper JSON = new ObjectMapper();

  private NfaTestUtilities() {}

  /** An event's name starts with {@code prefix}. */
  static Predicate<String> named(String prefix) {
    return name -> name.startsWith(prefix);
  }

  static Predicate<String> any() {
    return name -> true;
  }

  /** Starts a pattern as {@code Pattern.begin(name).where(condition)} does. */
  static PatternBuilder begin(String name, Predicate<String> condition) {
    return new PatternBuilder().add(name, "normal", "strict", condition);
  }

  /** Starts a pattern with a group, as Flink's {@code Pattern.begin(Pattern)}. */
  static PatternBuilder begin(Group group) {
    return new PatternBuilder().addGroup("strict", group);
  }

  /**
   * A group pattern (a sub-pattern as one element) with its quantifier, as Flink's {@code
   * GroupPattern}: {@code times(n)}, {@code times(n, m)}, {@code optional()}, and the
   * contiguity between rounds ({@code consecutive()}, {@code allowCombinations()}). The plan
   * has a copy of the sub-pattern's stages for each round, as Flink's compiler has copies of
   * its states; a round that may be left out has its first stage optional, skipping past the
   * group.
   */
  static final class Group {
    private final PatternBuilder sub;
    private int min = 1;
    private int max = 1;
    private boolean optional;
    private String inner = "relaxed";
    private Predicate<String> until;

    private Group(PatternBuilder sub) {
      this.sub = sub;
    }

    static Group of(PatternBuilder sub) {
      return new Group(sub);
    }

    Group times(int n) {
      return times(n, n);
    }

    /** {@code times(0, m)} is {@code times(1, m).optional()}, as in Flink. */
    Group times(int n, int m) {
      min = Math.max(n, 1);
      max = m;
      optional |= n == 0;
      return this;
    }

    Group optional() {
      optional = true;
      return this;
    }

    Group consecutive() {
      inner = "strict";
      return this;
    }

    /** Flink's {@code until(condition)} on a looping group: its event is neither taken nor
     * skipped by any of the group's stages. */
    Group until(Predicate<String> condition) {
      until = condition;
      return this;
    }

    /** Flink's {@code oneOrMore()} on a group: after the first round, a looping round. */
    Group oneOrMore() {
      max = -1;
      return this;
    }

    Group allowCombinations() {
      inner = "any";
      return this;
    }
  }

  /** A pattern under construction; each call changes the last stage or adds one. */
  static final class PatternBuilder {
    private final List<ObjectNode> stages = new ArrayList<>();
    private final List<Predicate<String>> conditions = new ArrayList<>();
    /** Until conditions take the bits from {@link #UNTIL_BITS} on, after every stage's. */
    private final List<Predicate<String>> untils = new ArrayList<>();
    private final ObjectNode root = JSON.createObjectNode();

    PatternBuilder() {
      root.put("within_ms", HOUR_MS);
      root.putObject("skip").put("kind", "no_skip").put("stage", -1);
      root.putArray("fields").add("name");
      // a plan carries every option (their defaults live in Python): these are the tests' own
      root.put("max_partials_per_key", 1000);
      root.put("max_buffered_per_key", 10_000);
      root.put("emit_timeouts", false);
      root.put("slow_key_threshold_ms", 0);
    }

    private PatternBuilder add(String name, String kind, String contiguity,
        Predicate<String> condition) {
      ObjectNode s = JSON.createObjectNode();
      boolean negation = !"normal".equals(kind);
      s.put("name", name).put("kind", kind).put("contiguity", contiguity).put("inner", "relaxed")
          .put("min", negation ? 0 : 1).put("max", 1).put("greedy", false).put("optional", false);
      s.putArray("field_conditions");
      s.putArray("aggregate_conditions");
      stages.add(s);
      conditions.add(condition);
      return this;
    }

    /** Appends {@code g}'s stages once per round: the first round's first stage relates to
     * the stage before as {@code contiguity}, a later round's as the group's inner contiguity.
     * A round beyond the minimum, or the first of an optional group, may be skipped whole. */
    private PatternBuilder addGroup(String contiguity, Group g) {
      if (!g.sub.untils.isEmpty()) {
        throw new IllegalArgumentException("until inside a group is not supported");
      }
      int untilBit = -1;
      if (g.until != null) {
        untilBit = UNTIL_BITS + untils.size();
        untils.add(g.until);
      }
      int base = stages.size();
      int len = g.sub.stages.size();
      boolean looping = g.max < 0;
      int rounds = looping ? g.min + 1 : g.max; // a loop: the minimum, then a looping round
      int end = base + rounds * len;
      for (int r = 0; r < rounds; r++) {
        int offset = base + r * len;
        for (int k = 0; k < len; k++) {
          ObjectNode s = g.sub.stages.get(k).deepCopy();
          if (s.has("skip_to")) {
            s.put("skip_to", s.get("skip_to").asInt() + offset);
          }
          if (s.has("loop_to")) {
            s.put("loop_to", s.get("loop_to").asInt() + offset);
          }
          if (k == 0) {
            s.put("contiguity", r == 0 ? contiguity : g.inner);
            if (r >= g.min || r == 0 && g.optional) {
              if (s.get("optional").asBoolean()) {
                throw new IllegalArgumentException("an optional group starting with an "
                    + "optional stage is not supported");
              }
              s.put("optional", true).put("skip_to", end);
            }
          }
          if (untilBit >= 0) {
            s.put("until_bit", untilBit);
          }
          if (looping && r == rounds - 1 && k == len - 1) {
            s.put("loop_to", offset);
          }
          stages.add(s);
          conditions.add(g.sub.conditions.get(k));
        }
      }
      return this;
    }

    PatternBuilder next(Group g) {
      return addGroup("strict", g);
    }

    PatternBuilder followedBy(Group g) {
      return addGroup("relaxed", g);
    }

    PatternBuilder followedByAny(Group g) {
      return addGroup("any", g);
    }

    private ObjectNode last() {
      return stages.get(stages.size() - 1);
    }

    PatternBuilder next(String name, Predicate<String> c) {
      return add(name, "normal", "strict", c);
    }

    PatternBuilder followedBy(String name, Predicate<String> c) {
      return add(name, "normal", "relaxed", c);
    }

    PatternBuilder followedByAny(String name, Predicate<String> c) {
      return add(name, "normal", "any", c);
    }

    PatternBuilder notNext(String name, Predicate<String> c) {
      return add(name, "not_next", "strict", c);
    }

    PatternBuilder notFollowedBy(String name, Predicate<String> c) {
      return add(name, "not_followed_by", "relaxed", c);
    }

    PatternBuilder oneOrMore() {
      return times(1, -1);
    }

    PatternBuilder times(int n) {
      return times(n, n);
    }

    /** {@code n} to {@code m} events; {@code m} of -1 for no upper bound. {@code times(0, m)}
     * is {@code times(1, m).optional()}, as Python's {@code Pattern.times} (and Flink) make
     * it. */
    PatternBuilder times(int n, int m) {
      if (n == 0) {
        last().put("min", 1).put("max", m).put("optional", true);
        return this;
      }
      last().put("min", n).put("max", m);
      return this;
    }

    /** Flink's {@code timesOrMore(n, windowTime)}: at least {@code n} events, with a window
     * of {@code gapMs} between the loop's events up to the minimum. */
    PatternBuilder timesOrMore(int n, long gapMs) {
      last().put("min", n).put("max", -1).put("loop_gap_ms", gapMs);
      return this;
    }

    /** Flink's {@code until(condition)} on the last (looping) stage. */
    PatternBuilder until(Predicate<String> condition) {
      last().put("until_bit", UNTIL_BITS + untils.size());
      untils.add(condition);
      return this;
    }

    PatternBuilder optional() {
      last().put("optional", true);
      return this;
    }

    PatternBuilder greedy() {
      last().put("greedy", true);
      return this;
    }

    PatternBuilder consecutive() {
      last().put("inner", "strict");
      return this;
    }

    PatternBuilder allowCombinations() {
      last().put("inner", "any");
      return this;
    }

    /** The last stage's event compares its {@code name} with the last event of {@code stage}. */
    PatternBuilder wherePrevious(String op, String stage, boolean numeric) {
      return wherePrevious(0, op, stage, numeric);
    }

    /** The last stage's event compares field {@code field} with the last event of {@code
     * stage}. */
    PatternBuilder wherePrevious(int field, String op, String stage, boolean numeric) {
      int ref = -1;
      for (int i = 0; i < stages.size(); i++) {
        if (stages.get(i).get("name").asText().equals(stage)) {
          ref = i;
        }
      }
      ((ArrayNode) last().get("field_conditions")).addObject().put("field", field).put("op", op)
          .put("ref_stage", ref).put("numeric", numeric);
      return this;
    }

    /** The last stage's event needs {@code agg(field of stage's events) op value}; field -1
     * for count. */
    PatternBuilder whereAggregate(String agg, int field, String stage, String op, double value) {
      int ref = -1;
      for (int i = 0; i < stages.size(); i++) {
        if (stages.get(i).get("name").asText().equals(stage)) {
          ref = i;
        }
      }
      ((ArrayNode) last().get("aggregate_conditions")).addObject().put("agg", agg)
          .put("field", field).put("ref_stage", ref).put("op", op).put("value", value);
      return this;
    }

    /** Flink's {@code until} with an iterative condition on the last (looping) stage: {@code
     * agg(field of stage's events taken so far) op value}; field -1 for count. */
    PatternBuilder untilAggregate(String agg, int field, String stage, String op,
        double value) {
      int ref = -1;
      for (int i = 0; i < stages.size(); i++) {
        if (stages.get(i).get("name").asText().equals(stage)) {
          ref = i;
        }
      }
      ObjectNode s = last();
      if (!s.has("until_aggregate_conditions")) {
        s.putArray("until_aggregate_conditions");
      }
      ((ArrayNode) s.get("until_aggregate_conditions")).addObject().put("agg", agg)
          .put("field", field).put("ref_stage", ref).put("op", op).put("value", value);
      return this;
    }

    PatternBuilder within(long ms) {
      root.put("within_ms", ms);
      return this;
    }

    /** The longest gap between consecutive events of a match. */
    PatternBuilder withinConsecutive(long ms) {
      root.put("within_gap_ms", ms);
      return this;
    }

    /** An after-match skip strategy such as {@code skip_to_first}, optionally with a stage. */
    PatternBuilder skip(String kind, String stage) {
      int index = -1;
      for (int i = 0; i < stages.size(); i++) {
        if (stages.get(i).get("name").asText().equals(stage)) {
          index = i;
        }
      }
      ((ObjectNode) root.get("skip")).put("kind", kind).put("stage", index);
      return this;
    }

    /** Flink's {@code throwExceptionOnMiss()} on the skip strategy. */
    PatternBuilder throwOnMiss() {
      ((ObjectNode) root.get("skip")).put("throw_on_miss", true);
      return this;
    }

    PatternBuilder skip(String kind) {
      return skip(kind, null);
    }

    PatternBuilder emitTimeouts() {
      root.put("emit_timeouts", true);
      return this;
    }

    PatternBuilder maxPartialsPerKey(int cap) {
      root.put("max_partials_per_key", cap);
      return this;
    }

    PatternPlan plan() {
      ObjectNode copy = root.deepCopy();
      ArrayNode array = copy.putArray("stages");
      stages.forEach(array::add);
      return PatternPlan.fromJson(copy.toString());
    }

    /** The event {@code name} at {@code tsMs}, with the stage bits its name meets. */
    PEvent event(String name, long tsMs) {
      long mask = 0;
      for (int i = 0; i < conditions.size(); i++) {
        if (conditions.get(i).test(name)) {
          mask |= 1L << i;
        }
      }
      for (int i = 0; i < untils.size(); i++) {
        if (untils.get(i).test(name)) {
          mask |= 1L << (UNTIL_BITS + i);
        }
      }
      return new PEvent(tsMs, mask, new String[] {name});
    }

    /** Events named {@code names}, one second apart from 1 s on. */
    List<PEvent> stream(String... names) {
      List<PEvent> events = new ArrayList<>();
      for (int i = 0; i < names.length; i++) {
        events.add(event(names[i], (i + 1) * 1000L));
      }
      return events;
    }
  }

  /** One key under an NFA, driven as the processor drives it. */
  static final class KeyDriver {
    final Nfa nfa;
    final KeyState state = new KeyState();

    KeyDriver(PatternPlan plan) {
      this.nfa = new Nfa(plan);
    }

    /** Buffers {@code events}, then advances to {@code watermarkMs}; the outputs described. */
    List<String> batch(long watermarkMs, List<PEvent> events) {
      nfa.buffer(state, new ArrayList<>(events));
      List<Found> found = new ArrayList<>();
      nfa.advance(state, watermarkMs, found);
      return describe(found);
    }

    List<String> watermark(long watermarkMs) {
      return batch(watermarkMs, List.of());
    }
  }

  /**
   * All events in one batch, then a watermark past every deadline, as {@code
   * PatternTester.run} does: the matches (and timeouts, overflows) described.
   */
  static List<String> run(PatternBuilder pattern, String... names) {
    PatternPlan plan = pattern.plan();
    KeyDriver key = new KeyDriver(plan);
    List<PEvent> events = pattern.stream(names);
    List<String> out = new ArrayList<>(key.batch(-1, events));
    out.addAll(key.watermark(names.length * 1000L + plan.withinMs + 1));
    return out;
  }

  static List<String> describe(List<Found> found) {
    List<String> lines = new ArrayList<>(found.size());
    for (Found f : found) {
      lines.add(describe(f));
    }
    return lines;
  }

  /** {@code match a b}, {@code timeout a @10000} (with its deadline) or {@code overflow 2}. */
  static String describe(Found f) {
    if (f.kind == Found.Kind.OVERFLOW) {
      return "overflow " + f.dropped;
    }
    StringBuilder b = new StringBuilder(f.kind == Found.Kind.MATCH ? "match" : "timeout");
    for (PEvent e : f.partial.events) {
      b.append(' ').append(e.values[0]);
    }
    if (f.kind == Found.Kind.TIMEOUT) {
      b.append(" @").append(f.deadlineMs);
    }
    return b.toString();
  }

  /** The lines of {@code out} that start with {@code kind}, in order. */
  static List<String> only(String kind, List<String> out) {
    List<String> kept = new ArrayList<>();
    for (String line : out) {
      if (line.startsWith(kind + " ")) {
        kept.add(line);
      }
    }
    return kept;
  }
}
