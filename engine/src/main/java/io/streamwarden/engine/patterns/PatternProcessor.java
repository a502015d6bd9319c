package io.streamwarden.engine.patterns;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.Poison;
import io.streamwarden.engine.SlowWorkLog;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Adapts {@link Nfa} to Spark's transformWithState: one binary value per key (its {@link
 * KeyState}), one event-time timer at that state's next deadline. An event at or behind the
 * watermark when it arrives is too late for the NFA (the events after it may already be
 * consumed) and becomes a {@code too_late} dead letter. A record the engine throws on is a
 * {@code poison} dead letter, never a failed batch ({@link Poison}).
 */
public final class PatternProcessor extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;
  /** Name of the value state, as the state data source shows it. */
  public static final String STATE_NAME = "pattern_state";

  private final PatternPlan plan;
  private transient Nfa nfa;
  private transient ValueState<byte[]> state;
  private transient SlowWorkLog slowLog;

  public PatternProcessor(PatternPlan plan) {
    this.plan = plan;
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    nfa = new Nfa(plan);
    state = getHandle().getValueState(STATE_NAME, Encoders.BINARY(), TTLConfig.NONE());
    slowLog = new SlowWorkLog("patterns", plan.slowKeyThresholdMs);
  }

  @Override
  public Iterator<Row> handleInputRows(String key, Iterator<Row> rows, TimerValues timers) {
    if (EngineInput.isControlKey(key)) {
      return CollectionConverters.asScala(
          EngineInput.passThrough(rows, PatternRows::deadLetter).iterator());
    }
    long startNs = System.nanoTime();
    long watermarkMs = timers.getCurrentWatermarkInMs();
    List<Row> out = new ArrayList<>();
    List<Row> readable = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      try {
        r.getLong(EngineInput.TS_MS);
        PatternRows.event(r);
        readable.add(r);
      } catch (RuntimeException e) {
        out.add(PatternRows.deadLetter(key, r.isNullAt(EngineInput.TS_MS) ? null
            : r.getLong(EngineInput.TS_MS), r.isNullAt(EngineInput.RAW) ? null
            : r.getString(EngineInput.RAW), EngineInput.POISON,
            Poison.detail("the pattern engine, reading the record,", e)));
      }
    }
    int held;
    try {
      held = apply(key, readable, watermarkMs, out);
    } catch (SkipMissException e) { // the user asked for an error: not a poison event
      throw new IllegalStateException("the pattern engine stopped on key '" + key + "': "
          + e.getMessage(), e);
    } catch (RuntimeException e) {
      held = isolate(key, readable, watermarkMs, out);
    }
    slowLog.maybeLog(key, startNs, readable.size(), held);
    return CollectionConverters.asScala(out.iterator());
  }

  /**
   * Applies a key's rows of the batch to its stored state and saves it; adds the output to
   * {@code out} only when all of it succeeded. Returns the number of partial matches held.
   */
  private int apply(String key, List<Row> rows, long watermarkMs, List<Row> out) {
    KeyState s = load();
    List<Row> emitted = run(key, s, rows, watermarkMs);
    save(s);
    out.addAll(emitted);
    return s.partials.size();
  }

  /** The NFA's work on {@code s} for a key's rows, without saving it. */
  private List<Row> run(String key, KeyState s, List<Row> rows, long watermarkMs) {
    List<Row> out = new ArrayList<>();
    List<PEvent> fresh = new ArrayList<>();
    List<Row> freshRows = new ArrayList<>();
    for (Row r : rows) {
      long ts = r.getLong(EngineInput.TS_MS);
      if (ts <= watermarkMs) {
        out.add(PatternRows.deadLetter(key, ts, PatternRows.rawOf(plan, key, r),
            EngineInput.TOO_LATE, "event time is at or behind the watermark ("
                + watermarkMs + " ms) when it arrived; raise max_out_of_orderness to wait longer"));
      } else {
        fresh.add(PatternRows.event(r));
        freshRows.add(r);
      }
    }
    for (Row r : BufferCap.refuse(s, fresh, freshRows, plan.maxBufferedPerKey, watermarkMs)) {
      out.add(PatternRows.deadLetter(key, r.getLong(EngineInput.TS_MS),
          PatternRows.rawOf(plan, key, r), EngineInput.KEY_BUFFER_FULL,
          BufferCap.detail(plan.maxBufferedPerKey)));
    }
    nfa.buffer(s, fresh);
    List<Found> found = new ArrayList<>();
    nfa.advance(s, watermarkMs, found);
    for (Row r : rows) {
      Poison.check(PatternRows.rawOf(plan, key, r));
    }
    return emit(key, out, found);
  }

  /**
   * After {@link #apply} threw: tries each row alone against the stored state (which the failed
   * attempt never wrote), sets aside those that throw as {@code poison} dead letters, and
   * applies the others. If they still fail together, every row of the key's batch is poison.
   */
  private int isolate(String key, List<Row> rows, long watermarkMs, List<Row> out) {
    List<Row> good = new ArrayList<>();
    for (Row r : rows) {
      try {
        run(key, load(), List.of(r), watermarkMs);
        good.add(r);
      } catch (RuntimeException error) {
        out.add(poison(key, r, error));
      }
    }
    try {
      return apply(key, good, watermarkMs, out);
    } catch (RuntimeException error) {
      for (Row r : good) {
        out.add(poison(key, r, error));
      }
      return load().partials.size();
    }
  }

  private Row poison(String key, Row r, Throwable error) {
    return PatternRows.deadLetter(key, r.getLong(EngineInput.TS_MS),
        PatternRows.rawOf(plan, key, r), EngineInput.POISON,
        Poison.detail("the pattern engine", error));
  }

  @Override
  public Iterator<Row> handleExpiredTimer(String key, TimerValues timers, ExpiredTimerInfo info) {
    try {
      return onTimer(key, timers);
    } catch (RuntimeException e) {
      throw Poison.onTimer("pattern", key, timers.getCurrentWatermarkInMs(), e);
    }
  }

  private Iterator<Row> onTimer(String key, TimerValues timers) {
    byte[] stored = state.get();
    if (stored == null) {
      return CollectionConverters.asScala(new ArrayList<Row>().iterator());
    }
    KeyState s = KeyState.decode(stored);
    s.timerMs = KeyState.NO_TIMER; // the timer that fired is gone
    List<Found> found = new ArrayList<>();
    nfa.advance(s, timers.getCurrentWatermarkInMs(), found);
    save(s);
    return CollectionConverters.asScala(emit(key, new ArrayList<>(), found).iterator());
  }

  private List<Row> emit(String key, List<Row> out, List<Found> found) {
    for (Found f : found) {
      out.add(PatternRows.toRow(plan, key, f));
    }
    return out;
  }

  private KeyState load() {
    byte[] stored = state.get();
    return stored == null ? new KeyState() : KeyState.decode(stored);
  }

  /** Writes the state back, or clears it; keeps exactly one timer at the next deadline. */
  private void save(KeyState s) {
    long next = nfa.nextDeadline(s);
    if (s.timerMs != next) {
      if (s.timerMs != KeyState.NO_TIMER) {
        getHandle().deleteTimer(s.timerMs);
      }
      if (next != KeyState.NO_TIMER) {
        getHandle().registerTimer(next);
      }
      s.timerMs = next;
    }
    if (s.holdsNothing() && !plan.keepEmptyState) {
      state.clear();
    } else {
      state.update(s.encode());
    }
  }
}
