package io.streamwarden.engine.json;

import java.util.Arrays;

/**
 * The state of one record's read: where the reader is (the path from the record down to the
 * value being read) and the first problem found so far.
 *
 * <p>A record is read in the order its text is written, but the problem reported is the first in
 * the order the schema declares its fields (depth first; an array's elements and a map's entries
 * in the order written). Each problem is therefore kept with its place, a list of ordinals from
 * the record down (a field's index in its struct, an element's index, an entry's position), and
 * a later problem replaces it only when its place comes first. Readers ask {@link #wins} before
 * building a detail text, so that a good record builds none and a bad one few.
 *
 * <p>One instance per thread and spec, reset per record: nothing here is allocated per record.
 */
final class Reading {
  private static final int FIELD = 0;
  private static final int ELEMENT = 1;
  private static final int ENTRY = 2;

  private int depth;
  private int[] kinds = new int[8];
  private int[] ordinals = new int[8];
  private Object[] labels = new Object[8];

  private String reason;
  private String detail;
  private int[] place = new int[8];
  private int placeDepth;

  /** The event time read, in epoch milliseconds, when {@link #hasTime}. */
  long timeMs;
  boolean hasTime;

  void reset() {
    depth = 0;
    reason = null;
    detail = null;
    hasTime = false;
  }

  String reason() {
    return reason;
  }

  String detail() {
    return detail;
  }

  /** Enters field {@code index}, named {@code name}, of the struct being read. */
  void enterField(int index, String name) {
    push(FIELD, index, name);
  }

  /** Enters element {@code index} of the array being read. */
  void enterElement(int index) {
    push(ELEMENT, index, null);
  }

  /** Enters the map entry at {@code position}, whose key is {@code key}. */
  void enterEntry(int position, Object key) {
    push(ENTRY, position, key);
  }

  void leave() {
    depth--;
  }

  /** Whether a problem here would be reported rather than the one already found. */
  boolean wins() {
    if (reason == null) {
      return true;
    }
    int common = Math.min(depth, placeDepth);
    for (int i = 0; i < common; i++) {
      if (ordinals[i] != place[i]) {
        return ordinals[i] < place[i];
      }
    }
    return depth < placeDepth; // a struct before its own fields; the same place: the first found
  }

  /** Keeps a problem found here, when it {@link #wins}. */
  void problem(String reasonCode, String text) {
    if (!wins()) {
      return;
    }
    reason = reasonCode;
    detail = text;
    if (place.length < depth) {
      place = new int[ordinals.length];
    }
    System.arraycopy(ordinals, 0, place, 0, depth);
    placeDepth = depth;
  }

  /** A malformed record: its problem replaces any other. */
  void malformed(String text) {
    reason = RecordReader.MALFORMED_JSON;
    detail = text;
    placeDepth = 0;
    hasTime = false;
  }

  /** The value's name for a detail: {@code geo.city}, {@code tags[2]}, {@code attrs["k"]}. */
  String name() {
    StringBuilder name = new StringBuilder();
    for (int i = 0; i < depth; i++) {
      switch (kinds[i]) {
        case FIELD -> name.append(i == 0 ? "" : ".").append(labels[i]);
        case ELEMENT -> name.append('[').append(ordinals[i]).append(']');
        default -> name.append('[').append(Shown.quoted(String.valueOf(labels[i]))).append(']');
      }
    }
    return name.toString();
  }

  private void push(int kind, int ordinal, Object label) {
    if (depth == kinds.length) {
      kinds = Arrays.copyOf(kinds, depth * 2);
      ordinals = Arrays.copyOf(ordinals, depth * 2);
      labels = Arrays.copyOf(labels, depth * 2);
    }
    kinds[depth] = kind;
    ordinals[depth] = ordinal;
    labels[depth] = label;
    depth++;
  }
}
