package io.streamwarden.engine.sessions;

/**
 * The session operator on Spark's transformWithState: {@link SessionLogic} under {@link
 * SummaryProcessor}, its state named {@link #STATE_NAME}.
 */
public final class SessionProcessor extends SummaryProcessor {
  private static final long serialVersionUID = 2L;
  /** Name of the value state, as the state data source shows it. */
  public static final String STATE_NAME = "user_sessions";

  private final SessionPlan plan;

  public SessionProcessor(SessionPlan plan, long slowKeyThresholdMs) {
    super(plan.aggregates, STATE_NAME, "sessionize", "session", slowKeyThresholdMs);
    this.plan = plan;
  }

  @Override
  protected SummaryLogic newLogic() {
    return new SessionLogic(plan);
  }
}
