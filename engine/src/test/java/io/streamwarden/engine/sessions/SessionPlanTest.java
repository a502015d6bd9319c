package io.streamwarden.engine.sessions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The plan Python builds, read from JSON: what it holds, and the plans it refuses, by name. */
class SessionPlanTest {
  private static final String BASE = "\"gap_ms\": 1200000, \"allowed_lateness_ms\": 3600000, "
      + "\"max_events\": 300, \"max_session_bytes\": 4000000";

  private static SessionPlan plan(String more) {
    return SessionPlan.fromJson("{" + BASE + (more.isEmpty() ? "" : ", " + more) + "}");
  }

  private static String refusal(String more) {
    return assertThrows(IllegalArgumentException.class, () -> plan(more)).getMessage();
  }

  @Test
  void aPlanReadsItsCapsInputsAggregatesAndWhetherItKeepsState() {
    SessionPlan p = plan("\"history_lateness_ms\": 0, \"inputs\": [\"double\", \"string\"], "
        + "\"aggregates\": [{\"function\": \"sum\", \"input\": 0}, {\"function\": \"count\"}, "
        + "{\"function\": \"collect_set\", \"input\": 1}], \"keep_state\": true}");
    assertEquals(300, p.maxEvents);
    assertEquals(4_000_000, p.maxSessionBytes);
    assertTrue(p.keepState);
    assertEquals(2, p.aggregates.inputCount());
    assertEquals(3, p.aggregates.size());
    assertEquals("sum(value_0 double)", p.aggregates.describe(0));
    assertEquals("count()", p.aggregates.describe(1));
    assertEquals(-1, p.aggregates.inputOf(1));
    assertTrue(p.aggregates.holdsValues());
  }

  @Test
  void inputsAndAggregatesMayBeLeftOut() {
    SessionPlan p = plan("");
    assertEquals(0, p.aggregates.inputCount());
    assertEquals(0, p.aggregates.size());
    assertFalse(p.keepState);
    assertFalse(p.historyOn());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "'\"inputs\": [\"int\"]' | inputs[0] is \"int\", not one of",
      "'\"inputs\": [\"long\"], \"aggregates\": [{\"function\": \"median\", \"input\": 0}]'"
          + " | aggregates[0]: function \"median\" is not one of count, sum",
      "'\"inputs\": [\"string\"], \"aggregates\": [{\"function\": \"sum\", \"input\": 0}]'"
          + " | aggregates[0]: sum needs a long or double input, input 0 is string",
      "'\"inputs\": [\"boolean\"], \"aggregates\": [{\"function\": \"avg\", \"input\": 0}]'"
          + " | avg needs a long or double input",
      "'\"inputs\": [\"long\"], \"aggregates\": [{\"function\": \"max\", \"input\": 1}]'"
          + " | aggregates[0]: input 1 is not an index of the plan's 1 inputs (0..0)",
      "'\"aggregates\": [{\"function\": \"first\"}]' | aggregates[0]: first needs an \"input\"",
      "'\"aggregates\": [{\"function\": \"count\", \"column\": 0}]'"
          + " | aggregates[0] has an unknown key 'column'",
      "'\"aggregates\": {\"function\": \"count\"}' | 'aggregates' must be a list",
      "'\"collect_urls\": true' | unknown field 'collect_urls'",
      "'\"keep_state\": \"yes\"' | 'keep_state' must be true or false",
      "'\"history_lateness_ms\": 60000' | history_lateness_ms must be 0 (off) or above",
      "'\"history_lateness_ms\": 7200000, \"inputs\": [\"long\"], \"aggregates\": "
          + "[{\"function\": \"sum\", \"input\": 0}]' | history_lateness_ms needs keep_state"})
  void anInvalidPlanIsRefusedNamingWhatIsWrong(String more, String message) {
    String refusal = refusal(more);
    assertTrue(refusal.contains(message), refusal);
  }

  @Test
  void aPlanWithoutItsCapsIsRefused() {
    String refusal = assertThrows(IllegalArgumentException.class, () -> SessionPlan.fromJson(
        "{\"gap_ms\": 1, \"allowed_lateness_ms\": 0, \"max_session_bytes\": 1}")).getMessage();
    assertEquals("session plan lacks field 'max_events'", refusal);
  }
}
