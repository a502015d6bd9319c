package io.streamwarden.engine.join;

import java.io.Serializable;

/**
 * One buffered row of a side (a Java bean, stored through Spark's bean encoder): its event time,
 * its typed fields as JSON, and whether it has matched a row of the other side yet (which decides
 * whether a left-outer join emits it alone when it is freed).
 */
public final class Buffered implements Serializable {
  private static final long serialVersionUID = 1L;

  private long tsMs;
  private String row;
  private boolean matched;

  public Buffered() {}

  public Buffered(long tsMs, String row) {
    this.tsMs = tsMs;
    this.row = row;
  }

  public long getTsMs() { return tsMs; }
  public void setTsMs(long v) { tsMs = v; }
  public String getRow() { return row; }
  public void setRow(String v) { row = v; }
  public boolean isMatched() { return matched; }
  public void setMatched(boolean v) { matched = v; }
}
