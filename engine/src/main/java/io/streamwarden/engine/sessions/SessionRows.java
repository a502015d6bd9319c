package io.streamwarden.engine.sessions;

import io.streamwarden.engine.EngineOutput;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;

/** Turns {@link Emitted} records into rows of {@link EngineOutput#SCHEMA}. */
final class SessionRows {
  private SessionRows() {}

  static List<Row> toRows(List<Emitted> emitted) {
    List<Row> rows = new ArrayList<>(emitted.size());
    for (Emitted e : emitted) {
      if (Emitted.SESSION.equals(e.kind)) {
        SessionAgg s = e.session;
        rows.add(EngineOutput.session(e.userId, s.getSessionId(), s.getStartMs(), s.getEndMs(),
            s.getPageCount(), s.getBytes(), s.getFirstUrl(), s.getLastUrl(), s.getUrls(),
            s.getRevision(), s.isTruncated(), e.mergedIds));
      } else {
        rows.add(EngineOutput.deadLetter(e.userId, e.event.tsMs, e.event.raw, e.reason,
            e.detail));
      }
    }
    return rows;
  }
}
