package io.streamwarden.engine.sessions;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.Iterator;
import java.util.Set;
import org.apache.spark.sql.types.DataType;

/**
 * The aggregates a session carries, as the user declared them over their own fields: the plan's
 * {@code inputs} (the value kind of each input column {@code value_i}) and its {@code
 * aggregates} (a function and, for all but {@code count()}, an input). It makes each session's
 * accumulators, feeds them events, and encodes them into the compact state {@link SessionAgg}
 * keeps.
 *
 * <p>The state encoding: one byte of format version ({@link #FORMAT_VERSION}), four bytes of
 * this plan's signature (a hash of the functions, their inputs and kinds), then each
 * accumulator's own encoding in plan order. State written under another plan or format is
 * refused when read, never misread.
 */
public final class AggregatePlan implements Serializable {
  private static final long serialVersionUID = 1L;
  /** The first byte of every encoded state. */
  public static final int FORMAT_VERSION = 1;
  /** A plan without inputs or aggregates. */
  public static final AggregatePlan NONE =
      new AggregatePlan(new ValueKind[0], new AggregateFunction[0], new int[0]);
  private static final Set<String> AGGREGATE_KEYS = Set.of("function", "input");
  private static final ThreadLocal<StateBytes.Writer> WRITER =
      ThreadLocal.withInitial(StateBytes.Writer::new);

  private final ValueKind[] inputs;
  private final AggregateFunction[] functions;
  /** The input of each aggregate, -1 for {@code count()}. */
  private final int[] inputOf;
  private final int signature;
  private final boolean holdsValues;

  AggregatePlan(ValueKind[] inputs, AggregateFunction[] functions, int[] inputOf) {
    this.inputs = inputs.clone();
    this.functions = functions.clone();
    this.inputOf = inputOf.clone();
    StringBuilder text = new StringBuilder();
    boolean holds = false;
    for (int i = 0; i < functions.length; i++) {
      text.append(describe(i)).append(';');
      holds |= functions[i].holdsValues();
    }
    this.signature = text.toString().hashCode();
    this.holdsValues = holds;
  }

  /**
   * Reads a plan's {@code inputs} and {@code aggregates} (either may be missing or null).
   *
   * @throws IllegalArgumentException naming the entry that is wrong and what is allowed
   */
  public static AggregatePlan fromJson(JsonNode inputsJson, JsonNode aggregatesJson) {
    ValueKind[] kinds = new ValueKind[count(inputsJson, "inputs")];
    for (int i = 0; i < kinds.length; i++) {
      JsonNode name = inputsJson.get(i);
      kinds[i] = name.isTextual() ? ValueKind.named(name.asText()) : null;
      if (kinds[i] == null) {
        throw new IllegalArgumentException("session plan: inputs[" + i + "] is " + name
            + ", not one of \"long\", \"double\", \"string\", \"boolean\"");
      }
    }
    int n = count(aggregatesJson, "aggregates");
    AggregateFunction[] functions = new AggregateFunction[n];
    int[] inputOf = new int[n];
    for (int i = 0; i < n; i++) {
      JsonNode a = aggregatesJson.get(i);
      String where = "session plan: aggregates[" + i + "]";
      if (!a.isObject()) {
        throw new IllegalArgumentException(where + " is " + a + ", not an object such as "
            + "{\"function\": \"sum\", \"input\": 0}");
      }
      for (Iterator<String> keys = a.fieldNames(); keys.hasNext();) {
        String key = keys.next();
        if (!AGGREGATE_KEYS.contains(key)) {
          throw new IllegalArgumentException(where + " has an unknown key '" + key
              + "' (an aggregate has \"function\" and \"input\")");
        }
      }
      functions[i] = function(a.get("function"), where);
      inputOf[i] = input(a.get("input"), functions[i], kinds, where);
    }
    return new AggregatePlan(kinds, functions, inputOf);
  }

  private static int count(JsonNode array, String field) {
    if (array == null || array.isNull() || array.isMissingNode()) {
      return 0;
    }
    if (!array.isArray()) {
      throw new IllegalArgumentException("session plan: '" + field + "' must be a list, got "
          + array);
    }
    return array.size();
  }

  private static AggregateFunction function(JsonNode name, String where) {
    AggregateFunction f = name != null && name.isTextual()
        ? AggregateFunction.named(name.asText()) : null;
    if (f == null) {
      throw new IllegalArgumentException(where + ": function " + name + " is not one of "
          + AggregateFunction.names());
    }
    return f;
  }

  private static int input(JsonNode input, AggregateFunction f, ValueKind[] kinds,
      String where) {
    if (input == null || input.isNull()) {
      if (f.needsInput()) {
        throw new IllegalArgumentException(where + ": " + f.planName + " needs an \"input\"");
      }
      return -1;
    }
    if (!input.isIntegralNumber() || input.asLong() < 0 || input.asLong() >= kinds.length) {
      throw new IllegalArgumentException(where + ": input " + input + " is not an index of "
          + "the plan's " + kinds.length + " inputs" + (kinds.length == 0 ? ""
              : " (0.." + (kinds.length - 1) + ")"));
    }
    int i = input.asInt();
    if (f.numbersOnly() && !kinds[i].isNumber()) {
      throw new IllegalArgumentException(where + ": " + f.planName + " needs a long or double "
          + "input, input " + i + " is " + kinds[i].planName);
    }
    return i;
  }

  /** How many input columns ({@code value_0} ..) an event carries. */
  public int inputCount() {
    return inputs.length;
  }

  public ValueKind input(int i) {
    return inputs[i];
  }

  /** How many aggregates ({@code agg_0} ..) a session carries. */
  public int size() {
    return functions.length;
  }

  public AggregateFunction function(int i) {
    return functions[i];
  }

  /** The input aggregate {@code i} reads, or -1 for {@code count()}. */
  public int inputOf(int i) {
    return inputOf[i];
  }

  /** The Spark type of aggregate {@code i}'s result. */
  public DataType resultType(int i) {
    return functions[i].resultType(inputOf[i] < 0 ? null : inputs[inputOf[i]]);
  }

  /** Whether some aggregate holds values that count toward {@code max_session_bytes}. */
  public boolean holdsValues() {
    return holdsValues;
  }

  /** {@code sum(value_0 double)}, {@code count()}. */
  String describe(int i) {
    return functions[i].planName + "(" + (inputOf[i] < 0 ? ""
        : "value_" + inputOf[i] + " " + inputs[inputOf[i]].planName) + ")";
  }

  Accumulator[] newAccumulators() {
    Accumulator[] accs = new Accumulator[functions.length];
    for (int i = 0; i < accs.length; i++) {
      accs[i] = functions[i].newAccumulator(inputOf[i] < 0 ? null : inputs[inputOf[i]]);
    }
    return accs;
  }

  /** Adds one event to every accumulator. */
  void add(Accumulator[] accs, Event e) {
    for (int i = 0; i < accs.length; i++) {
      int input = inputOf[i];
      accs[i].add(input < 0 ? null : e.values[input], e.tsMs);
    }
  }

  static long heldBytes(Accumulator[] accs) {
    long held = 0;
    for (Accumulator a : accs) {
      held += a.heldBytes();
    }
    return held;
  }

  /** How many bytes the accumulators' held values would grow by if {@code e} were added. */
  long heldBytesAdding(Accumulator[] accs, Event e) {
    long more = 0;
    for (int i = 0; i < accs.length; i++) {
      int input = inputOf[i];
      more += accs[i].heldBytesAdding(input < 0 ? null : e.values[input]);
    }
    return more;
  }

  static Object[] results(Accumulator[] accs) {
    Object[] out = new Object[accs.length];
    for (int i = 0; i < accs.length; i++) {
      out[i] = accs[i].result();
    }
    return out;
  }

  byte[] encode(Accumulator[] accs) {
    StateBytes.Writer out = WRITER.get();
    out.reset();
    out.writeByte(FORMAT_VERSION);
    out.writeInt(signature);
    for (Accumulator a : accs) {
      a.write(out);
    }
    return out.toBytes();
  }

  /**
   * The accumulators {@link #encode} wrote.
   *
   * @throws IllegalStateException if the state is of another format or plan, or damaged
   */
  Accumulator[] decode(byte[] state) {
    StateBytes.Reader in = new StateBytes.Reader(state);
    int version = in.readByte();
    if (version != FORMAT_VERSION) {
      throw new IllegalStateException("aggregate state of format version " + version
          + " cannot be read by this engine, which reads version " + FORMAT_VERSION);
    }
    int written = in.readInt();
    if (written != signature) {
      throw new IllegalStateException("aggregate state was written for other aggregates "
          + "(signature " + Integer.toHexString(written) + ", these are "
          + Integer.toHexString(signature) + "): a query's aggregates cannot change while it "
          + "keeps its state; start it from a new checkpoint");
    }
    Accumulator[] accs = newAccumulators();
    for (Accumulator a : accs) {
      a.read(in);
    }
    if (!in.atEnd()) {
      throw new IllegalStateException("aggregate state has bytes past its last aggregate");
    }
    return accs;
  }
}
