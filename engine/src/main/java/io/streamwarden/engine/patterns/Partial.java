package io.streamwarden.engine.patterns;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A partial match: the events taken so far (each with the stage that took it) and the position
 * of the NFA: {@code stage}, how many events that stage has taken ({@code count}), the
 * not-followed-by stage still watching ({@code guard}, -1 for none), and whether the partial
 * ignored an event while it could have moved on ({@code committed}): as in Flink CEP, a branch
 * that skips an event at an optional stage or a loop commits to take another event there
 * rather than move on later (Flink's "ignore" states, which have no proceed edge). Immutable;
 * every transition makes a new one, so branches never share mutable state.
 */
public final class Partial {
  public final int stage;
  public final int count;
  public final int guard;
  public final boolean committed;
  public final List<PEvent> events;
  public final int[] stageOf;

  public Partial(int stage, int count, int guard, boolean committed, List<PEvent> events,
      int[] stageOf) {
    this.stage = stage;
    this.count = count;
    this.guard = guard;
    this.committed = committed;
    this.events = events;
    this.stageOf = stageOf;
  }

  /** No event yet: the position from which every event may start a match. */
  public static final Partial EMPTY =
      new Partial(0, 0, -1, false, Collections.emptyList(), new int[0]);

  public static Partial start(PEvent e) {
    return new Partial(0, 1, -1, false, Collections.singletonList(e), new int[] {0});
  }

  public Partial at(int newStage, int newCount, int newGuard, boolean nowCommitted) {
    if (newStage == stage && newCount == count && newGuard == guard
        && nowCommitted == committed) {
      return this;
    }
    return new Partial(newStage, newCount, newGuard, nowCommitted, events, stageOf);
  }

  public Partial take(PEvent e, int takingStage, int newCount) {
    List<PEvent> more = new ArrayList<>(events.size() + 1);
    more.addAll(events);
    more.add(e);
    int[] stages = java.util.Arrays.copyOf(stageOf, stageOf.length + 1);
    stages[stageOf.length] = takingStage;
    return new Partial(takingStage, newCount, -1, false, more, stages);
  }

  /** The events and the stages that took them, without the NFA position: what a match or
   * timeout reports, and equal for every position that holds the same events. */
  public Partial content() {
    return new Partial(-1, 0, -1, false, events, stageOf);
  }

  public PEvent first() {
    return events.get(0);
  }

  public PEvent last() {
    return events.get(events.size() - 1);
  }

  public long startMs() {
    return first().tsMs;
  }

  /** The last event taken by {@code s}, or null. */
  public PEvent lastOf(int s) {
    for (int i = stageOf.length - 1; i >= 0; i--) {
      if (stageOf[i] == s) {
        return events.get(i);
      }
    }
    return null;
  }

  /** The first event taken by {@code s}, or null. */
  public PEvent firstOf(int s) {
    for (int i = 0; i < stageOf.length; i++) {
      if (stageOf[i] == s) {
        return events.get(i);
      }
    }
    return null;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Partial)) {
      return false;
    }
    Partial p = (Partial) o;
    if (p.stage != stage || p.count != count || p.guard != guard || p.committed != committed
        || p.events.size() != events.size() || !java.util.Arrays.equals(p.stageOf, stageOf)) {
      return false;
    }
    for (int i = 0; i < events.size(); i++) {
      if (p.events.get(i).ord != events.get(i).ord) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    int h = 31 * (31 * (31 * stage + count) + guard) + (committed ? 1 : 0);
    for (PEvent e : events) {
      h = 31 * h + Long.hashCode(e.ord);
    }
    return 31 * h + java.util.Arrays.hashCode(stageOf);
  }
}
