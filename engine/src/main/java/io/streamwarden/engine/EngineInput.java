package io.streamwarden.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Row;
import scala.collection.Iterator;

/**
 * The row contract between Python and the engine, Java's side of it: the input column layout,
 * the kind codes, the control keys, and the reason codes the engine writes into dead letters.
 * Python's {@code streamwarden.operators.engine_rows} is the other side; {@link #contractJson}
 * is what a test compares it with, so that the two cannot drift apart.
 *
 * <p>Every operator's input starts with the same columns ({@link #KEY} .. {@link #USER}), so
 * that rows which are not events are handled once for all operators ({@link #passThrough});
 * the operator's own payload columns follow ({@link #SIZE}, then one column per plan input from
 * {@link #SESSION_VALUES} on, for sessions; {@link #MASK}, {@link #VALUES} for patterns; {@link
 * #JOIN_SIDE}, {@link #JOIN_ROW} for the interval join).
 *
 * <p>Rows with a control key (starting with NUL) are not events: rejected records that
 * validation already dead-lettered, spread over a few keys, and idle ticks, whose only job is to
 * move the watermark. Neither touches state.
 */
public final class EngineInput {
  // The common columns, at the same position for every operator.
  /** The event's key; a control key for a row that is not an event. */
  public static final int KEY = 0;
  /** {@link #KIND_EVENT}, {@link #KIND_REJECTED} or {@link #KIND_TICK}. */
  public static final int KIND = 1;
  /** Event time in epoch milliseconds; null for a record without one. */
  public static final int TS_MS = 2;
  /** The record as received, for dead letters. */
  public static final int RAW = 3;
  /** A rejected record's reason code. */
  public static final int REASON = 4;
  /** A rejected record's detail, for people. */
  public static final int DETAIL = 5;
  /** The key a rejected record's dead letter shows (its parsed user id or key), if it had one. */
  public static final int USER = 6;

  // The sessions operator's payload.
  /** The record's size in bytes. */
  public static final int SIZE = 7;
  /**
   * The first of the plan's input columns ({@link #sessionValueColumn}): one per input, each
   * cast by Python to the input's kind (long, double, string or boolean), nullable.
   */
  public static final int SESSION_VALUES = 8;

  // The patterns operator's payload.
  /** Bit i set when the event meets stage i's condition (Spark evaluates them). */
  public static final int MASK = 7;
  /** The carried fields of the event, as strings, in the plan's field order. */
  public static final int VALUES = 8;

  // The interval join's payload.
  /** The row's side: 0 left, 1 right (set on rejected rows too, null on ticks). */
  public static final int JOIN_SIDE = 7;
  /** The event's typed fields as a JSON object; null on rejected rows and ticks. */
  public static final int JOIN_ROW = 8;

  public static final int KIND_EVENT = 0;
  public static final int KIND_REJECTED = 1;
  public static final int KIND_TICK = 2;

  /** What every control key starts with; an event's key must not. */
  public static final String CONTROL_PREFIX = "\u0000";
  /** The key of every idle tick. */
  public static final String TICK_KEY = CONTROL_PREFIX + "tick";
  /** Rejected records are keyed by this prefix and a hash of the record modulo the spread. */
  public static final String REJECTED_KEY_PREFIX = CONTROL_PREFIX + "rejected:";
  /** Rejected records are spread over this many control keys so no one task gets them all. */
  public static final int REJECTED_KEY_SPREAD = 8;

  // Reason codes the engine decides (Python's Reason enum holds every code).
  /** An event at or behind the watermark that no state can take any more. */
  public static final String TOO_LATE = "too_late";
  /** An event past its session's event cap. */
  public static final String SESSION_EVENT_CAP = "session_event_cap";
  /** An event past its session's byte cap. */
  public static final String SESSION_BYTE_CAP = "session_byte_cap";
  /** An event past a window's event cap (one of its windows, for a hopping window). */
  public static final String WINDOW_EVENT_CAP = "window_event_cap";
  /** An event past a window's byte cap (one of its windows, for a hopping window). */
  public static final String WINDOW_BYTE_CAP = "window_byte_cap";
  /** An event past its key's cap on events waiting for the watermark. */
  public static final String KEY_BUFFER_FULL = "key_buffer_full";
  /** A record the engine threw on, set aside so that it cannot fail the batch ({@link Poison}). */
  public static final String POISON = "poison";

  private EngineInput() {}

  public static boolean isControlKey(String key) {
    return key != null && key.startsWith(CONTROL_PREFIX);
  }

  /** Makes an operator's dead letter: its own output schema, the same fields. */
  @FunctionalInterface
  public interface DeadLetter {
    Row of(String user, Long eventTsMs, String raw, String reason, String detail);
  }

  /** Dead letters for rows that validation rejected upstream; nothing for idle ticks. */
  public static List<Row> passThrough(Iterator<Row> rows, DeadLetter deadLetter) {
    List<Row> out = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      if (r.getInt(KIND) == KIND_REJECTED) {
        out.add(deadLetter.of(r.getString(USER), r.isNullAt(TS_MS) ? null : r.getLong(TS_MS),
            r.getString(RAW), r.getString(REASON), r.getString(DETAIL)));
      }
    }
    return out;
  }

  /**
   * The sessions operator's fixed input columns, in order; the plan's input columns ({@link
   * #sessionValueColumn}) follow them.
   */
  public static List<String> sessionColumns() {
    String[] names = common(SESSION_VALUES);
    names[SIZE] = "size";
    return Arrays.asList(names);
  }

  /** The name of the sessions operator's input column of plan input {@code i}: value_i. */
  public static String sessionValueColumn(int i) {
    return "value_" + i;
  }

  /** The patterns operator's input columns, in order. */
  public static List<String> patternColumns() {
    String[] names = common(9);
    names[MASK] = "mask";
    names[VALUES] = "values";
    return Arrays.asList(names);
  }

  /** The interval join's input columns, in order. */
  public static List<String> joinColumns() {
    String[] names = common(9);
    names[JOIN_SIDE] = "side";
    names[JOIN_ROW] = "row";
    return Arrays.asList(names);
  }

  private static String[] common(int size) {
    String[] names = new String[size];
    names[KEY] = "key";
    names[KIND] = "kind";
    names[TS_MS] = "ts_ms";
    names[RAW] = "raw";
    names[REASON] = "reason";
    names[DETAIL] = "detail";
    names[USER] = "user";
    return names;
  }

  /**
   * This contract as JSON: {@code columns} per operator in order, {@code kinds}, {@code
   * control} keys and {@code reasons} by name; compared with Python's side by a test.
   */
  public static String contractJson() {
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    ObjectNode columns = root.putObject("columns");
    sessionColumns().forEach(columns.putArray("sessions")::add);
    patternColumns().forEach(columns.putArray("patterns")::add);
    joinColumns().forEach(columns.putArray("join")::add);
    ObjectNode kinds = root.putObject("kinds");
    kinds.put("event", KIND_EVENT);
    kinds.put("rejected", KIND_REJECTED);
    kinds.put("tick", KIND_TICK);
    ObjectNode control = root.putObject("control");
    control.put("prefix", CONTROL_PREFIX);
    control.put("tick_key", TICK_KEY);
    control.put("rejected_key_prefix", REJECTED_KEY_PREFIX);
    control.put("rejected_key_spread", REJECTED_KEY_SPREAD);
    ObjectNode reasons = root.putObject("reasons");
    reasons.put("TOO_LATE", TOO_LATE);
    reasons.put("SESSION_EVENT_CAP", SESSION_EVENT_CAP);
    reasons.put("SESSION_BYTE_CAP", SESSION_BYTE_CAP);
    reasons.put("WINDOW_EVENT_CAP", WINDOW_EVENT_CAP);
    reasons.put("WINDOW_BYTE_CAP", WINDOW_BYTE_CAP);
    reasons.put("KEY_BUFFER_FULL", KEY_BUFFER_FULL);
    reasons.put("POISON", POISON);
    return root.toString();
  }
}
