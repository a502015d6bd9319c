package io.streamwarden.engine.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Times written as ISO-8601 / RFC 3339 text: every form with a zone, bounded, nothing else. */
class EventTimesTest {
  private static final long AT_0333 = Instant.parse("2026-11-24T03:33:00Z").toEpochMilli();

  @Test
  void everyFormWithAZoneReadsAsItsInstant() {
    List<String> same = List.of("2026-11-24T03:33:00Z", "2026-11-24T03:33Z",
        "2026-11-24T03:33:00+0000", "2026-11-24T03:33:00+00:00", "2026-11-24T03:33:00+00",
        "2026-11-24T03:33:00-00:00", "2026-11-24t03:33:00z", "2026-11-24 03:33:00Z",
        "2026-11-24T04:33:00+01:00", "2026-11-24T04:33+0100", "2026-11-23T22:03:00-05:30",
        "20261124T033300Z", "20261124T0333Z", "20261124T043300+0100", "20261124T043300+01",
        "2026-11-24T03:33:00.000Z", "2026-11-24T03:33:00,0Z");
    for (String text : same) {
      assertEquals(AT_0333, EventTimes.parse(text), text);
    }
  }

  @Test
  void fractionsUpToNanosecondsAreCutToTheMillisecond() {
    assertEquals(AT_0333 + 123, EventTimes.parse("2026-11-24T03:33:00.123456789Z"));
    assertEquals(AT_0333 + 100, EventTimes.parse("2026-11-24T03:33:00.1Z"));
    assertEquals(AT_0333 + 999, EventTimes.parse("2026-11-24T03:33:00,9999Z"));
    assertEquals(AT_0333 + 120, EventTimes.parse("20261124T033300.12Z"));
  }

  @Test
  void aLeapSecondIsTheLastMillisecondOfItsMinute() {
    long end = Instant.parse("2016-12-31T23:59:59.999Z").toEpochMilli();
    assertEquals(end, EventTimes.parse("2016-12-31T23:59:60Z"));
  }

  @Test
  void whatIsNotAnInstantIsRefused() {
    List<String> refused = List.of("2026-11-24T03:33:00", "2026-11-24", "2026-11-24T03Z",
        "2026-11-24T3:33Z", "2026-11-24T03:33:00.Z", "2026-11-24T03:33:00.1234567891Z",
        "2026-11-24T24:00:00Z", "2026-11-24T03:60Z", "2026-02-30T00:00Z", "2026-13-01T00:00Z",
        "2026-11-24T03:33:00+24:00", "2026-11-24T03:33:00+01:60", "2026-11-24T03:33:00 Z",
        "2026-11-24T03:33:00Z ", " 2026-11-24T03:33:00Z", "2026-W48-2T03:33Z",
        "2026-328T03:33Z", "20261124T03:33:00Z", "2026-11-24T0333Z", "0000-01-01T00:00Z",
        "+12026-11-24T03:33Z", "", "1795491180000", "2026-11-24T03:33:00+0:00");
    for (String text : refused) {
      assertEquals(EventTimes.INVALID, EventTimes.parse(text), text);
    }
  }

  @Test
  void theBoundsAreYearsOneToNineThousandNineHundredNinetyNine() {
    assertEquals(EventTimes.MIN_MS, EventTimes.parse("0001-01-01T00:00:00Z"));
    assertEquals(EventTimes.MAX_MS, EventTimes.parse("9999-12-31T23:59:59.999Z"));
    assertEquals(EventTimes.MIN_MS, Instant.parse("0001-01-01T00:00:00Z").toEpochMilli());
    assertEquals(EventTimes.MAX_MS, Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli());
    // a zone that moves an instant past a bound takes it outside
    assertEquals(EventTimes.INVALID, EventTimes.parse("0001-01-01T00:00:00+01:00"));
    assertEquals(EventTimes.INVALID, EventTimes.parse("9999-12-31T23:59:59.999-01:00"));
  }
}
