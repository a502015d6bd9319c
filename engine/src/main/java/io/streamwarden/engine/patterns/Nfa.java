package io.streamwarden.engine.patterns;

import io.streamwarden.engine.patterns.PatternPlan.Contiguity;
import io.streamwarden.engine.patterns.PatternPlan.FieldCondition;
import io.streamwarden.engine.patterns.PatternPlan.Kind;
import io.streamwarden.engine.patterns.PatternPlan.Stage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The per-key pattern rules, free of Spark so that a test harness can drive them.
 *
 * <p>Semantics follow Flink CEP in event time, transition for transition: each position below
 * is one of the states Flink's {@code NFACompiler} builds, and Flink's own test suite is ported
 * as the {@code Flink*ITCaseTest} JUnit classes. Events wait in the key's buffer until the
 * watermark passes them, then are consumed in event-time order. Each partial match sits at a
 * stage with a count of events that stage took; an event can be <em>taken</em> (the condition
 * holds, the quantifier allows more, and it is not the loop's {@code until} event), can make
 * the partial <em>proceed</em> to the next stage on the same event (the quantifier is
 * satisfied; a greedy stage only when it does not take the event and the following stage
 * does), and can be <em>ignored</em> (strict: never; relaxed: when the condition fails; any:
 * always). A partial that ignores an event at an optional stage or a satisfied loop commits
 * to it: it may take another event there but no longer proceed without one (Flink's "ignore"
 * states). Every event may also start a partial match at the first stage, or, past an
 * optional first stage, at the next. A negation's event discards the partial match with all
 * the branches it would have made: {@code not_next} on the next event only, {@code
 * not_followed_by} on any event while the stage before it is inside its events or the stage
 * after it has taken none (as the last stage, until the window closes, which completes the
 * match). Under a skip strategy a completed match waits while a partial match that started
 * earlier is open, as in Flink, so that the strategy prunes in Flink's order. A group pattern
 * (a sub-pattern with a quantifier) arrives as a copy of its stages per round, as Flink's
 * compiler copies its states; passing the first stage of a round that may be left out without
 * an event moves past the whole group ({@link PatternPlan.Stage#skipTo}), and a looping
 * group's last round goes back from its last stage to its first ({@link
 * PatternPlan.Stage#loopTo}); a group's {@code until} event is neither taken nor skipped by
 * any of its stages.
 *
 * <p>Identical partial matches reached by different paths are merged, and a match or timeout
 * is reported once for its events whatever NFA positions held them, so none is reported
 * twice. A partial match whose window ({@code within}) has passed is removed, and optionally
 * reported as timed out; a key holding no partial match and no waiting event holds no state.
 */
public final class Nfa {
  private final PatternPlan plan;
  private final List<Stage> stages;
  private final AfterMatchSkip skip;

  public Nfa(PatternPlan plan) {
    this.plan = plan;
    this.stages = plan.stages;
    this.skip = new AfterMatchSkip(plan);
  }

  public PatternPlan plan() {
    return plan;
  }

  /** Adds a batch's events (all after the watermark) to the buffer, keeping it time-ordered. */
  public void buffer(KeyState s, List<PEvent> events) {
    events.sort(PEvent.CONTENT_ORDER);
    for (PEvent e : events) {
      e.seq = s.nextSeq++;
      s.buffer.add(e);
    }
    s.buffer.sort(PEvent.TIME_ORDER);
  }

  /** Consumes the buffered events the watermark has passed, then expires partial matches. */
  public void advance(KeyState s, long watermarkMs, List<Found> out) {
    int consumed = 0;
    while (consumed < s.buffer.size() && s.buffer.get(consumed).tsMs <= watermarkMs) {
      PEvent e = s.buffer.get(consumed++);
      e.ord = s.nextOrd++;
      expire(s, e.tsMs, out);
      step(s, e, out);
    }
    if (consumed > 0) {
      s.buffer.subList(0, consumed).clear();
    }
    expire(s, watermarkMs, out);
  }

  /** The earliest time at which {@link #advance} has work: the timer to set, or NO_TIMER. */
  public long nextDeadline(KeyState s) {
    long next = KeyState.NO_TIMER;
    if (!s.buffer.isEmpty()) {
      next = s.buffer.get(0).tsMs;
    }
    for (Partial p : s.partials) {
      long deadline = plan.deadlineOf(p);
      if (next == KeyState.NO_TIMER || deadline < next) {
        next = deadline;
      }
    }
    return next;
  }

  /**
   * Removes the partial matches whose window has passed: each completes (a pattern ending in
   * not_followed_by) or times out, unless it was a match already and only waited to grow
   * longer. The same events can sit at several NFA positions (a loop
   * still waiting for more, and the stage after it); they are one match or one timeout.
   */
  private void expire(KeyState s, long nowMs, List<Found> out) {
    List<Partial> kept = null; // these three are made at the first expired partial: most
    LinkedHashSet<Partial> completed = null; // calls (one per consumed event) expire none
    LinkedHashMap<Partial, Long> timedOut = null; // content -> the deadline that passed
    for (int i = 0; i < s.partials.size(); i++) {
      Partial p = s.partials.get(i);
      if (nowMs < plan.deadlineOf(p)) {
        if (kept != null) {
          kept.add(p);
        }
        continue;
      }
      if (kept == null) {
        kept = new ArrayList<>(s.partials.subList(0, i));
        completed = new LinkedHashSet<>();
        timedOut = new LinkedHashMap<>();
      }
      if (plan.endsWithNotFollowedBy() && canEndHere(p)) {
        completed.add(p.content()); // nothing forbidden arrived within the window: a match
      } else if (plan.emitTimeouts && !wasMatch(p)) { // a match was reported already
        timedOut.merge(p.content(), plan.deadlineOf(p), Math::min);
      }
    }
    if (kept == null) {
      return;
    }
    s.partials = kept;
    timedOut.keySet().removeAll(completed);
    for (Partial p : kept) { // a loop's window can end one position of events another holds
      timedOut.remove(p.content());
    }
    for (Map.Entry<Partial, Long> t : timedOut.entrySet()) {
      out.add(Found.timeout(t.getKey(), t.getValue()));
    }
    skip.emit(new ArrayList<>(completed), s, out); // also releases matches held for these
  }

  private void step(KeyState s, PEvent e, List<Found> out) {
    LinkedHashSet<Partial> next = new LinkedHashSet<>();
    LinkedHashSet<Partial> done = new LinkedHashSet<>();
    for (Partial p : s.partials) {
      Branches b = new Branches();
      evaluate(p, p.stage, p.count, p.guard, p.committed, e, b);
      if (!b.stopped) { // as in Flink, a forbidden event discards every branch of the partial
        next.addAll(b.next);
      }
      b.done.forEach(m -> done.add(m.content())); // one match for its events, whatever position
    }
    Branches started = new Branches(); // Flink's start state: it never ignores an event, and
    evaluate(Partial.EMPTY, 0, 0, -1, false, e, started); // proceeds past an optional stage
    for (Partial p : started.next) {
      if (!p.events.isEmpty()) {
        next.add(p);
      }
    }
    started.done.forEach(m -> {
      if (!m.events.isEmpty()) {
        done.add(m.content());
      }
    });
    List<Partial> kept = new ArrayList<>(next);
    if (kept.size() > plan.maxPartialsPerKey) {
      int dropped = kept.size() - plan.maxPartialsPerKey;
      kept = new ArrayList<>(kept.subList(0, plan.maxPartialsPerKey));
      out.add(Found.overflow(dropped));
    }
    s.partials = kept;
    if (!done.isEmpty() || !s.held.isEmpty()) { // a held match may wait no longer
      skip.emit(new ArrayList<>(done), s, out);
    }
  }

  /** What one partial becomes on one event: its branches, the matches, and whether a
   * negation's event arrived (Flink's stop state), which discards all its branches. */
  private static final class Branches {
    final LinkedHashSet<Partial> next = new LinkedHashSet<>();
    final LinkedHashSet<Partial> done = new LinkedHashSet<>();
    boolean stopped;
  }

  /**
   * The transitions of partial {@code p} at NFA position (stage i, count c, guard, committed)
   * on event {@code e}, as Flink's compiled states have them: TAKE when the condition holds
   * and the quantifier allows more; PROCEED (to the next stage, evaluated on the same event)
   * once the quantifier is satisfied, unless the branch committed to this stage by ignoring an
   * event here, and for a greedy stage only when the event is not taken here but the following
   * stage takes it; IGNORE as the contiguity allows (at an optional stage or a satisfied loop
   * the ignoring branch commits). A not_followed_by guards the gaps of the stage before it (any
   * count above zero) and the waiting of the stage after it.
   */
  private void evaluate(Partial p, int i, int c, int guard, boolean committed, PEvent e,
      Branches b) {
    Stage st = stages.get(i);
    if (st.negation()) {
      negation(p, i, guard, e, b);
      return;
    }
    if (c == 0 && guard >= 0 && takes(stages.get(guard), p, e)) {
      b.stopped = true; // a not_followed_by event arrived before this stage took anything
      return;
    }
    if (c > 0 && guardedByNext(i, c, committed) && takes(stages.get(i + 1), p, e)) {
      b.stopped = true; // a not_followed_by event arrived inside this stage's events
      return;
    }
    if (!st.canTakeMore(c)) { // the quantifier is full: the partial is at the next stage
      proceed(p, i + 1, -1, false, e, b);
      loopBack(p, st, e, b);
      return;
    }
    boolean condition = takes(st, p, e);
    boolean until = untilMet(st, p, e);
    boolean meets = condition && !until; // the until event is never taken by the loop
    if (meets) {
      afterTake(p.take(e, i, c + 1), b);
    }
    Contiguity contiguity = c == 0 ? st.contiguity : st.inner;
    // nor skipped inside a loop; a single stage has an until only as part of a group with
    // until, whose every stage its event ends (Flink extends their ignore conditions with it)
    boolean ignores = ignores(contiguity, condition) && !(until && (c > 0 || st.max == 1));
    if (canProceed(st, c, committed)
        && (!st.greedy || !meets && (!ignores || followingTakes(i, p, e)))) {
      proceed(p, c == 0 ? st.skipTo : i + 1, c == 0 ? guard : -1, st.greedy, e, b);
      if (c > 0) {
        loopBack(p, st, e, b);
      }
    }
    if (ignores) {
      boolean commits = committed || c >= st.min || c == 0 && st.optional;
      b.next.add(p.at(i, c, guard, commits));
    }
  }

  /** At a negation stage: its event stops the partial; any other event passes it. */
  private void negation(Partial p, int i, int guard, PEvent e, Branches b) {
    Stage st = stages.get(i);
    if (takes(st, p, e)) {
      b.stopped = true;
      return;
    }
    if (i == stages.size() - 1) {
      if (st.kind == Kind.NOT_NEXT) {
        b.done.add(p); // the event after the match is not the forbidden one
      } else {
        b.next.add(p.at(i, 0, -1, false)); // pending: completes when the window closes
      }
    } else if (st.kind == Kind.NOT_FOLLOWED_BY) {
      evaluate(p, i + 1, 0, i, false, e, b);
    } else {
      evaluate(p, i + 1, 0, -1, false, e, b);
    }
  }

  /** Moves on to stage {@code j} on the same event (Flink's PROCEED, an epsilon move). */
  private void proceed(Partial p, int j, int guard, boolean fromGreedy, PEvent e, Branches b) {
    if (j == stages.size()) {
      if (fromGreedy) {
        b.done.add(p); // a greedy stage at the end reports when it stops taking
      }
      return;
    }
    evaluate(p, j, 0, guard, false, e, b);
  }

  /** At the end of a group's looping round: the partial may also start another round. */
  private void loopBack(Partial p, Stage st, PEvent e, Branches b) {
    if (st.loopTo >= 0) {
      evaluate(p, st.loopTo, 0, -1, false, e, b);
    }
  }

  /** May a partial move on from stage {@code st} after it took {@code c} events? */
  private static boolean canProceed(Stage st, int c, boolean committed) {
    if (c == 0 ? !st.optional : c < st.min) {
      return false;
    }
    return !committed || st.greedy;
  }

  /** Is a partial with {@code c > 0} events at stage {@code i} watched by the negation after
   * it? Flink guards a loop's states and the inner states of times, but not the state a
   * times-range stage reaches when it ignores an event after its minimum. */
  private boolean guardedByNext(int i, int c, boolean committed) {
    if (i + 1 >= stages.size() || stages.get(i + 1).kind != Kind.NOT_FOLLOWED_BY) {
      return false;
    }
    Stage st = stages.get(i);
    return !(committed && st.max >= 0 && c >= st.min);
  }

  /** Does a stage after {@code i} take {@code e}: the next non-negation stage, and the ones
   * after it while they are optional (Flink's "following take condition" of a greedy stage)?
   * True when no stage follows: then nothing constrains the greedy stage's end. */
  private boolean followingTakes(int i, Partial p, PEvent e) {
    boolean any = false;
    int j = i + 1;
    while (j < stages.size()) {
      Stage st = stages.get(j);
      if (st.negation()) {
        j++;
        continue;
      }
      any = true;
      if (takes(st, p, e)) {
        return true;
      }
      if (!st.optional) {
        return false;
      }
      j = st.skipTo; // past an optional group, its first stage's next is after the group
    }
    return !any;
  }

  private void afterTake(Partial q, Branches b) {
    if (complete(q)) {
      b.done.add(q);
    }
    Stage st = stages.get(q.stage);
    if (st.canTakeMore(q.count) || q.stage + 1 < stages.size() || st.loopTo >= 0) {
      // a loop at the end may take more, and the optional stages after it may still take
      // events: each a further, longer match (as in Flink, where `a b?` reports a and a b)
      b.next.add(q);
    }
  }

  /** True if {@code p}'s events were reported as a match when its last event was taken (it may
   * have moved since: ignored events at an optional stage, or proceeded). */
  private boolean wasMatch(Partial p) {
    int last = p.stageOf[p.stageOf.length - 1];
    int count = 0;
    for (int i = p.stageOf.length - 1; i >= 0 && p.stageOf[i] == last; i--) {
      count++;
    }
    return complete(p.at(last, count, -1, false));
  }

  /**
   * True if {@code p}'s events are a match already, as Flink finds a final state by PROCEED
   * edges right after a take: its stage has taken enough (and is not greedy: a greedy stage
   * reports when it stops taking), and every later stage is optional and not greedy, or a
   * not_followed_by that another stage follows.
   */
  private boolean complete(Partial p) {
    Stage st = stages.get(p.stage);
    int from;
    if (!st.canTakeMore(p.count)) {
      from = p.stage + 1;
    } else {
      if (!st.satisfied(p.count) || st.greedy || p.count == 0) {
        return false;
      }
      from = p.stage + 1;
    }
    int j = from;
    while (j < stages.size()) {
      Stage later = stages.get(j);
      boolean passable = later.kind == Kind.NOT_FOLLOWED_BY ? j < stages.size() - 1
          : later.kind == Kind.NORMAL && later.optional && !later.greedy;
      if (!passable) {
        return false;
      }
      j = later.kind == Kind.NORMAL ? later.skipTo : j + 1; // an optional group as a whole
    }
    return true;
  }

  /** For patterns ending in not_followed_by: has {@code p} matched all that came before? */
  private boolean canEndHere(Partial p) {
    if (p.stage == stages.size() - 1) {
      return true;
    }
    if (!stages.get(p.stage).satisfied(p.count)) {
      return false;
    }
    int j = p.stage + 1;
    while (j < stages.size() - 1) {
      Stage st = stages.get(j);
      if (st.kind != Kind.NOT_FOLLOWED_BY && (st.negation() || !st.satisfied(0))) {
        return false;
      }
      j = st.negation() ? j + 1 : st.skipTo;
    }
    return true;
  }

  private static boolean ignores(Contiguity contiguity, boolean meets) {
    switch (contiguity) {
      case STRICT:
        return false;
      case RELAXED:
        return !meets;
      default:
        return true;
    }
  }

  /** Does {@code e} meet the loop's until condition: its Spark-evaluated bit (if any) and its
   * aggregates over the events taken so far, without {@code e} (Flink's until sees the partial
   * match before the event, whose taking it decides)? False when the stage has no until. */
  private static boolean untilMet(Stage st, Partial p, PEvent e) {
    if (!st.hasUntil() || st.untilBit != 0 && !e.meets(st.untilBit)) {
      return false;
    }
    for (PatternPlan.AggregateCondition ac : st.untilAggregates) {
      if (!Aggregates.holds(ac, p, false, e)) {
        return false;
      }
    }
    return true;
  }

  /** The stage's condition: its Spark-evaluated bit and its comparisons with earlier events. */
  private boolean takes(Stage st, Partial p, PEvent e) {
    if (!e.meets(st.bit)) {
      return false;
    }
    for (FieldCondition fc : st.fieldConditions) {
      PEvent ref = p == null ? null : p.lastOf(fc.refStage);
      if (ref == null || !compare(e.values[fc.field], fc.op, ref.values[fc.field], fc.numeric)) {
        return false;
      }
    }
    for (PatternPlan.AggregateCondition ac : st.aggregateConditions) {
      if (!Aggregates.holds(ac, p, stages.get(ac.refStage) == st, e)) {
        return false;
      }
    }
    return true;
  }

  static boolean compare(String left, String op, String right, boolean numeric) {
    if (left == null || right == null) {
      return false;
    }
    int cmp;
    if (numeric) {
      try {
        cmp = Double.compare(Double.parseDouble(left), Double.parseDouble(right));
      } catch (NumberFormatException e) {
        return false;
      }
    } else {
      cmp = left.compareTo(right);
    }
    switch (op) {
      case "==":
        return cmp == 0;
      case "!=":
        return cmp != 0;
      case "<":
        return cmp < 0;
      case "<=":
        return cmp <= 0;
      case ">":
        return cmp > 0;
      case ">=":
        return cmp >= 0;
      default:
        throw new IllegalArgumentException("unknown comparison " + op);
    }
  }
}
