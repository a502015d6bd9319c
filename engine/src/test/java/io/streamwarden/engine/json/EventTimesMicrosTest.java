package io.streamwarden.engine.json;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.List;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/** The same texts as {@link EventTimesTest}, read to the microsecond (Spark's TIMESTAMP). */
class EventTimesMicrosTest {
  private static final long AT_0333_US =
      Instant.parse("2026-11-24T03:33:00Z").toEpochMilli() * 1000;

  @Test
  void fractionsAreCutToTheMicrosecond() {
    assertEquals(AT_0333_US + 123_456, micros("2026-11-24T03:33:00.123456789Z"));
    assertEquals(AT_0333_US + 100_000, micros("2026-11-24T03:33:00.1Z"));
    assertEquals(AT_0333_US + 1, micros("2026-11-24T04:33:00,000001+01:00"));
    assertEquals(-1L, micros("1969-12-31T23:59:59.9999999Z"));
  }

  @Test
  void millisecondsAreTheFloorOfTheMicroseconds() {
    for (String text : List.of("2026-11-24T03:33:00.123999Z", "1969-12-31T23:59:59.9999Z",
        "2016-12-31T23:59:60Z", "0001-01-01T00:00:00.0005Z")) {
      assertEquals(Math.floorDiv(micros(text), 1000), EventTimes.parse(text), text);
    }
  }

  @Test
  void aLeapSecondIsTheLastMicrosecondOfItsMinute() {
    long end = Instant.parse("2016-12-31T23:59:59.999999Z").toEpochMilli() * 1000 + 999;
    assertEquals(end, micros("2016-12-31T23:59:60Z"));
  }

  @Test
  void theBoundsAreTheSameInstants() {
    assertEquals(EventTimes.MIN_MS * 1000, micros("0001-01-01T00:00:00Z"));
    assertEquals(EventTimes.MAX_MS * 1000 + 999, micros("9999-12-31T23:59:59.999999Z"));
    assertEquals(EventTimes.INVALID, micros("0001-01-01T00:00:00+00:01"));
    assertEquals(EventTimes.INVALID, micros("9999-12-31T23:59:59.999999-00:01"));
    assertEquals(EventTimes.INVALID, micros("2026-11-24T03:33:00"));
    assertEquals(EventTimes.INVALID, EventTimes.parseMicros((UTF8String) null));
  }

  private static long micros(String text) {
    return EventTimes.parseMicros(UTF8String.fromString(text));
  }
}
