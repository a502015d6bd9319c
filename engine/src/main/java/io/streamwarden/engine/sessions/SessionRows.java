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
            s.getUrlTimes(), s.getRevision(), s.isTruncated(), e.mergedIds));
      } else if (Emitted.HISTORY.equals(e.kind)) {
        rows.add(EngineOutput.history(e.userId, e.event.tsMs, e.event.raw, e.event.page,
            e.event.url, e.event.size));
      } else {
        rows.add(EngineOutput.deadLetter(e.userId, e.event.tsMs, e.event.raw, e.reason,
            e.detail));
      }
    }
    return rows;
  }
}
