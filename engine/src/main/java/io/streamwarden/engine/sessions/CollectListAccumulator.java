package io.streamwarden.engine.sessions;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code collect_list}: the values that are not null in event-time order, ties in arrival order
 * (a value added goes after every held one of its time; merged-in values go after held ones of
 * the same time). Each value is held with its event time, so it counts its bytes ({@link
 * ValueKind#heldBytes}) plus 8 toward {@code max_session_bytes}.
 */
final class CollectListAccumulator implements Accumulator {
  /** The bytes of a held value's event time. */
  static final int TIME_BYTES = 8;

  private final ValueKind kind;
  private List<Object> values = new ArrayList<>();
  private long[] times = new long[4];
  private long held;

  CollectListAccumulator(ValueKind kind) {
    this.kind = kind;
  }

  @Override
  public void add(Object v, long tsMs) {
    if (v == null) {
      return;
    }
    int n = values.size();
    int at = n;
    while (at > 0 && times[at - 1] > tsMs) {
      at--;
    }
    if (n == times.length) {
      times = Arrays.copyOf(times, n * 2);
    }
    System.arraycopy(times, at, times, at + 1, n - at);
    times[at] = tsMs;
    values.add(at, v);
    held += kind.heldBytes(v) + TIME_BYTES;
  }

  @Override
  public void merge(Accumulator other) {
    CollectListAccumulator o = (CollectListAccumulator) other;
    int n = values.size();
    int m = o.values.size();
    List<Object> mergedValues = new ArrayList<>(n + m);
    long[] mergedTimes = new long[Math.max(4, n + m)];
    int i = 0;
    int j = 0;
    while (i < n || j < m) {
      boolean mine = j == m || (i < n && times[i] <= o.times[j]);
      if (mine) {
        mergedTimes[i + j] = times[i];
        mergedValues.add(values.get(i++));
      } else {
        mergedTimes[i + j] = o.times[j];
        mergedValues.add(o.values.get(j++));
      }
    }
    values = mergedValues;
    times = mergedTimes;
    held += o.held;
  }

  @Override
  public Object result() {
    return new ArrayList<>(values);
  }

  @Override
  public long heldBytes() {
    return held;
  }

  @Override
  public long heldBytesAdding(Object v) {
    return v == null ? 0 : kind.heldBytes(v) + TIME_BYTES;
  }

  /** Times as the first one, then the (never negative) steps; then the values. */
  @Override
  public void write(StateBytes.Writer out) {
    int n = values.size();
    out.writeVarLong(n);
    long previous = 0;
    for (int i = 0; i < n; i++) {
      if (i == 0) {
        out.writeZigZag(times[0]);
      } else {
        out.writeVarLong(times[i] - previous);
      }
      previous = times[i];
    }
    for (Object v : values) {
      kind.write(out, v);
    }
  }

  @Override
  public void read(StateBytes.Reader in) {
    int n = in.readLength();
    times = new long[Math.max(4, n)];
    long previous = 0;
    for (int i = 0; i < n; i++) {
      previous = i == 0 ? in.readZigZag() : previous + in.readVarLong();
      times[i] = previous;
    }
    values = new ArrayList<>(n);
    held = 0;
    for (int i = 0; i < n; i++) {
      Object v = kind.read(in);
      values.add(v);
      held += kind.heldBytes(v) + TIME_BYTES;
    }
  }
}
