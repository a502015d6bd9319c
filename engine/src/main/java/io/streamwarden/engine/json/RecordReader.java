package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A strict reader of JSON records into the types their schema declares: each record is read
 * once, nothing is coerced (a number is no STRING, {@code "12"} no INT, {@code 12.0} no BIGINT),
 * and the first problem is reported with a reason code and a detail naming the field.
 *
 * <p>The spec ({@link ReaderSpec}) is {@code {"schema": <StructType JSON>, "required":
 * ["account", "geo.city"], "time": "at", "time_unit": "ms"}}. The result ({@link #resultType})
 * is the declared fields, then {@code _sw_ts_ms} (the event time in epoch milliseconds),
 * {@code _sw_reason} and {@code _sw_detail} (null for a good record). A record with a problem
 * keeps the fields read before and around it; a malformed one keeps none.
 *
 * <p>The problem reported: {@code malformed_json} first (not exactly one JSON object, as {@link
 * RecordShape} judges, or a token Jackson refuses: {@code NaN}, a name given twice in one
 * object, bytes that are not UTF-8); then the first in declared field order (depth first), a
 * field's own problem being its {@code wrong_type} or {@code invalid_timestamp}, or
 * {@code missing_field} when it is required and null or absent.
 */
public final class RecordReader {
  public static final String MALFORMED_JSON = "malformed_json";
  public static final String MISSING_FIELD = "missing_field";
  public static final String WRONG_TYPE = "wrong_type";
  public static final String INVALID_TIMESTAMP = "invalid_timestamp";

  /** Thread safe; its name table learns a schema's names once for every parser it makes. */
  private static final JsonFactory JSON =
      JsonFactory.builder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  /** Per thread, keyed by the spec literal itself: no string is built per record. */
  private static final ThreadLocal<Readers> READERS = ThreadLocal.withInitial(Readers::new);

  private RecordReader() {}

  /** The reason codes a reader gives, for a test that compares them with Python's. */
  public static List<String> reasons() {
    return List.of(MALFORMED_JSON, MISSING_FIELD, WRONG_TYPE, INVALID_TIMESTAMP);
  }

  /** The column {@code raw} (JSON text) read with the spec, as a {@link #resultType} struct. */
  public static Column column(Column raw, String specJson) {
    List<Expression> arguments = List.of(ExpressionUtils.expression(raw),
        Literal.create(specJson, DataTypes.StringType));
    Expression read = new StaticInvoke(RecordReader.class, resultType(specJson), "read",
        CollectionConverters.asScala(arguments).toSeq(),
        CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(),
        true, true, true, scala.Option.empty());
    return ExpressionUtils.column(read);
  }

  /** The struct a reader returns: the declared fields, then the event time, reason and detail. */
  public static StructType resultType(String specJson) {
    return ReaderSpec.parse(specJson).resultType;
  }

  /**
   * What the reader makes of one record, as JSON {@code {"reason", "detail", "ts_ms"}} (each
   * null when none): for {@code doctor}, which reads a sample of the input without Spark.
   */
  public static String outcomeJson(String record, String specJson) {
    InternalRow row = read(UTF8String.fromString(record), UTF8String.fromString(specJson));
    int at = row.numFields() - ReaderSpec.ADDED.size();
    com.fasterxml.jackson.databind.node.ObjectNode out =
        new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
    out.put("ts_ms", row.isNullAt(at) ? null : row.getLong(at));
    out.put("reason", row.isNullAt(at + 1) ? null : row.getUTF8String(at + 1).toString());
    out.put("detail", row.isNullAt(at + 2) ? null : row.getUTF8String(at + 2).toString());
    return out.toString();
  }

  /** Called by the generated code once per record; {@code null} in, {@code null} out. */
  public static InternalRow read(UTF8String record, UTF8String specJson) {
    if (record == null) {
      return null;
    }
    return READERS.get().of(specJson).read(record.getBytes());
  }

  /**
   * A thread's readers by spec. The generated code passes the same literal object with every
   * record, so the last one is found by identity first: hashing and comparing a spec of a few
   * hundred bytes per record would cost as much as reading a small record.
   */
  private static final class Readers {
    private final Map<UTF8String, Reader> bySpec = new HashMap<>();
    private UTF8String lastSpec;
    private Reader last;

    Reader of(UTF8String specJson) {
      if (specJson != lastSpec) {
        Reader reader = bySpec.get(specJson);
        if (reader == null) {
          reader = new Reader(ReaderSpec.parse(specJson.toString()));
          bySpec.put(specJson.clone(), reader);
        }
        lastSpec = specJson;
        last = reader;
      }
      return last;
    }
  }

  /** One spec's reader tree and per-record state, for one thread. */
  private static final class Reader {
    private final StructReader root;
    private final int fields;
    private final Reading reading = new Reading();

    Reader(ReaderSpec spec) {
      root = spec.root;
      fields = spec.schema.length();
    }

    InternalRow read(byte[] bytes) {
      reading.reset();
      Object[] values = parse(bytes);
      if (values == null) {
        values = new Object[fields + ReaderSpec.ADDED.size()];
      }
      values[fields] = reading.hasTime ? (Object) reading.timeMs : null;
      values[fields + 1] = reading.reason() == null ? null
          : UTF8String.fromString(reading.reason());
      values[fields + 2] = reading.detail() == null ? null
          : UTF8String.fromString(reading.detail());
      return new GenericInternalRow(values);
    }

    /**
     * The record's values, or null when it is malformed (then told to {@link #reading}).
     *
     * <p>One parse judges the record's shape too: Jackson's strict parser refuses what {@link
     * RecordShape} refuses (anything but one object, single quotes, a record cut short) except
     * an unpaired surrogate escape, so RecordShape runs first only on a record holding a
     * backslash-u escape, and otherwise only to word a refusal. Running it on every record cost
     * a sixth of the read.
     */
    private Object[] parse(byte[] bytes) {
      if (bytes.length >= 3 && (bytes[0] & 0xff) == 0xef && (bytes[1] & 0xff) == 0xbb
          && (bytes[2] & 0xff) == 0xbf) {
        // Jackson skips a byte order mark; RecordShape (the escape path) refuses it: one rule
        reading.malformed("record starts with a byte order mark (U+FEFF), which a JSON record "
            + "does not carry; write it without one");
        return null;
      }
      if (hasUnicodeEscape(bytes)) {
        String shape = RecordShape.problemOf(bytes);
        if (shape != null) {
          reading.malformed(shape);
          return null;
        }
      }
      try (JsonParser parser = JSON.createParser(bytes)) {
        if (parser.nextToken() == JsonToken.START_OBJECT) {
          Object[] values = root.readFields(parser, reading);
          if (parser.nextToken() == null) {
            return values;
          }
        }
        malformed(bytes, null);
      } catch (JsonProcessingException e) {
        malformed(bytes, e);
      } catch (IOException e) {
        malformed(bytes, null);
      }
      return null;
    }

    private void malformed(byte[] bytes, JsonProcessingException e) {
      String shape = RecordShape.problemOf(bytes);
      reading.malformed(shape != null ? shape
          : e != null ? jacksonProblem(e) : "record is not exactly one JSON object");
    }

    private static boolean hasUnicodeEscape(byte[] bytes) {
      for (int i = 0; i < bytes.length - 1; i++) {
        if (bytes[i] == '\\' && bytes[i + 1] == 'u') {
          return true;
        }
      }
      return false;
    }
  }

  /** Jackson's complaint in a dead letter's words: no stack, no Java names, where it is. */
  static String jacksonProblem(JsonProcessingException e) {
    String message = String.valueOf(e.getOriginalMessage());
    int newline = message.indexOf('\n');
    message = newline < 0 ? message : message.substring(0, newline);
    int quote = message.indexOf('`');
    if (quote >= 0) { // "...: enable `JsonReadFeature.X` to allow", "(1000, from `...`)"
      int clause = Math.max(message.lastIndexOf(':', quote), message.lastIndexOf('(', quote));
      message = message.substring(0, Math.max(clause, 0)).strip();
    }
    if (message.startsWith("Duplicate field ")) {
      message = "the name " + message.substring("Duplicate field ".length())
          + " is given twice in one object";
    }
    JsonLocation at = e.getLocation();
    String where = at == null || at.getByteOffset() < 0 ? ""
        : " (near byte " + at.getByteOffset() + ")";
    return "record is not valid JSON: " + message + where;
  }
}
