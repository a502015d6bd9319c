package io.streamwarden.engine.windows;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.sessions.Emitted;
import io.streamwarden.engine.sessions.Event;
import io.streamwarden.engine.sessions.SessionAgg;
import io.streamwarden.engine.sessions.SessionLogic;
import io.streamwarden.engine.sessions.SummaryLogic;
import io.streamwarden.engine.sessions.UserSessions;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-group window rules, free of Spark so that a test harness can drive them.
 *
 * <p>A group's state is its windows that are still open or inside their lateness, each a compact
 * summary ({@link SessionAgg}: the window's start and end, event count, bytes and its
 * aggregates' state, never the raw events), ordered by start. A window is alive while the
 * watermark is below {@code end + allowedLateness}; at that moment it is freed, and, emitting
 * finals, emitted once ({@code revision} 0). Emitting updates, every micro-batch that changed a
 * window emits it once more ({@code revision} + 1), however many of the batch's events it took.
 * Every window therefore has a deadline whether or not its group sends again; {@link
 * #nextDeadline} gives the earliest, which the caller turns into an event-time timer.
 *
 * <p>An event joins all of its windows ({@link WindowPlan#windowsPerEvent}) or none: it is
 * {@code too_late} when the first of its windows to close is past its lateness, and dead-lettered
 * at a cap ({@code window_event_cap}, {@code window_byte_cap}) when any of its windows is full,
 * which flags the full windows {@code truncated}. So every event is in exactly {@code size /
 * slide} windows or in one dead letter, whatever the batching.
 */
public final class WindowLogic implements SummaryLogic {
  private final WindowPlan plan;

  public WindowLogic(WindowPlan plan) {
    this.plan = plan;
  }

  /** Applies a group's events of a micro-batch, then emits and frees what the watermark allows. */
  @Override
  public List<Emitted> onEvents(
      String key, UserSessions state, List<Event> events, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    Map<SessionAgg, Boolean> changed = new IdentityHashMap<>();
    closeDue(key, state, watermarkMs, out); // a window past its deadline takes nothing
    events.sort((a, b) -> Long.compare(a.tsMs, b.tsMs));
    for (Event e : events) {
      apply(key, state, e, watermarkMs, out, changed);
    }
    if (plan.emitUpdates) {
      for (SessionAgg w : state.getSessions()) {
        if (changed.containsKey(w)) {
          emit(key, w, out);
        }
      }
    }
    closeDue(key, state, watermarkMs, out);
    for (SessionAgg w : state.getSessions()) {
      w.encodeIfChanged(plan.aggregates);
    }
    return out;
  }

  /** Emits and frees whatever the watermark has made due; called from the event-time timer. */
  @Override
  public List<Emitted> onWatermark(String key, UserSessions state, long watermarkMs) {
    List<Emitted> out = new ArrayList<>();
    closeDue(key, state, watermarkMs, out);
    return out;
  }

  /** The earliest event time at which a window of this group is due, or NO_TIMER if none. */
  @Override
  public long nextDeadline(UserSessions state) {
    long next = UserSessions.NO_TIMER;
    for (SessionAgg w : state.getSessions()) {
      long due = w.getEndMs() + plan.allowedLatenessMs;
      if (next == UserSessions.NO_TIMER || due < next) {
        next = due;
      }
    }
    return next;
  }

  private void apply(String key, UserSessions state, Event e, long watermarkMs,
      List<Emitted> out, Map<SessionAgg, Boolean> changed) {
    long first = plan.firstStart(e.tsMs);
    long firstDue = first + plan.sizeMs + plan.allowedLatenessMs;
    if (firstDue <= watermarkMs) {
      out.add(Emitted.deadLetter(key, e, EngineInput.TOO_LATE, String.format(
          "event time %d is %d ms behind the watermark %d: its window [%d, %d) closed for late "
              + "events at %d (end + allowed_lateness %d ms)",
          e.tsMs, watermarkMs - e.tsMs, watermarkMs, first, first + plan.sizeMs, firstDue,
          plan.allowedLatenessMs)));
      return;
    }
    List<SessionAgg> windows = state.getSessions();
    SessionAgg[] held = new SessionAgg[plan.windowsPerEvent()];
    for (SessionAgg w : windows) {
      long start = w.getStartMs();
      if (start >= first && start <= e.tsMs) {
        held[(int) ((start - first) / plan.slideMs)] = w;
      }
    }
    String cap = capReached(key, held, e, out, changed);
    if (cap != null) {
      return;
    }
    for (int i = 0; i < held.length; i++) {
      long start = first + i * plan.slideMs;
      SessionAgg w = held[i];
      if (w == null) {
        w = SessionAgg.window(start, start + plan.sizeMs, e, plan.aggregates);
        windows.add(insertionPoint(windows, start), w);
      } else {
        w.add(e, plan.aggregates);
      }
      changed.put(w, Boolean.TRUE);
    }
  }

  /**
   * The reason (and a dead letter in {@code out}) if {@code e} would overfill one of its held
   * windows, which are then flagged truncated; null if every window takes it. A window's bytes
   * are those of the values its aggregates hold ({@code count_distinct}, {@code collect_*}):
   * a window keeps no record.
   */
  private String capReached(String key, SessionAgg[] held, Event e, List<Emitted> out,
      Map<SessionAgg, Boolean> changed) {
    String reason = null;
    String detail = null;
    for (SessionAgg w : held) {
      String full = null;
      String why = null;
      if (w == null) {
        long bytes = plan.aggregates.holdsValues()
            ? SessionAgg.window(0, 1, new Event(0, e.size, e.raw, e.values), plan.aggregates)
                .heldBytes(plan.aggregates)
            : 0;
        if (bytes > plan.maxWindowBytes) {
          full = EngineInput.WINDOW_BYTE_CAP;
          why = String.format("the event's values alone are %d bytes, over max_window_bytes %d",
              bytes, plan.maxWindowBytes);
        }
      } else if (w.getEventCount() + 1 > plan.maxEvents) {
        full = EngineInput.WINDOW_EVENT_CAP;
        why = String.format("window [%d, %d) already holds the maximum of %d events",
            w.getStartMs(), w.getEndMs(), plan.maxEvents);
      } else if (plan.aggregates.holdsValues()) {
        long bytes = w.heldBytes(plan.aggregates) + w.heldBytesAdding(e, plan.aggregates);
        if (bytes > plan.maxWindowBytes) {
          full = EngineInput.WINDOW_BYTE_CAP;
          why = String.format("window [%d, %d) would hold %d bytes of aggregate values, over "
              + "max_window_bytes %d", w.getStartMs(), w.getEndMs(), bytes, plan.maxWindowBytes);
        }
      }
      if (full == null) {
        continue;
      }
      if (w != null) {
        w.setTruncated(true);
        changed.put(w, Boolean.TRUE);
      }
      if (reason == null) {
        reason = full;
        detail = why;
      }
    }
    if (reason != null) {
      out.add(Emitted.deadLetter(key, e, reason, detail));
    }
    return reason;
  }

  private static int insertionPoint(List<SessionAgg> windows, long start) {
    int at = windows.size();
    while (at > 0 && windows.get(at - 1).getStartMs() > start) {
      at--;
    }
    return at;
  }

  private void closeDue(String key, UserSessions state, long watermarkMs, List<Emitted> out) {
    List<SessionAgg> kept = new ArrayList<>(state.getSessions().size());
    for (SessionAgg w : state.getSessions()) {
      if (w.getEndMs() + plan.allowedLatenessMs > watermarkMs) {
        kept.add(w);
      } else if (!plan.emitUpdates) {
        emit(key, w, out); // the one emission of a final window; updates were emitted by batch
      }
    }
    state.setSessions(kept);
  }

  private void emit(String key, SessionAgg w, List<Emitted> out) {
    if (w.getSessionId() == null) {
      w.setSessionId(SessionLogic.sessionId(key, w.getStartMs()));
    }
    w.setRevision(w.getRevision() + 1);
    w.setClosed(true);
    w.encodeIfChanged(plan.aggregates);
    out.add(Emitted.session(key, w.snapshot(), null, w.results(plan.aggregates), null));
  }
}
