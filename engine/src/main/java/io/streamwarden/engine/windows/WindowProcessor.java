package io.streamwarden.engine.windows;

import io.streamwarden.engine.sessions.SummaryLogic;
import io.streamwarden.engine.sessions.SummaryProcessor;

/**
 * The windows operator on Spark's transformWithState: {@link WindowLogic} under {@link
 * SummaryProcessor}, one value state per group named {@link #STATE_NAME}.
 */
public final class WindowProcessor extends SummaryProcessor {
  private static final long serialVersionUID = 1L;
  /** Name of the value state, as the state data source shows it. */
  public static final String STATE_NAME = "group_windows";

  private final WindowPlan plan;

  public WindowProcessor(WindowPlan plan, long slowKeyThresholdMs) {
    super(plan.aggregates, STATE_NAME, "windows", "window", slowKeyThresholdMs);
    this.plan = plan;
  }

  @Override
  protected SummaryLogic newLogic() {
    return new WindowLogic(plan);
  }
}
