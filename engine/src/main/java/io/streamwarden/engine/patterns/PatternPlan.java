package io.streamwarden.engine.patterns;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * The compiled pattern, as Python's {@code streamwarden.operators.patterns.compile} writes it.
 * Every option is in the plan: their defaults live on the Python side only.
 *
 * <p>Stage conditions are not here: Spark evaluates them natively and hands the engine one bit
 * per stage ({@code mask}). Only the comparisons with earlier matched events, which need the
 * partial match, are evaluated in the engine.
 */
public final class PatternPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  /** How a stage relates to the event before it (and, inside a loop, between its events). */
  public enum Contiguity { STRICT, RELAXED, ANY }

  /** A normal stage takes events; the negations discard a partial match instead. */
  public enum Kind { NORMAL, NOT_NEXT, NOT_FOLLOWED_BY }

  /** After a match: which partial matches to discard (Flink's AfterMatchSkipStrategy). */
  public enum Skip { NO_SKIP, SKIP_TO_NEXT, SKIP_PAST_LAST_EVENT, SKIP_TO_FIRST, SKIP_TO_LAST }

  /** {@code value(field) op value(field of the last event matched by stage refStage)}. */
  public static final class FieldCondition implements Serializable {
    private static final long serialVersionUID = 1L;
    public final int field;
    public final String op;
    public final int refStage;
    public final boolean numeric;

    FieldCondition(int field, String op, int refStage, boolean numeric) {
      this.field = field;
      this.op = op;
      this.refStage = refStage;
      this.numeric = numeric;
    }
  }

  /**
   * A limited form of Flink's iterative conditions: {@code agg(field over the events stage
   * refStage has taken) op value}, where agg is count, sum, min, max or avg. When refStage is
   * the stage being evaluated (a loop), the event under test counts too, as a Flink condition
   * that adds {@code value.getPrice()} to the loop's sum does. Over no value, min, max and avg
   * are false; count and sum are 0.
   */
  public static final class AggregateCondition implements Serializable {
    private static final long serialVersionUID = 1L;
    public final String agg;
    /** The carried field aggregated (numeric); -1 for count. */
    public final int field;
    public final int refStage;
    public final String op;
    public final double value;

    AggregateCondition(String agg, int field, int refStage, String op, double value) {
      this.agg = agg;
      this.field = field;
      this.refStage = refStage;
      this.op = op;
      this.value = value;
    }
  }

  /** One named stage of the pattern with its quantifier. */
  public static final class Stage implements Serializable {
    private static final long serialVersionUID = 1L;
    public final String name;
    public final Kind kind;
    public final Contiguity contiguity;
    public final Contiguity inner;
    public final int min;
    /** Maximum events; -1 for unbounded. */
    public final int max;
    public final boolean greedy;
    /** The stage may also take no event at all (Flink's optional()). */
    public final boolean optional;
    public final long bit;
    /** The bit of the stage's {@code until} condition (Flink's until(): an event meeting it
     * ends the loop and is not taken by it); 0 for none. */
    public final long untilBit;
    /** Aggregates over the events taken so far (the event under test does not count) that
     * the until event must also meet, ANDed with {@code untilBit} when that is set; an until
     * made of these alone is Flink's iterative until condition, e.g. the loop's sum reaching a
     * bound. Empty for none. */
    public final List<AggregateCondition> untilAggregates;
    /** Flink's {@code timesOrMore(n, windowTime)}: how long a partial match may wait at this
     * loop for its first event or its events up to the minimum, after its last event; 0 for
     * no such window ({@link PatternPlan#loopGapOf}). */
    public final long loopGapMs;
    public final List<FieldCondition> fieldConditions;
    public final List<AggregateCondition> aggregateConditions;
    /**
     * Where a partial goes when it passes this stage without an event (the stage is optional
     * and took none): the next stage, or, for the first stage of an optional group (a
     * sub-pattern such as {@code (a b)?}, or a round of {@code (a b){1,3}} beyond the
     * minimum), the stage after the whole group, as Flink's compiler gives the group's first
     * state a proceed edge past the group. A group with a quantifier is compiled into copies
     * of its stages, one per round, so the rounds need no counter.
     */
    public final int skipTo;
    /**
     * For the last stage of a group's looping round (Flink's {@code oneOrMore()} on a group):
     * the round's first stage, which a partial may go back to once this stage is done, as
     * Flink's compiler adds an edge from a looping group's end to its first state; -1 for
     * none.
     */
    public final int loopTo;

    Stage(String name, Kind kind, Contiguity contiguity, Contiguity inner, int min, int max,
        boolean greedy, boolean optional, int bitIndex, int untilBitIndex,
        List<AggregateCondition> untilAggregates, long loopGapMs,
        List<FieldCondition> fieldConditions, List<AggregateCondition> aggregateConditions,
        int skipTo, int loopTo) {
      this.name = name;
      this.kind = kind;
      this.contiguity = contiguity;
      this.inner = inner;
      this.min = min;
      this.max = max;
      this.greedy = greedy;
      this.optional = optional;
      this.bit = 1L << bitIndex;
      this.untilBit = untilBitIndex < 0 ? 0 : 1L << untilBitIndex;
      this.untilAggregates = untilAggregates;
      this.loopGapMs = loopGapMs;
      this.fieldConditions = fieldConditions;
      this.aggregateConditions = aggregateConditions;
      this.skipTo = skipTo;
      this.loopTo = loopTo;
    }

    public boolean negation() {
      return kind != Kind.NORMAL;
    }

    /** Has the stage an until condition (a Spark-evaluated bit, aggregates, or both)? */
    public boolean hasUntil() {
      return untilBit != 0 || !untilAggregates.isEmpty();
    }

    /** May the partial move on to the next stage after this stage took {@code count}? */
    public boolean satisfied(int count) {
      return count >= min || (count == 0 && optional);
    }

    public boolean canTakeMore(int count) {
      return max < 0 || count < max;
    }
  }

  public final List<Stage> stages;
  public final List<String> fields;
  public final long withinMs;
  /** The longest gap between a partial match's consecutive events (Flink's {@code within} of
   * type PREVIOUS_AND_CURRENT); 0 for none. {@code withinMs} still bounds the whole match. */
  public final long withinGapMs;
  public final Skip skip;
  public final int skipStage;
  /** Flink's {@code throwExceptionOnMiss}: no event to skip to is an error, not no skip. */
  public final boolean skipThrowOnMiss;
  public final int maxPartialsPerKey;
  /** Cap on one key's events waiting for the watermark ({@link BufferCap}). */
  public final int maxBufferedPerKey;
  public final boolean emitTimeouts;
  public final long slowKeyThresholdMs;
  /**
   * Keeps a key's state record even when it holds nothing: the leak of lesson L1, on purpose.
   * Only for tests that must show a leak can be detected; never set by a pipeline.
   */
  public final boolean keepEmptyState;

  private PatternPlan(List<Stage> stages, List<String> fields, long withinMs, long withinGapMs,
      Skip skip,
      int skipStage, boolean skipThrowOnMiss, int maxPartialsPerKey, int maxBufferedPerKey,
      boolean emitTimeouts, long slowKeyThresholdMs, boolean keepEmptyState) {
    this.stages = stages;
    this.fields = fields;
    this.withinMs = withinMs;
    this.withinGapMs = withinGapMs;
    this.skip = skip;
    this.skipStage = skipStage;
    this.skipThrowOnMiss = skipThrowOnMiss;
    this.maxPartialsPerKey = maxPartialsPerKey;
    this.maxBufferedPerKey = maxBufferedPerKey;
    this.emitTimeouts = emitTimeouts;
    this.slowKeyThresholdMs = slowKeyThresholdMs;
    this.keepEmptyState = keepEmptyState;
  }

  /** When partial match {@code p} expires: its first event + within, or sooner, its last
   * event + the gap allowed between consecutive events, or + the window of the loop it waits
   * at ({@link #loopGapOf}). */
  public long deadlineOf(Partial p) {
    long deadline = p.startMs() + withinMs;
    if (withinGapMs > 0) {
      deadline = Math.min(deadline, p.last().tsMs + withinGapMs);
    }
    long loopGap = loopGapOf(p);
    return loopGap > 0 ? Math.min(deadline, p.last().tsMs + loopGap) : deadline;
  }

  /**
   * The window of the loop partial {@code p} waits at (Flink's {@code timesOrMore(n,
   * windowTime)}), 0 for none. As Flink's {@code NFACompiler} assigns it, it bounds the wait
   * for the loop's first event and for its events up to the minimum; not the wait after the
   * minimum (the looping state), nor after the partial ignored an event at an optional loop
   * before its first event (the optional stage's ignore state). A partial whose stage has taken
   * all it can waits at the next stage's first event.
   */
  public long loopGapOf(Partial p) {
    if (p.stage < 0) { // events only, no position (a match's or timeout's content)
      return 0;
    }
    int i = p.stage;
    int count = p.count;
    boolean committed = p.committed;
    if (!stages.get(i).canTakeMore(count)) {
      if (i + 1 >= stages.size()) {
        return 0;
      }
      i++;
      count = 0;
      committed = false;
    }
    Stage st = stages.get(i);
    if (st.loopGapMs == 0 || count == 0 && committed) {
      return 0;
    }
    return count < st.min ? st.loopGapMs : 0;
  }

  public int size() {
    return stages.size();
  }

  public boolean endsWithNotFollowedBy() {
    return stages.get(stages.size() - 1).kind == Kind.NOT_FOLLOWED_BY;
  }

  public static PatternPlan fromJson(String json) {
    try {
      JsonNode root = new ObjectMapper().readTree(json);
      List<Stage> stages = new ArrayList<>();
      int index = 0;
      for (JsonNode s : root.get("stages")) {
        List<FieldCondition> conditions = new ArrayList<>();
        for (JsonNode c : s.path("field_conditions")) {
          conditions.add(new FieldCondition(c.get("field").asInt(), c.get("op").asText(),
              c.get("ref_stage").asInt(), c.path("numeric").asBoolean(false)));
        }
        List<AggregateCondition> aggregates = aggregates(s.path("aggregate_conditions"));
        List<AggregateCondition> untilAggregates =
            aggregates(s.path("until_aggregate_conditions"));
        stages.add(new Stage(s.get("name").asText(),
            Kind.valueOf(s.get("kind").asText().toUpperCase()),
            Contiguity.valueOf(s.get("contiguity").asText().toUpperCase()),
            Contiguity.valueOf(s.get("inner").asText().toUpperCase()),
            s.get("min").asInt(), s.get("max").asInt(), s.path("greedy").asBoolean(false),
            s.path("optional").asBoolean(false), s.path("bit").asInt(index),
            s.path("until_bit").asInt(-1), untilAggregates, s.path("loop_gap_ms").asLong(0),
            conditions, aggregates, s.path("skip_to").asInt(index + 1),
            s.path("loop_to").asInt(-1)));
        index++;
      }
      for (int i = 0; i < stages.size(); i++) {
        int to = stages.get(i).skipTo;
        if (to <= i || to > stages.size() || to != i + 1 && !stages.get(i).optional) {
          throw new IllegalArgumentException("bad pattern plan: stage " + i + " skips to " + to
              + "; a skip target must be after it, at most the stage count ("
              + stages.size() + "), and only an optional stage skips past the next");
        }
        int back = stages.get(i).loopTo;
        if (back > i || back < -1 || back >= 0 && !stages.get(back).optional) {
          throw new IllegalArgumentException("bad pattern plan: stage " + i + " loops to "
              + back + "; a loop goes back to an optional stage at or before it, or is -1");
        }
      }
      refuseGreedyEnd(stages);
      List<String> fields = new ArrayList<>();
      for (JsonNode f : root.path("fields")) {
        fields.add(f.asText());
      }
      JsonNode skip = root.get("skip");
      return new PatternPlan(stages, fields, root.get("within_ms").asLong(),
          root.path("within_gap_ms").asLong(0),
          Skip.valueOf(skip.get("kind").asText().toUpperCase()), skip.path("stage").asInt(-1),
          skip.path("throw_on_miss").asBoolean(false),
          required(root, "max_partials_per_key").asInt(),
          required(root, "max_buffered_per_key").asInt(),
          required(root, "emit_timeouts").asBoolean(),
          required(root, "slow_key_threshold_ms").asLong(),
          root.path("keep_empty_state").asBoolean(false));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("bad pattern plan: " + e.getMessage(), e);
    }
  }

  /**
   * A greedy loop cannot end a pattern, as Flink SQL's {@code MATCH_RECOGNIZE} refuses a greedy
   * quantifier at the end: Flink CEP's answer for one changed between versions (the longest
   * run at commit 01676656, every prefix now), so no answer here would be Flink's.
   */
  private static void refuseGreedyEnd(List<Stage> stages) {
    Stage last = stages.isEmpty() ? null : stages.get(stages.size() - 1);
    if (last != null && last.greedy) {
      throw new IllegalArgumentException("stage '" + last.name + "': a greedy loop cannot end "
          + "a pattern, as in Flink SQL; follow it with a stage, or drop greedy()");
    }
  }

  private static List<AggregateCondition> aggregates(JsonNode array) {
    List<AggregateCondition> aggregates = new ArrayList<>();
    for (JsonNode c : array) {
      aggregates.add(new AggregateCondition(c.get("agg").asText(), c.path("field").asInt(-1),
          c.get("ref_stage").asInt(), c.get("op").asText(), c.get("value").asDouble()));
    }
    return aggregates;
  }

  /** The options have their defaults in Python (one place); a plan always carries them. */
  private static JsonNode required(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("pattern plan lacks field '" + field + "'");
    }
    return value;
  }
}
