package io.streamwarden.engine.json;

import java.time.DateTimeException;
import java.time.LocalDate;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Event times written as text: epoch milliseconds, or an ISO-8601 / RFC 3339 date-time with a
 * zone, read into epoch milliseconds and bounded to what every later step can hold.
 *
 * <p>Accepted: {@code YYYY-MM-DD}, a {@code T} ({@code t} or one space, as RFC 3339 allows), then
 * {@code hh:mm}, {@code hh:mm:ss} or {@code hh:mm:ss.f} with 1 to 9 fraction digits ({@code .} or
 * {@code ,}), then a zone: {@code Z} ({@code z}), {@code +hh:mm}, {@code +hhmm} or {@code +hh}
 * (or {@code -}; {@code -00:00} is UTC). The basic format ({@code 20261124T033300Z}) likewise. A
 * leap second ({@code :60}) reads as the last millisecond of its minute; digits past the
 * millisecond are cut off (times are kept in milliseconds). Refused: a time without a zone (its
 * instant is unknown), week and ordinal dates, {@code 24:00}, years outside 0001..9999.
 *
 * <p>{@link #parseMicros} reads the same texts into epoch microseconds (Spark's TIMESTAMP), a
 * leap second as the last microsecond of its minute and digits past the microsecond cut off;
 * its bounds are the same instants, {@link #MIN_MS} to the last microsecond of {@link #MAX_MS}.
 */
public final class EventTimes {
  /** 0001-01-01T00:00:00Z: the earliest event time accepted. */
  public static final long MIN_MS = -62_135_596_800_000L;
  /** 9999-12-31T23:59:59.999Z: the latest event time accepted. */
  public static final long MAX_MS = 253_402_300_799_999L;
  /** What {@link #parseMillis} returns for a text that is not an accepted time. */
  public static final long INVALID = Long.MIN_VALUE;

  private static final long DAY_US = 86_400_000_000L;
  private static final long MIN_US = MIN_MS * 1000;
  private static final long MAX_US = MAX_MS * 1000 + 999;

  private EventTimes() {}

  /** Epoch milliseconds of an ISO-8601 / RFC 3339 time with a zone, or {@link #INVALID}. */
  public static long parseMillis(UTF8String text) {
    return text == null ? INVALID : parse(text.toString());
  }

  /** Epoch microseconds of an ISO-8601 / RFC 3339 time with a zone, or {@link #INVALID}. */
  public static long parseMicros(UTF8String text) {
    return text == null ? INVALID : parseMicros(text.toString());
  }

  static long parse(String s) {
    long micros = parseMicros(s);
    return micros == INVALID ? INVALID : Math.floorDiv(micros, 1000);
  }

  /** Epoch microseconds of the text (which a caller may hand over without a String), or INVALID. */
  static long parseMicros(CharSequence s) {
    Cursor c = new Cursor(s);
    boolean basic = s.length() > 4 && Character.isDigit(s.charAt(4));
    int year = c.digits(4);
    if (!basic && !c.take('-')) {
      return INVALID;
    }
    int month = c.digits(2);
    if (!basic && !c.take('-')) {
      return INVALID;
    }
    int day = c.digits(2);
    if (!(c.take('T') || c.take('t') || (!basic && c.take(' ')))) {
      return INVALID;
    }
    int hour = c.digits(2);
    if (!basic && !c.take(':')) {
      return INVALID;
    }
    int minute = c.digits(2);
    int second = 0;
    long nanos = 0;
    if (basic ? c.digitNext() : c.take(':')) {
      second = c.digits(2);
      if (c.take('.') || c.take(',')) {
        int start = c.pos;
        long frac = c.number(9);
        int count = c.pos - start;
        if (count == 0) {
          return INVALID;
        }
        nanos = frac * (long) Math.pow(10, 9 - count);
      }
    }
    long offsetMinutes = zone(c, basic);
    if (c.failed || offsetMinutes == Long.MIN_VALUE || !c.atEnd() || year < 1 || hour > 23
        || minute > 59 || second > 60) {
      return INVALID;
    }
    long epochDay;
    try {
      epochDay = LocalDate.of(year, month, day).toEpochDay();
    } catch (DateTimeException e) {
      return INVALID;
    }
    long micros = second == 60 ? 59_999_999 : second * 1_000_000L + nanos / 1000L;
    long us = epochDay * DAY_US + (hour * 60L + minute - offsetMinutes) * 60_000_000L + micros;
    return us < MIN_US || us > MAX_US ? INVALID : us;
  }

  /** The zone's offset in minutes east of UTC, or Long.MIN_VALUE if there is none. */
  private static long zone(Cursor c, boolean basic) {
    if (c.take('Z') || c.take('z')) {
      return 0;
    }
    int sign = c.take('+') ? 1 : c.take('-') ? -1 : 0;
    if (sign == 0) {
      return Long.MIN_VALUE;
    }
    int h = c.digits(2);
    int m = 0;
    if (!c.atEnd()) {
      if (!basic) {
        c.take(':');
      }
      m = c.digits(2);
    }
    if (h > 23 || m > 59) {
      return Long.MIN_VALUE;
    }
    return sign * (h * 60L + m);
  }

  /** Reads a text left to right; any miss sets {@link #failed}. */
  private static final class Cursor {
    final CharSequence s;
    int pos;
    boolean failed;

    Cursor(CharSequence s) {
      this.s = s;
    }

    boolean take(char ch) {
      if (pos < s.length() && s.charAt(pos) == ch) {
        pos++;
        return true;
      }
      return false;
    }

    boolean digitNext() {
      return pos < s.length() && isDigit(s.charAt(pos));
    }

    boolean atEnd() {
      return pos == s.length();
    }

    int digits(int n) {
      int v = 0;
      for (int k = 0; k < n; k++) {
        if (!digitNext()) {
          failed = true;
          return 0;
        }
        v = v * 10 + (s.charAt(pos++) - '0');
      }
      return v;
    }

    /** Up to {@code max} digits as a number; digits past {@code max} are read and dropped. */
    long number(int max) {
      long v = 0;
      int count = 0;
      while (digitNext()) {
        if (count < max) {
          v = v * 10 + (s.charAt(pos) - '0');
        }
        pos++;
        count++;
      }
      if (count > max) {
        failed = true; // more than nanoseconds: not a time anyone wrote on purpose
      }
      return v;
    }

    private static boolean isDigit(char ch) {
      return ch >= '0' && ch <= '9';
    }
  }
}
