package io.streamwarden.engine.join;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.Poison;
import io.streamwarden.engine.SlowWorkLog;
import io.streamwarden.engine.sessions.TimerPolicy;
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
 * The interval join on Spark's transformWithState: {@link JoinLogic} with one value state per
 * key ({@link JoinBuffer}, named {@link #STATE_NAME}) and one event-time timer at the earliest
 * moment a buffered row is freed ({@link TimerPolicy}); the state is cleared when the key
 * buffers nothing. Input rows are laid out as {@link EngineInput#joinColumns}; output rows as
 * {@link JoinOutput#schema}.
 *
 * <p>Rows that validation rejected upstream (under control keys) pass through as dead letters
 * naming their source; idle ticks produce nothing (they move the watermark, whose timers free
 * what is due). If a key's rows make the engine throw, every row of its batch becomes a {@code
 * poison} dead letter and its stored state is left as it was ({@link Poison}); a row that cannot
 * even be read is poison alone. A timer that throws fails the batch ({@link Poison#onTimer}).
 */
public final class JoinProcessor extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;
  /** Name of the value state, as the state data source shows it. */
  public static final String STATE_NAME = "join_rows";
  private static final String ENGINE = "join";

  private final JoinPlan plan;
  private final long slowKeyThresholdMs;
  private transient JoinLogic logic;
  private transient ValueState<JoinBuffer> state;
  private transient SlowWorkLog slowLog;

  /**
   * @param plan the join's bound, lateness, cap and source names
   * @param slowKeyThresholdMs a key whose work in a batch takes longer is logged (0: never)
   */
  public JoinProcessor(JoinPlan plan, long slowKeyThresholdMs) {
    this.plan = plan;
    this.slowKeyThresholdMs = slowKeyThresholdMs;
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    logic = new JoinLogic(plan);
    state = getHandle().getValueState(STATE_NAME, Encoders.bean(JoinBuffer.class),
        TTLConfig.NONE());
    slowLog = new SlowWorkLog(ENGINE, slowKeyThresholdMs);
  }

  @Override
  public Iterator<Row> handleInputRows(String key, Iterator<Row> rows, TimerValues timers) {
    if (EngineInput.isControlKey(key)) {
      return CollectionConverters.asScala(passThrough(rows).iterator());
    }
    long startNs = System.nanoTime();
    long watermarkMs = timers.getCurrentWatermarkInMs();
    List<Row> out = new ArrayList<>();
    List<JoinRecord> records = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      try {
        records.add(record(r));
      } catch (RuntimeException e) {
        out.add(unreadable(key, r, e));
      }
    }
    for (JoinRecord r : records) {
      Poison.checkUncaught(r.raw()); // tests only: a failure outside every catch
    }
    int held;
    try {
      held = apply(key, records, watermarkMs, out);
    } catch (RuntimeException error) {
      for (JoinRecord r : records) {
        out.add(JoinOutput.toRow(JoinEmitted.deadLetter(key, r.tsMs(), r.raw(),
            EngineInput.POISON, Poison.detail("the join engine", error), nameOrNull(r.side()))));
      }
      held = 0;
    }
    slowLog.maybeLog(key, startNs, records.size(), held);
    return CollectionConverters.asScala(out.iterator());
  }

  /**
   * Applies a key's rows of the batch to its stored state and saves it; adds the output to
   * {@code out} only when all of it succeeded. Returns the number of rows the key buffers.
   */
  private int apply(String key, List<JoinRecord> records, long watermarkMs, List<Row> out) {
    JoinBuffer stored = state.get(); // null when absent: one read instead of exists() + get()
    JoinBuffer current = stored != null ? stored : new JoinBuffer();
    List<JoinEmitted> emitted = logic.onRows(key, current, records, watermarkMs);
    for (JoinRecord r : records) {
      Poison.check(r.raw());
    }
    save(current, watermarkMs);
    for (JoinEmitted e : emitted) {
      out.add(JoinOutput.toRow(e));
    }
    return current.rowCount();
  }

  /** The event a row holds; throws if it is not a well-formed event row of a known side. */
  private JoinRecord record(Row r) {
    if (r.isNullAt(EngineInput.KIND) || r.getInt(EngineInput.KIND) != EngineInput.KIND_EVENT) {
      throw new IllegalArgumentException("a row of kind " + r.get(EngineInput.KIND)
          + " under an event key; expected an event (kind " + EngineInput.KIND_EVENT + ")");
    }
    if (r.isNullAt(EngineInput.TS_MS) || r.isNullAt(EngineInput.JOIN_SIDE)) {
      throw new IllegalArgumentException("an event row without its event time or side");
    }
    int side = r.getInt(EngineInput.JOIN_SIDE);
    plan.sourceName(side); // refuses an unknown side
    return new JoinRecord(side, r.getLong(EngineInput.TS_MS), r.getString(EngineInput.JOIN_ROW),
        r.getString(EngineInput.RAW));
  }

  private Row unreadable(String key, Row r, Throwable error) {
    return JoinOutput.toRow(JoinEmitted.deadLetter(key, nullableLong(r, EngineInput.TS_MS),
        nullableString(r, EngineInput.RAW), EngineInput.POISON,
        Poison.detail("the join engine, reading the record,", error), sideName(r)));
  }

  /** Dead letters for rows that validation rejected upstream; nothing for idle ticks. */
  private List<Row> passThrough(Iterator<Row> rows) {
    List<Row> out = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      if (r.getInt(EngineInput.KIND) == EngineInput.KIND_REJECTED) {
        out.add(JoinOutput.toRow(JoinEmitted.deadLetter(r.getString(EngineInput.USER),
            nullableLong(r, EngineInput.TS_MS), r.getString(EngineInput.RAW),
            r.getString(EngineInput.REASON), r.getString(EngineInput.DETAIL), sideName(r))));
      }
    }
    return out;
  }

  /** The source name of a row's side, or null if it has none (or none the plan knows). */
  private String sideName(Row r) {
    if (r.size() <= EngineInput.JOIN_SIDE || r.isNullAt(EngineInput.JOIN_SIDE)
        || !(r.get(EngineInput.JOIN_SIDE) instanceof Integer side)) {
      return null;
    }
    return nameOrNull(side);
  }

  private String nameOrNull(int side) {
    return side == JoinRecord.LEFT ? plan.leftName
        : side == JoinRecord.RIGHT ? plan.rightName : null;
  }

  private static Long nullableLong(Row r, int i) {
    return r.size() <= i || r.isNullAt(i) || !(r.get(i) instanceof Long v) ? null : v;
  }

  private static String nullableString(Row r, int i) {
    return r.size() <= i || r.isNullAt(i) || !(r.get(i) instanceof String v) ? null : v;
  }

  @Override
  public Iterator<Row> handleExpiredTimer(String key, TimerValues timers, ExpiredTimerInfo info) {
    try {
      return onTimer(key, timers);
    } catch (RuntimeException e) {
      throw Poison.onTimer(ENGINE, key, timers.getCurrentWatermarkInMs(), e);
    }
  }

  private Iterator<Row> onTimer(String key, TimerValues timers) {
    JoinBuffer current = state.get();
    List<Row> out = new ArrayList<>();
    if (current == null) {
      return CollectionConverters.asScala(out.iterator());
    }
    current.setTimerMs(JoinBuffer.NO_TIMER); // the timer that fired is gone
    long watermarkMs = timers.getCurrentWatermarkInMs();
    for (JoinEmitted e : logic.onWatermark(key, current, watermarkMs)) {
      out.add(JoinOutput.toRow(e));
    }
    save(current, watermarkMs);
    return CollectionConverters.asScala(out.iterator());
  }

  /**
   * Writes the state back, or clears it when the key buffers nothing; keeps one timer, no later
   * than the earliest moment a row is freed ({@link TimerPolicy}).
   */
  private void save(JoinBuffer current, long watermarkMs) {
    long registered = current.getTimerMs();
    long hold = TimerPolicy.timerToHold(registered, logic.nextDeadline(current), watermarkMs);
    if (hold != registered) {
      if (registered != JoinBuffer.NO_TIMER) {
        getHandle().deleteTimer(registered);
      }
      if (hold != JoinBuffer.NO_TIMER) {
        getHandle().registerTimer(hold);
      }
      current.setTimerMs(hold);
    }
    if (current.holdsNothing()) {
      state.clear();
    } else {
      state.update(current);
    }
  }
}
