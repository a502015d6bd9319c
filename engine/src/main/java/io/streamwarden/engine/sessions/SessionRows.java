package io.streamwarden.engine.sessions;

import io.streamwarden.engine.EngineOutput;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.apache.spark.sql.Row;

/** Turns {@link Emitted} records into rows of {@link EngineOutput#schema}. */
public final class SessionRows {
  private SessionRows() {}

  /** The rows of a session plan's output. */
  static List<Row> toRows(SessionPlan plan, List<Emitted> emitted) {
    return toRows(plan.aggregates, emitted);
  }

  /** The rows of an output whose summaries carry {@code plan}'s aggregates. */
  public static List<Row> toRows(AggregatePlan plan, List<Emitted> emitted) {
    List<Row> rows = new ArrayList<>(emitted.size());
    for (Emitted e : emitted) {
      if (Emitted.SESSION.equals(e.kind)) {
        SessionAgg s = e.session;
        rows.add(EngineOutput.session(plan, e.key, s.getSessionId(), s.getStartMs(),
            s.getEndMs(), s.getEventCount(), s.getBytes(), s.getRevision(), s.isTruncated(),
            e.mergedIds, e.results, base64(e.state)));
      } else if (Emitted.HISTORY.equals(e.kind)) {
        rows.add(EngineOutput.history(plan, e.key, e.event.tsMs, e.event.raw, e.event.size,
            ValuesJson.write(e.event.values)));
      } else {
        rows.add(EngineOutput.deadLetter(plan, e.key, e.event.tsMs, e.event.raw, e.reason,
            e.detail));
      }
    }
    return rows;
  }

  static String base64(byte[] state) {
    return state == null ? null : Base64.getEncoder().encodeToString(state);
  }
}
