package io.streamwarden.engine.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * A strict typed reader of JSON records: each declared type takes exactly its JSON form and
 * nothing that merely looks like it, and a record's first problem is told by a reason code and
 * a detail naming the field. Records are written here with ' for " (see {@link #json}).
 */
class RecordReaderTest {
  private static final String PAYMENTS = "account STRING, at TIMESTAMP, amount DOUBLE,"
      + " currency STRING, geo STRUCT<city: STRING>, tags ARRAY<STRING>";
  private static final String PAYMENTS_SPEC = spec(PAYMENTS, List.of("account", "geo.city"),
      "at", "ms");
  private static final long NOON_MS = Instant.parse("2026-01-01T12:00:00Z").toEpochMilli();

  @Nested
  class AGoodRecord {
    @Test
    void isReadIntoTheDeclaredTypesWithItsEventTimeAndNoReason() {
      Result r = read(PAYMENTS_SPEC, "{'account': 'a-1', 'at': '2026-01-01T12:00:00Z',"
          + " 'amount': 12.5, 'currency': 'EUR', 'geo': {'city': 'Oslo'}, 'tags': ['x', 'y']}");
      assertEquals(utf8("a-1"), r.get("account"));
      assertEquals(NOON_MS * 1000, r.get("at"));
      assertEquals(12.5, r.get("amount"));
      assertEquals(utf8("Oslo"), ((InternalRow) r.get("geo")).getUTF8String(0));
      assertEquals(List.of(utf8("x"), utf8("y")), strings((ArrayData) r.get("tags")));
      assertEquals(NOON_MS, r.timeMs());
      assertNull(r.reason());
      assertNull(r.detail());
    }

    @Test
    void returnsExactlySparksInternalValues() {
      String ddl = "s STRING, b BOOLEAN, t TINYINT, sm SMALLINT, i INT, l BIGINT, f FLOAT,"
          + " d DOUBLE, dec DECIMAL(10,2), ts TIMESTAMP, day DATE, st STRUCT<x: INT>,"
          + " a ARRAY<BIGINT>, m MAP<STRING, DOUBLE>";
      Result r = read(spec(ddl, List.of(), null, "ms"), "{'s': 'x', 'b': true, 't': -128,"
          + " 'sm': 32767, 'i': -2147483648, 'l': 9223372036854775807, 'f': 1.5, 'd': 2,"
          + " 'dec': 12.5, 'ts': '1970-01-01T00:00:01.000002Z', 'day': '1970-01-11',"
          + " 'st': {'x': 1}, 'a': [1, null], 'm': {'k': 0.5}}");
      assertInstanceOf(UTF8String.class, r.get("s"));
      assertEquals(Boolean.TRUE, r.get("b"));
      assertEquals((byte) -128, r.get("t"));
      assertEquals((short) 32767, r.get("sm"));
      assertEquals(Integer.MIN_VALUE, r.get("i"));
      assertEquals(Long.MAX_VALUE, r.get("l"));
      assertEquals(1.5f, r.get("f"));
      assertEquals(2.0, r.get("d"));
      Decimal dec = (Decimal) r.get("dec");
      assertEquals(1250L, dec.toUnscaledLong());
      assertEquals(2, dec.scale());
      assertEquals(10, dec.precision());
      assertEquals(1_000_002L, r.get("ts")); // micros
      assertEquals(10, r.get("day")); // days since 1970-01-01
      assertEquals(1, ((InternalRow) r.get("st")).getInt(0));
      ArrayData a = (ArrayData) r.get("a");
      assertEquals(2, a.numElements());
      assertEquals(1L, a.getLong(0));
      assertTrue(a.isNullAt(1));
      MapData m = (MapData) r.get("m");
      assertEquals(utf8("k"), m.keyArray().getUTF8String(0));
      assertEquals(0.5, m.valueArray().getDouble(0));
      assertNull(r.reason());
    }

    @Test
    void resultTypeIsTheDeclaredFieldsThenTimeReasonAndDetail() {
      StructType type = RecordReader.resultType(PAYMENTS_SPEC);
      assertEquals(List.of("account", "at", "amount", "currency", "geo", "tags", "_sw_ts_ms",
          "_sw_reason", "_sw_detail"), Arrays.asList(type.fieldNames()));
      assertEquals(DataTypes.LongType, type.apply("_sw_ts_ms").dataType());
      assertEquals(DataTypes.StringType, type.apply("_sw_detail").dataType());
      assertEquals(StructType.fromDDL(PAYMENTS).apply("geo").dataType(),
          type.apply("geo").dataType());
      assertTrue(Arrays.stream(type.fields()).allMatch(StructField::nullable));
    }

    @Test
    void stringsKeepEveryCharacterAsUtf8() {
      String spec = spec("s STRING", List.of(), null, "ms");
      assertEquals(utf8("é€😀\n\"x\""),
          read(spec, "{'s': '\\u00e9€😀\\n\\\"x\\\"'}").get("s"));
      assertEquals(utf8(""), read(spec, "{'s': ''}").get("s"));
    }

    @Test
    void decimalsTakeEveryNumberTheyHoldExactly() {
      String spec = spec("d DECIMAL(5,2)", List.of(), null, "ms");
      for (String number : List.of("123.45", "1e2", "0.10", "-999.99", "0", "12.500")) {
        Decimal d = (Decimal) read(spec, "{'d': " + number + "}").get("d");
        assertEquals(new java.math.BigDecimal(number).compareTo(d.toJavaBigDecimal()), 0);
        assertEquals(2, d.scale(), number);
      }
      Decimal wide = (Decimal) read(spec("d DECIMAL(38,10)", List.of(), null, "ms"),
          "{'d': 1234567890123456789012345678.0123456789}").get("d");
      assertEquals("1234567890123456789012345678.0123456789", wide.toJavaBigDecimal().toString());
    }

    @Test
    void fieldsAreFoundInAnyOrderTheRecordWritesThem() {
      Result inOrder = read(PAYMENTS_SPEC, "{'account': 'a', 'at': '2026-01-01T12:00:00Z',"
          + " 'amount': 1, 'currency': 'EUR', 'geo': {'city': 'c'}, 'tags': []}");
      Result shuffled = read(PAYMENTS_SPEC, "{'tags': [], 'x': 0, 'geo': {'city': 'c'},"
          + " 'currency': 'EUR', 'amount': 1, 'at': '2026-01-01T12:00:00Z', 'account': 'a'}");
      for (String name : RecordReader.resultType(PAYMENTS_SPEC).fieldNames()) {
        assertEquals(String.valueOf(inOrder.get(name)), String.valueOf(shuffled.get(name)));
      }
    }

    @Test
    void eachSpecKeepsItsOwnReaderOnAThread() {
      String other = spec("account BIGINT", List.of(), null, "ms");
      for (int i = 0; i < 3; i++) {
        assertEquals(utf8("a"), read(PAYMENTS_SPEC, "{'account': 'a'}").get("account"));
        assertEquals(5L, read(other, "{'account': 5}").get("account"));
      }
    }

    @Test
    void aNullRecordIsNull() {
      assertNull(RecordReader.read(null, utf8(PAYMENTS_SPEC)));
    }
  }

  @Nested
  class NothingIsCoerced {
    @Test
    void eachTypeRefusesWhatMerelyLooksLikeIt() {
      List<String[]> cases = List.of(
          new String[] {"STRING", "5", "a STRING (a JSON string), got the number 5"},
          new String[] {"STRING", "true", "a STRING (a JSON string), got true"},
          new String[] {"STRING", "{'a': 1}", "a STRING (a JSON string), got an object"},
          new String[] {"STRING", "['a']", "a STRING (a JSON string), got an array"},
          new String[] {"BOOLEAN", "'true'", "a BOOLEAN (true or false), got the string \"true\""},
          new String[] {"BOOLEAN", "1", "a BOOLEAN (true or false), got the number 1"},
          new String[] {"INT", "12.0",
              "an INT (a JSON integer from -2147483648 to 2147483647), got the number 12.0"},
          new String[] {"INT", "1e3",
              "an INT (a JSON integer from -2147483648 to 2147483647), got the number 1e3"},
          new String[] {"INT", "'12'",
              "an INT (a JSON integer from -2147483648 to 2147483647), got the string \"12\""},
          new String[] {"INT", "2147483648",
              "an INT (a JSON integer from -2147483648 to 2147483647), got the number 2147483648"},
          new String[] {"TINYINT", "128",
              "a TINYINT (a JSON integer from -128 to 127), got the number 128"},
          new String[] {"SMALLINT", "-32769",
              "a SMALLINT (a JSON integer from -32768 to 32767), got the number -32769"},
          new String[] {"BIGINT", "9223372036854775808", "a BIGINT (a JSON integer from"
              + " -9223372036854775808 to 9223372036854775807), got the number"
              + " 9223372036854775808"},
          new String[] {"DOUBLE", "'12.5'", "a DOUBLE (a JSON number), got the string \"12.5\""},
          new String[] {"DOUBLE", "'NaN'", "a DOUBLE (a JSON number), got the string \"NaN\""},
          new String[] {"DOUBLE", "1e400",
              "a DOUBLE (a JSON number), got the number 1e400, beyond a DOUBLE's range"},
          new String[] {"FLOAT", "1e39",
              "a FLOAT (a JSON number), got the number 1e39, beyond a FLOAT's range"},
          new String[] {"DECIMAL(5,2)", "1.234", "a DECIMAL(5,2) (a JSON number with at most 3"
              + " digits before the point and 2 after), got the number 1.234"},
          new String[] {"DECIMAL(5,2)", "1000", "a DECIMAL(5,2) (a JSON number with at most 3"
              + " digits before the point and 2 after), got the number 1000"},
          new String[] {"DECIMAL(5,2)", "1e999999999", "a DECIMAL(5,2) (a JSON number with at"
              + " most 3 digits before the point and 2 after), got the number 1e999999999"},
          new String[] {"DECIMAL(5,2)", "'1.5'", "a DECIMAL(5,2) (a JSON number with at most 3"
              + " digits before the point and 2 after), got the string \"1.5\""},
          new String[] {"TIMESTAMP", "1767268800000", "a TIMESTAMP (a JSON string, an ISO-8601"
              + " time with a zone), got the number 1767268800000"},
          new String[] {"DATE", "'2026-02-30'",
              "a DATE (a JSON string yyyy-MM-dd), got the string \"2026-02-30\""},
          new String[] {"DATE", "'2026-1-01'",
              "a DATE (a JSON string yyyy-MM-dd), got the string \"2026-1-01\""},
          new String[] {"DATE", "'2026-01-01T00:00:00Z'", "a DATE (a JSON string yyyy-MM-dd),"
              + " got the string \"2026-01-01T00:00:00Z\""},
          new String[] {"STRUCT<city: STRING>", "'Oslo'",
              "a STRUCT<city: STRING> (a JSON object), got the string \"Oslo\""},
          new String[] {"ARRAY<STRING>", "'x'",
              "an ARRAY<STRING> (a JSON array), got the string \"x\""},
          new String[] {"ARRAY<STRING>", "{}", "an ARRAY<STRING> (a JSON array), got an object"},
          new String[] {"MAP<STRING, INT>", "[]",
              "a MAP<STRING, INT> (a JSON object), got an array"});
      for (String[] c : cases) {
        Result r = read(spec("v " + c[0], List.of(), null, "ms"), "{'v': " + c[1] + "}");
        assertEquals(RecordReader.WRONG_TYPE, r.reason(), c[0] + " " + c[1]);
        assertEquals("'v' must be " + c[2], r.detail());
        assertNull(r.get("v"));
      }
    }

    @Test
    void theDetailShowsTheValueAsSentCutToSixtyCharacters() {
      Result r = read(spec("n INT", List.of(), null, "ms"), "{'n': '" + "9".repeat(100) + "'}");
      assertEquals("'n' must be an INT (a JSON integer from -2147483648 to 2147483647), got"
          + " the string \"" + "9".repeat(60) + "...\"", r.detail());
      Result quoted = read(spec("n INT", List.of(), null, "ms"), "{'n': 'say \\\"hi\\\"'}");
      assertTrue(quoted.detail().endsWith("got the string \"say \\\"hi\\\"\""), quoted.detail());
    }

    @Test
    void aStringThatIsNoTimeIsAnInvalidTimestampNotAWrongType() {
      Result r = read(spec("at TIMESTAMP", List.of(), null, "ms"),
          "{'at': '2026-13-01T00:00:00Z'}");
      assertEquals(RecordReader.INVALID_TIMESTAMP, r.reason());
      assertEquals("'at' \"2026-13-01T00:00:00Z\" is not an ISO-8601 time with a zone"
          + " (e.g. 2026-01-01T12:00:00Z)", r.detail());
      for (String text : List.of("2026-01-01T12:00:00", "2026-01-01", "0000-12-31T00:00:00Z",
          "1767268800000", "")) {
        assertEquals(RecordReader.INVALID_TIMESTAMP,
            read(spec("at TIMESTAMP", List.of(), null, "ms"), "{'at': '" + text + "'}").reason(),
            text);
      }
    }

    @Test
    void jsonNullIsANullValueOfAnyType() {
      Result r = read(spec("s STRING, i INT, g STRUCT<c: STRING>, a ARRAY<INT>", List.of(),
          null, "ms"), "{'s': null, 'i': null, 'g': null, 'a': null}");
      assertNull(r.reason());
      assertNull(r.get("s"));
      assertNull(r.get("g"));
      assertNull(r.get("a"));
    }
  }

  @Nested
  class StructsArraysAndMaps {
    private final String spec = spec("order STRUCT<id: STRING, lines: ARRAY<STRUCT<sku: STRING,"
        + " qty: INT>>>, attrs MAP<STRING, ARRAY<INT>>", List.of("order.id"), null, "ms");

    @Test
    void namesNotDeclaredAreSkippedAtEveryLevel() {
      Result r = read(spec, "{'x': {'deep': [1, {'y': 'z'}]}, 'order': {'noise': [[]],"
          + " 'id': 'o1', 'lines': [{'sku': 'a', 'qty': 2, 'extra': {'q': 1}}]},"
          + " 'attrs': {'k': [1, 2]}, 'tail': null}");
      assertNull(r.detail());
      InternalRow order = (InternalRow) r.get("order");
      assertEquals(utf8("o1"), order.getUTF8String(0));
      InternalRow line = order.getArray(1).getStruct(0, 2);
      assertEquals(utf8("a"), line.getUTF8String(0));
      assertEquals(2, line.getInt(1));
      MapData attrs = (MapData) r.get("attrs");
      assertEquals(utf8("k"), attrs.keyArray().getUTF8String(0));
      assertArrayEquals(new int[] {1, 2}, attrs.valueArray().getArray(0).toIntArray());
    }

    @Test
    void aValueInsideIsNamedByItsPath() {
      assertEquals("'order.lines[1].qty' must be an INT (a JSON integer from -2147483648 to"
          + " 2147483647), got the string \"2\"",
          read(spec, "{'order': {'id': 'o', 'lines': [{'qty': 1}, {'qty': '2'}]}}").detail());
      assertEquals("'attrs[\"k\"][0]' must be an INT (a JSON integer from -2147483648 to"
          + " 2147483647), got true",
          read(spec, "{'order': {'id': 'o'}, 'attrs': {'j': [], 'k': [true]}}").detail());
      assertEquals("'tags[2]' must be a STRING (a JSON string), got the number 3",
          read(PAYMENTS_SPEC, "{'account': 'a', 'at': '2026-01-01T12:00:00Z',"
              + " 'geo': {'city': 'c'}, 'tags': ['1', '2', 3]}").detail());
    }

    @Test
    void nullElementsAndEmptyContainersAreKept() {
      Result r = read(spec, "{'order': {'id': 'o', 'lines': [null, {}]}, 'attrs': {}}");
      assertNull(r.reason());
      ArrayData lines = ((InternalRow) r.get("order")).getArray(1);
      assertEquals(2, lines.numElements());
      assertTrue(lines.isNullAt(0));
      assertTrue(lines.getStruct(1, 2).isNullAt(0));
      assertEquals(0, ((MapData) r.get("attrs")).numElements());
    }

    @Test
    void aRecordWithAProblemKeepsTheFieldsItRead() {
      Result r = read(PAYMENTS_SPEC, "{'account': 'a', 'at': '2026-01-01T12:00:00Z',"
          + " 'amount': '1', 'currency': 'EUR', 'geo': {'city': 'c'}}");
      assertEquals(RecordReader.WRONG_TYPE, r.reason());
      assertEquals(utf8("a"), r.get("account"));
      assertNull(r.get("amount"));
      assertEquals(utf8("EUR"), r.get("currency"));
      assertEquals(NOON_MS, r.timeMs());
    }
  }

  @Nested
  class RequiredFields {
    @Test
    void aRequiredFieldAbsentIsMissingAndNullIsNull() {
      assertEquals("required field 'account' is missing", read(PAYMENTS_SPEC,
          "{'at': '2026-01-01T12:00:00Z', 'geo': {'city': 'c'}}").detail());
      Result r = read(PAYMENTS_SPEC,
          "{'account': null, 'at': '2026-01-01T12:00:00Z', 'geo': {'city': 'c'}}");
      assertEquals(RecordReader.MISSING_FIELD, r.reason());
      assertEquals("required field 'account' is null", r.detail());
    }

    @Test
    void aDottedPathReachesIntoStructs() {
      String at = "'account': 'a', 'at': '2026-01-01T12:00:00Z'";
      assertEquals("required field 'geo.city' is missing",
          read(PAYMENTS_SPEC, "{" + at + ", 'geo': {}}").detail());
      assertEquals("required field 'geo.city' is null",
          read(PAYMENTS_SPEC, "{" + at + ", 'geo': {'city': null}}").detail());
      assertEquals("required field 'geo.city' is missing",
          read(PAYMENTS_SPEC, "{" + at + ", 'geo': null}").detail());
      assertEquals("required field 'geo.city' is missing", read(PAYMENTS_SPEC, "{" + at + "}")
          .detail());
      assertEquals("'geo' must be a STRUCT<city: STRING> (a JSON object), got the string"
          + " \"Oslo\"", read(PAYMENTS_SPEC, "{" + at + ", 'geo': 'Oslo'}").detail());
    }

    @Test
    void aRequiredFieldOfTheWrongTypeIsAWrongType() {
      Result r = read(PAYMENTS_SPEC,
          "{'account': 7, 'at': '2026-01-01T12:00:00Z', 'geo': {'city': 'c'}}");
      assertEquals(RecordReader.WRONG_TYPE, r.reason());
      assertEquals("'account' must be a STRING (a JSON string), got the number 7", r.detail());
    }

    @Test
    void fieldsNotRequiredMayBeMissingOrNull() {
      Result r = read(PAYMENTS_SPEC, "{'account': 'a', 'at': '2026-01-01T12:00:00Z',"
          + " 'amount': null, 'geo': {'city': 'c'}}");
      assertNull(r.reason());
      assertNull(r.get("amount"));
      assertNull(r.get("tags"));
    }
  }

  @Nested
  class EventTime {
    @Test
    void integersAreEpochTimeInTheSpecsUnit() {
      long ms = 1_767_268_800_123L;
      assertEquals(ms - 123, timeOf("BIGINT", "s", ms / 1000));
      assertEquals(ms, timeOf("BIGINT", "ms", ms));
      assertEquals(ms, timeOf("BIGINT", "us", ms * 1000 + 999)); // the floor
      assertEquals(-1L, timeOf("BIGINT", "us", -1)); // the floor, before 1970 too
      assertEquals(ms - 123, timeOf("INT", "s", ms / 1000));
      assertEquals(1_000L, timeOf("INT", "ms", 1000));
      Result r = read(spec("at BIGINT", List.of(), "at", "s"), "{'at': 5}");
      assertEquals(5L, r.get("at")); // the field keeps what was sent
      assertEquals(5000L, r.timeMs());
    }

    @Test
    void aTimestampIsReadWithItsOffsetAndFractionToTheMicrosecond() {
      String spec = spec("at TIMESTAMP", List.of(), "at", "ms");
      Result r = read(spec, "{'at': '2026-01-01T13:00:00.123456789+01:00'}");
      assertEquals(NOON_MS * 1000 + 123_456, r.get("at"));
      assertEquals(NOON_MS + 123, r.timeMs());
      Result before = read(spec, "{'at': '1969-12-31T23:59:59.9999Z'}");
      assertEquals(-100L, before.get("at"));
      assertEquals(-1L, before.timeMs());
      assertEquals(NOON_MS, read(spec, "{'at': '2026-01-01T06:30:00-05:30'}").timeMs());
    }

    @Test
    void timesOutsideTheAcceptedRangeAreInvalid() {
      Result r = read(spec("at BIGINT", List.of(), "at", "ms"), "{'at': 99999999999999999}");
      assertEquals(RecordReader.INVALID_TIMESTAMP, r.reason());
      assertEquals("'at' 99999999999999999 (ms) is outside the event times accepted,"
          + " 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z", r.detail());
      assertNull(r.timeMs());
      assertEquals(99999999999999999L, r.get("at"));
      assertEquals(RecordReader.INVALID_TIMESTAMP, reasonOf("BIGINT", "s", "9223372036854775"));
      assertEquals(RecordReader.INVALID_TIMESTAMP,
          reasonOf("BIGINT", "us", "-9223372036854775808"));
      assertEquals(RecordReader.INVALID_TIMESTAMP,
          reasonOf("BIGINT", "ms", "99999999999999999999"));
      assertEquals(RecordReader.INVALID_TIMESTAMP, reasonOf("BIGINT", "ms",
          Long.toString(EventTimes.MAX_MS + 1)));
      assertEquals(null, reasonOf("BIGINT", "ms", Long.toString(EventTimes.MIN_MS)));
      assertEquals(RecordReader.WRONG_TYPE, reasonOf("INT", "ms", "2147483648"));
      assertEquals(RecordReader.WRONG_TYPE, reasonOf("BIGINT", "ms", "1.5e12"));
      assertEquals(RecordReader.INVALID_TIMESTAMP, read(spec("at TIMESTAMP", List.of(), "at",
          "ms"), "{'at': '10000-01-01T00:00:00Z'}").reason());
    }

    @Test
    void aTimeFieldNullOrAbsentIsMissing() {
      String spec = spec("id STRING, meta STRUCT<at: TIMESTAMP>", List.of(), "meta.at", "ms");
      Result r = read(spec, "{'id': 'x'}");
      assertEquals(RecordReader.MISSING_FIELD, r.reason());
      assertEquals("time field 'meta.at' is missing", r.detail());
      assertEquals("time field 'meta.at' is null",
          read(spec, "{'meta': {'at': null}}").detail());
      assertEquals(NOON_MS, read(spec, "{'meta': {'at': '2026-01-01T12:00:00Z'}}").timeMs());
    }

    private Long timeOf(String type, String unit, long value) {
      Result r = read(spec("at " + type, List.of(), "at", unit), "{'at': " + value + "}");
      assertNull(r.detail());
      return r.timeMs();
    }

    private String reasonOf(String type, String unit, String value) {
      return read(spec("at " + type, List.of(), "at", unit), "{'at': " + value + "}").reason();
    }
  }

  @Nested
  class MalformedRecords {
    @Test
    void aRecordThatIsNotExactlyOneObjectIsMalformedInRecordShapesWords() {
      assertMalformed("record is not a JSON object (it starts with '[')", "[1]");
      assertMalformed("record has more after its JSON object, at byte 3 (one JSON object per"
          + " record)", "{} {}");
      assertMalformed("record uses single quotes (at byte 1), which JSON does not allow",
          "{'a': 1}");
      assertMalformed("record ends inside its JSON object (cut short?)", "{\"account\": \"a");
      assertMalformed("record is empty", "");
      assertMalformed("a string holds an unpaired surrogate escape (\\ud800) at byte 13, which"
          + " is not Unicode text", "{\"account\": \"\\ud800\"}");
    }

    @Test
    void whatJacksonRefusesIsMalformedWithoutJavaNames() {
      assertMalformed("record is not valid JSON: the name 'account' is given twice in one"
          + " object (near byte 26)", "{\"account\": \"a\", \"account\": \"b\"}");
      assertMalformed("record is not valid JSON: Non-standard token 'NaN' (near byte 14)",
          "{\"amount\": NaN}");
      assertMalformed("record is not valid JSON: Unrecognized token 'tru': was expecting (JSON"
          + " String, Number, Array, Object or token 'null', 'true' or 'false') (near byte 11)",
          "{\"amount\": tru}");
      Result nested = read(PAYMENTS_SPEC, "{'geo': {'city': 'a', 'x': {'q': 1, 'q': 2}}}");
      assertEquals(RecordReader.MALFORMED_JSON, nested.reason());
      assertTrue(nested.detail().contains("the name 'q' is given twice"), nested.detail());
    }

    @Test
    void bytesThatAreNotUtf8AreMalformedNotACrash() {
      byte[] bytes = "{\"account\": \"a\u0000\"}".getBytes(StandardCharsets.UTF_8);
      bytes[bytes.length - 3] = (byte) 0xff;
      InternalRow row = RecordReader.read(UTF8String.fromBytes(bytes), utf8(PAYMENTS_SPEC));
      Result r = new Result(RecordReader.resultType(PAYMENTS_SPEC), row);
      assertEquals(RecordReader.MALFORMED_JSON, r.reason());
      assertTrue(r.detail().startsWith("record is not valid JSON: Invalid UTF-8"), r.detail());
    }

    @Test
    void aMalformedRecordKeepsNoFields() {
      Result r = read(PAYMENTS_SPEC, "{\"account\": \"a\", \"at\": \"2026-01-01T12:00:00Z\","
          + " \"amount\": NaN}", false);
      assertNull(r.get("account"));
      assertNull(r.timeMs());
    }

    private void assertMalformed(String detail, String record) {
      Result r = read(PAYMENTS_SPEC, record, false);
      assertEquals(RecordReader.MALFORMED_JSON, r.reason(), record);
      assertEquals(detail, r.detail());
    }
  }

  @Nested
  class WhichProblemIsTold {
    @Test
    void theFirstInDeclaredOrderNotInTheOrderWritten() {
      Result r = read(PAYMENTS_SPEC, "{'tags': [1], 'currency': 5, 'amount': 'x',"
          + " 'at': '2026-01-01T12:00:00Z', 'account': 'a', 'geo': {'city': 'c'}}");
      assertEquals("'amount' must be a DOUBLE (a JSON number), got the string \"x\"",
          r.detail());
    }

    @Test
    void aMissingRequiredFieldInItsPlace() {
      Result r = read(PAYMENTS_SPEC, "{'amount': 'x', 'at': '2026-01-01T12:00:00Z'}");
      assertEquals("required field 'account' is missing", r.detail());
      Result later = read(PAYMENTS_SPEC, "{'account': 'a', 'at': '2026-01-01T12:00:00Z',"
          + " 'tags': [1]}");
      assertEquals("required field 'geo.city' is missing", later.detail());
    }

    @Test
    void depthFirstThroughStructsAndArrays() {
      String spec = spec("a STRUCT<x: INT, y: INT>, b ARRAY<STRUCT<p: INT, q: INT>>",
          List.of(), null, "ms");
      assertEquals("'a.x' must be an INT (a JSON integer from -2147483648 to 2147483647), got"
          + " true", read(spec, "{'b': [{'p': true}], 'a': {'y': true, 'x': true}}").detail());
      assertEquals("'b[0].q' must be an INT (a JSON integer from -2147483648 to 2147483647),"
          + " got true", read(spec, "{'b': [{'q': true}, {'p': true}]}").detail());
    }

    @Test
    void malformedBeforeEverything() {
      Result r = read(PAYMENTS_SPEC, "{\"amount\": \"x\", \"tags\": [1, NaN]}", false);
      assertEquals(RecordReader.MALFORMED_JSON, r.reason());
    }
  }

  @Nested
  class Specs {
    @Test
    void aSpecThatCannotBeReadIsRefusedSayingWhatToChange() {
      assertRefused("time field 'account' is a STRING; an event time is a TIMESTAMP, or a"
          + " BIGINT or INT of epoch time in time_unit", spec(PAYMENTS, List.of(), "account",
          "ms"));
      assertRefused("required field 'geo.zip': 'geo' declares no field 'zip'",
          spec(PAYMENTS, List.of("geo.zip"), null, "ms"));
      assertRefused("required field 'tags.x' goes into 'tags', an ARRAY<STRING>; a path goes"
          + " through structs only", spec(PAYMENTS, List.of("tags.x"), null, "ms"));
      assertRefused("the spec's 'time_unit' is 'ns'; write s, ms or us",
          spec(PAYMENTS, List.of(), "at", "ns"));
      assertRefused("the spec has an unknown key 'requires'; known keys are schema, required,"
          + " time and time_unit", "{\"schema\": " + StructType.fromDDL(PAYMENTS).json()
          + ", \"requires\": []}");
      assertRefused("field 'm' is a MAP<INT, STRING>; a JSON object's names are strings,"
          + " declare MAP<STRING, ...>", spec("m MAP<INT, STRING>", List.of(), null, "ms"));
      assertRefused("field 'b[]' is a BINARY, which a JSON record does not hold; declare"
          + " STRING, BOOLEAN, an integer or fractional type, DECIMAL, TIMESTAMP, DATE, STRUCT,"
          + " ARRAY or MAP<STRING, ...>", spec("b ARRAY<BINARY>", List.of(), null, "ms"));
      assertRefused("the schema declares '_sw_reason', a name the reader adds to its result;"
          + " rename that field", spec("_sw_reason STRING", List.of(), null, "ms"));
    }

    private void assertRefused(String message, String spec) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> RecordReader.resultType(spec));
      assertEquals(message, e.getMessage());
    }
  }

  @Nested
  class AsASparkColumn {
    private final Expression expression = ExpressionUtils.expression(RecordReader.column(
        ExpressionUtils.column(new BoundReference(0, DataTypes.StringType, true)),
        PAYMENTS_SPEC));
    private final String record = json("{'account': 'a', 'at': '2026-01-01T12:00:00Z',"
        + " 'geo': {'city': 'c'}, 'amount': '1'}");

    @Test
    void isEvaluatedByTheInterpreter() {
      InternalRow row = (InternalRow) expression.eval(new GenericInternalRow(
          new Object[] {utf8(record)}));
      Result r = new Result(RecordReader.resultType(PAYMENTS_SPEC), row);
      assertEquals(utf8("a"), r.get("account"));
      assertEquals(RecordReader.WRONG_TYPE, r.reason());
      assertNull(expression.eval(new GenericInternalRow(new Object[] {null})));
    }

    @Test
    void isEvaluatedByGeneratedCode() {
      UnsafeProjection projection = UnsafeProjection.create(expression);
      InternalRow out = projection.apply(new GenericInternalRow(new Object[] {utf8(record)}));
      InternalRow row = out.getStruct(0, 9);
      assertEquals(utf8("a"), row.getUTF8String(0));
      assertEquals(NOON_MS, row.getLong(6));
      assertEquals(utf8(RecordReader.WRONG_TYPE), row.getUTF8String(7));
    }
  }

  // --- helpers

  /** A spec as Python writes it: the schema in StructType's JSON, the rest by name. */
  static String spec(String ddl, List<String> required, String time, String unit) {
    String paths = required.stream().map(p -> "\"" + p + "\"").collect(Collectors.joining(","));
    return "{\"schema\": " + StructType.fromDDL(ddl).json() + ", \"required\": [" + paths + "]"
        + (time == null ? "" : ", \"time\": \"" + time + "\"") + ", \"time_unit\": \"" + unit
        + "\"}";
  }

  /** A record written with ' for ", so that it reads as JSON in a Java string. */
  static String json(String singleQuoted) {
    return singleQuoted.replace('\'', '"');
  }

  static Result read(String spec, String record) {
    return read(spec, record, true);
  }

  static Result read(String spec, String record, boolean singleQuoted) {
    InternalRow row = RecordReader.read(utf8(singleQuoted ? json(record) : record), utf8(spec));
    return new Result(RecordReader.resultType(spec), row);
  }

  static UTF8String utf8(String text) {
    return UTF8String.fromString(text);
  }

  static List<UTF8String> strings(ArrayData array) {
    return Arrays.stream(array.toObjectArray(DataTypes.StringType))
        .map(UTF8String.class::cast).toList();
  }

  /** A result row, its fields by name. */
  record Result(StructType type, InternalRow row) {
    Object get(String name) {
      int i = type.fieldIndex(name);
      return row.isNullAt(i) ? null : row.get(i, type.fields()[i].dataType());
    }

    Long timeMs() {
      return (Long) get("_sw_ts_ms");
    }

    String reason() {
      Object reason = get("_sw_reason");
      return reason == null ? null : reason.toString();
    }

    String detail() {
      Object detail = get("_sw_detail");
      return detail == null ? null : detail.toString();
    }
  }
}
