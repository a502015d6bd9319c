package io.streamwarden.engine.join;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The join plan Python writes as JSON: every field required, unknown fields refused. */
class JoinPlanTest {
  private static final String PLAN = "{\"lower_ms\": 0, \"upper_ms\": 86400000, "
      + "\"allowed_lateness_ms\": 600000, \"left_outer\": true, \"max_rows_per_key\": 10000, "
      + "\"left_name\": \"payments\", \"right_name\": \"refunds\"}";

  @Test
  void aPlanIsReadFromJson() {
    JoinPlan plan = JoinPlan.fromJson(PLAN);
    assertEquals(0, plan.lowerMs);
    assertEquals(86_400_000, plan.upperMs);
    assertEquals(600_000, plan.allowedLatenessMs);
    assertTrue(plan.leftOuter);
    assertEquals(10_000, plan.maxRowsPerKey);
    assertEquals("payments", plan.sourceName(JoinRecord.LEFT));
    assertEquals("refunds", plan.sourceName(JoinRecord.RIGHT));
    JoinPlan negative = JoinPlan.fromJson(PLAN.replace("\"lower_ms\": 0", "\"lower_ms\": -5")
        .replace("86400000", "-5"));
    assertEquals(-5, negative.lowerMs);
    assertEquals(-5, negative.upperMs);
  }

  @Test
  void aBadPlanIsRefusedWithOneLineNamingTheField() {
    assertEquals("join plan has an unknown field 'typo'; the fields are [allowed_lateness_ms, "
        + "left_name, left_outer, lower_ms, max_rows_per_key, right_name, upper_ms]",
        refused(PLAN.replace("{", "{\"typo\": 1, ")));
    assertEquals("join plan lacks field 'upper_ms'",
        refused(PLAN.replace("\"upper_ms\": 86400000, ", "")));
    assertEquals("join plan: lower_ms must be <= upper_ms, got lower_ms 1 and upper_ms 0",
        refused(PLAN.replace("\"lower_ms\": 0", "\"lower_ms\": 1").replace("86400000", "0")));
    assertEquals("join plan: allowed_lateness_ms must be >= 0, got -1",
        refused(PLAN.replace("600000", "-1")));
    assertEquals("join plan: max_rows_per_key must be >= 1, got 0",
        refused(PLAN.replace("10000,", "0,")));
    assertEquals("join plan: 'left_outer' must be true or false, got \"yes\"",
        refused(PLAN.replace("true", "\"yes\"")));
    assertEquals("join plan: 'upper_ms' must be a whole number, got 1.5",
        refused(PLAN.replace("86400000", "1.5")));
    assertEquals("join plan: 'right_name' must be a string, got 3",
        refused(PLAN.replace("\"refunds\"", "3")));
    assertTrue(refused("[]").startsWith("join plan is not a JSON object"));
    assertTrue(refused("{").startsWith("join plan is not valid JSON"));
  }

  private static String refused(String json) {
    String message = assertThrows(IllegalArgumentException.class, () -> JoinPlan.fromJson(json))
        .getMessage();
    assertTrue(!message.contains("\n"), message);
    return message;
  }
}
