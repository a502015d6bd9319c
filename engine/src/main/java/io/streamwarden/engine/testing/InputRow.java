package io.streamwarden.engine.testing;

/** An input row under construction, filled by the named column constants of its layout. */
final class InputRow {
  private InputRow() {}

  /** An empty row wide enough for every one of {@code columns}, a layout's column indexes. */
  static Object[] sizedFor(int... columns) {
    int highest = 0;
    for (int c : columns) {
      highest = Math.max(highest, c);
    }
    return new Object[highest + 1];
  }
}
