package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.at;
import static io.streamwarden.engine.sessions.SessionTestUtilities.describe;
import static io.streamwarden.engine.sessions.SessionTestUtilities.valued;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.sessions.SessionTestUtilities.UserDriver;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The byte cap counts the records' bytes and the bytes of the values that {@code
 * count_distinct} and {@code collect_*} hold: a string its UTF-8 length, a long or double 8, a
 * boolean 1, and {@code collect_list} 8 more per value (its time). Events of 50 bytes with a
 * 10-byte string value, a cap of 300 bytes.
 */
class HeldBytesCapTest {
  private static final String TEN = "abcdefghij";

  private static UserDriver driver(String function) {
    return new UserDriver(SessionPlan.fromJson(SessionTestUtilities.planJson(30, 0, 10_000, 300,
        "[\"string\"]", "[{\"function\": \"" + function + "\", \"input\": 0}]")));
  }

  private static Event[] events(int n, String value) {
    Event[] events = new Event[n];
    for (int i = 0; i < n; i++) {
      events[i] = valued(at(i), value);
    }
    return events;
  }

  @Test
  void aCollectedListCountsEachValueAndItsTime() {
    UserDriver u = driver("collect_list");
    // 4 events: 200 + 4 * (10 + 8) = 272; a 5th would make 250 + 90 = 340
    List<Emitted> out = u.rawBatch(0, events(5, TEN));
    assertEquals(List.of("dead_letter 4m session_byte_cap"), describe(out));
    assertEquals("session would hold 250 bytes of records and 90 bytes of aggregate values, "
        + "over max_session_bytes 300", out.get(0).detail);
    assertEquals(List.of("session 0m..3m events=4 bytes=200 rev=0 truncated"),
        u.watermark(at(60)));
  }

  @Test
  void aCollectedSetOrDistinctCountCountsEachDistinctValueOnce() {
    for (String function : List.of("collect_set", "count_distinct")) {
      UserDriver u = driver(function);
      // 5 events: 250 + 10 = 260; a 6th would make 300 + 10 = 310
      assertEquals(List.of("dead_letter 5m session_byte_cap"),
          describe(u.rawBatch(0, events(6, TEN))), function);
    }
  }

  @Test
  void nullsAndOtherFunctionsHoldNothing() {
    UserDriver u = driver("collect_list");
    assertEquals(List.of(), describe(u.rawBatch(0, events(6, null))));
    UserDriver first = driver("first");
    assertEquals(List.of(), describe(first.rawBatch(0, events(6, TEN))));
  }

  @Test
  void aRecordWhoseValuesAloneGoOverTheCapStartsNoSession() {
    UserDriver u = driver("collect_list");
    List<Emitted> out = u.rawBatch(0, valued(at(0), "x".repeat(243)));
    assertEquals("record of 50 bytes with 251 bytes of aggregate values exceeds "
        + "max_session_bytes 300 on its own", out.get(0).detail);
    assertTrue(u.state.holdsNothing());
  }

  @Test
  void aBridgeCountsTheValuesOfTheSessionsItMergesOnce() {
    UserDriver u = new UserDriver(SessionPlan.fromJson(SessionTestUtilities.planJson(30, 60,
        10_000, 170, "[\"string\"]", "[{\"function\": \"collect_set\", \"input\": 0}]")));
    // two sessions holding the same value: 150 bytes of records + 10 held once = 160
    u.rawBatch(0, valued(at(0), TEN), valued(at(40), TEN));
    assertEquals(List.of(), describe(u.rawBatch(0, valued(at(20), TEN))));
    assertEquals(List.of("session 0m..40m events=3 bytes=150 rev=0"), u.watermark(at(200)));
  }
}
