package io.streamwarden.engine.sessions;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.EngineOutput;
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
 * Adapts the logic of an operator that keeps per-key summaries ({@link SummaryLogic}: sessions,
 * windows) to Spark's transformWithState: one value state per key, one event-time timer at that
 * state's next deadline, and pass-through of dead letters that validation produced upstream. A
 * record the engine throws on is a {@code poison} dead letter, never a failed batch ({@link
 * Poison}).
 */
public abstract class SummaryProcessor extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;

  private final AggregatePlan aggregates;
  private final String stateName;
  private final String operator;
  private final String engine;
  private final long slowKeyThresholdMs;
  private transient SummaryLogic logic;
  private transient ValueState<UserSessions> state;
  private transient SlowWorkLog slowLog;

  /**
   * @param aggregates what each summary carries (and each input row's values)
   * @param stateName the value state's name, as the state data source shows it
   * @param operator the operator's name in the slow-key log ({@code sessionize})
   * @param engine what poison details call the engine ({@code session}: "the session engine")
   * @param slowKeyThresholdMs a key whose work in a batch takes longer is logged (0: never)
   */
  protected SummaryProcessor(AggregatePlan aggregates, String stateName, String operator,
      String engine, long slowKeyThresholdMs) {
    this.aggregates = aggregates;
    this.stateName = stateName;
    this.operator = operator;
    this.engine = engine;
    this.slowKeyThresholdMs = slowKeyThresholdMs;
  }

  /** The rules, made once per task (they need not be serializable). */
  protected abstract SummaryLogic newLogic();

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    logic = newLogic();
    state = getHandle().getValueState(stateName, Encoders.bean(UserSessions.class),
        TTLConfig.NONE());
    slowLog = new SlowWorkLog(operator, slowKeyThresholdMs);
  }

  @Override
  public Iterator<Row> handleInputRows(String key, Iterator<Row> rows, TimerValues timers) {
    if (EngineInput.isControlKey(key)) {
      return CollectionConverters.asScala(EngineInput.passThrough(rows,
          (user, tsMs, raw, reason, detail) ->
              EngineOutput.deadLetter(aggregates, user, tsMs, raw, reason, detail)).iterator());
    }
    long startNs = System.nanoTime();
    long watermarkMs = timers.getCurrentWatermarkInMs();
    List<Row> out = new ArrayList<>();
    List<Event> events = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      try {
        events.add(event(r));
      } catch (RuntimeException e) {
        out.add(poisonOf(key, r, e));
      }
    }
    for (Event e : events) {
      Poison.checkUncaught(e.raw); // tests only: a failure outside every catch
    }
    int held;
    try {
      held = apply(key, events, watermarkMs, out);
    } catch (RuntimeException e) {
      held = isolate(key, events, watermarkMs, out);
    }
    slowLog.maybeLog(key, startNs, events.size(), held);
    return CollectionConverters.asScala(out.iterator());
  }

  /** The event a row holds: its time, size, record and the plan's input values. */
  private Event event(Row r) {
    int n = aggregates.inputCount();
    Object[] values = new Object[n];
    for (int i = 0; i < n; i++) {
      values[i] = r.get(EngineInput.SESSION_VALUES + i);
    }
    return new Event(r.getLong(EngineInput.TS_MS), r.getLong(EngineInput.SIZE),
        r.getString(EngineInput.RAW), values).checkedAgainst(aggregates);
  }

  /**
   * Applies a key's events of the batch to its stored state and saves it; adds the output to
   * {@code out} only when all of it succeeded. Returns the number of sessions the key holds.
   */
  private int apply(String key, List<Event> events, long watermarkMs, List<Row> out) {
    UserSessions stored = state.get(); // null when absent: one read instead of exists() + get()
    UserSessions current = stored != null ? stored : new UserSessions();
    List<Emitted> emitted = logic.onEvents(key, current, new ArrayList<>(events), watermarkMs);
    for (Event e : events) {
      Poison.check(e.raw);
    }
    save(current, watermarkMs);
    out.addAll(SessionRows.toRows(aggregates, emitted));
    return current.getSessions().size();
  }

  /**
   * After {@link #apply} threw: tries each event alone against the stored state (which the
   * failed attempt never wrote), sets aside those that throw as {@code poison} dead letters, and
   * applies the others. If they still fail together, every event of the key's batch is poison.
   */
  private int isolate(String key, List<Event> events, long watermarkMs, List<Row> out) {
    List<Event> good = new ArrayList<>();
    for (Event e : events) {
      try {
        UserSessions stored = state.get();
        logic.onEvents(key, stored != null ? stored : new UserSessions(),
            new ArrayList<>(List.of(e)), watermarkMs);
        Poison.check(e.raw);
        good.add(e);
      } catch (RuntimeException error) {
        out.add(poison(key, e, error));
      }
    }
    try {
      return apply(key, good, watermarkMs, out);
    } catch (RuntimeException error) {
      for (Event e : good) {
        out.add(poison(key, e, error));
      }
      UserSessions stored = state.get();
      return stored == null ? 0 : stored.getSessions().size();
    }
  }

  private Row poison(String key, Event e, Throwable error) {
    return EngineOutput.deadLetter(aggregates, key, e.tsMs, e.raw, EngineInput.POISON,
        Poison.detail("the " + engine + " engine", error));
  }

  private Row poisonOf(String key, Row r, Throwable error) {
    return EngineOutput.deadLetter(aggregates, key,
        r.isNullAt(EngineInput.TS_MS) ? null : r.getLong(EngineInput.TS_MS),
        r.isNullAt(EngineInput.RAW) ? null : r.getString(EngineInput.RAW), EngineInput.POISON,
        Poison.detail("the " + engine + " engine, reading the record,", error));
  }

  @Override
  public Iterator<Row> handleExpiredTimer(String key, TimerValues timers, ExpiredTimerInfo info) {
    try {
      return onTimer(key, timers);
    } catch (RuntimeException e) {
      throw Poison.onTimer(engine, key, timers.getCurrentWatermarkInMs(), e);
    }
  }

  private Iterator<Row> onTimer(String key, TimerValues timers) {
    UserSessions current = state.get();
    if (current == null) {
      return CollectionConverters.asScala(new ArrayList<Row>().iterator());
    }
    current.setTimerMs(UserSessions.NO_TIMER); // the timer that fired is gone
    long watermarkMs = timers.getCurrentWatermarkInMs();
    List<Emitted> out = logic.onWatermark(key, current, watermarkMs);
    save(current, watermarkMs);
    return CollectionConverters.asScala(SessionRows.toRows(aggregates, out).iterator());
  }

  /**
   * Writes the state back, or clears it; keeps one timer, no later than the next deadline
   * ({@link TimerPolicy}).
   */
  private void save(UserSessions current, long watermarkMs) {
    long registered = current.getTimerMs();
    long hold = TimerPolicy.timerToHold(registered, logic.nextDeadline(current), watermarkMs);
    if (hold != registered) {
      if (registered != UserSessions.NO_TIMER) {
        getHandle().deleteTimer(registered);
      }
      if (hold != UserSessions.NO_TIMER) {
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
