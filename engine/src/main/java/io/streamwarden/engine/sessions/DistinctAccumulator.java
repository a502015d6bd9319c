package io.streamwarden.engine.sessions;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * {@code count_distinct} and {@code collect_set}: the distinct values that are not null, held in
 * ascending order ({@link ValueKind#order}; -0.0 counts as 0.0). Each held value counts its
 * bytes ({@link ValueKind#heldBytes}) toward {@code max_session_bytes}.
 */
final class DistinctAccumulator implements Accumulator {
  private final ValueKind kind;
  private final Comparator<Object> order;
  private final boolean collect;
  private List<Object> values = new ArrayList<>();
  private long held;

  DistinctAccumulator(ValueKind kind, boolean collect) {
    this.kind = kind;
    this.order = kind.order();
    this.collect = collect;
  }

  @Override
  public void add(Object v, long tsMs) {
    if (v == null) {
      return;
    }
    Object d = kind.distinctForm(v);
    int at = Collections.binarySearch(values, d, order);
    if (at < 0) {
      values.add(-at - 1, d);
      held += kind.heldBytes(d);
    }
  }

  @Override
  public void merge(Accumulator other) {
    List<Object> theirs = ((DistinctAccumulator) other).values;
    List<Object> merged = new ArrayList<>(values.size() + theirs.size());
    int i = 0;
    int j = 0;
    while (i < values.size() || j < theirs.size()) {
      int c = i == values.size() ? 1 : j == theirs.size() ? -1
          : order.compare(values.get(i), theirs.get(j));
      if (c <= 0) {
        merged.add(values.get(i++));
        j += c == 0 ? 1 : 0;
      } else {
        Object v = theirs.get(j++);
        merged.add(v);
        held += kind.heldBytes(v);
      }
    }
    values = merged;
  }

  @Override
  public Object result() {
    return collect ? new ArrayList<>(values) : (Object) (long) values.size();
  }

  @Override
  public long heldBytes() {
    return held;
  }

  @Override
  public long heldBytesAdding(Object v) {
    if (v == null) {
      return 0;
    }
    Object d = kind.distinctForm(v);
    return Collections.binarySearch(values, d, order) >= 0 ? 0 : kind.heldBytes(d);
  }

  @Override
  public void write(StateBytes.Writer out) {
    out.writeVarLong(values.size());
    for (Object v : values) {
      kind.write(out, v);
    }
  }

  @Override
  public void read(StateBytes.Reader in) {
    int n = in.readLength();
    values = new ArrayList<>(n);
    held = 0;
    for (int i = 0; i < n; i++) {
      Object v = kind.read(in);
      values.add(v);
      held += kind.heldBytes(v);
    }
  }
}
