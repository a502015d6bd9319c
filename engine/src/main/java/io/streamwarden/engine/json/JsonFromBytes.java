package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.json.JSONOptions;
import org.apache.spark.sql.catalyst.json.JacksonParser;
import org.apache.spark.sql.catalyst.util.FailureSafeParser;
import org.apache.spark.sql.catalyst.util.PermissiveMode$;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code from_json} in PERMISSIVE mode, reading the record's UTF-8 bytes directly.
 *
 * <p>Spark's {@code from_json} wraps every record in a new {@code InputStreamReader}, whose
 * decoder allocates and zeroes an 8 KB buffer per record: on the benchmark's pageviews that was
 * 15% of all CPU samples of a pattern run. Spark's own JSON file source parses the bytes instead
 * ({@code CreateJacksonParser.text}); this does the same for a string column, with the very
 * same {@link JacksonParser} and {@link FailureSafeParser}, so results are those of
 * {@code from_json}: one struct per record, {@code null} fields where a value is missing or
 * mistyped, the record in the corrupt-record column when it is not valid JSON for the schema.
 * Differences, all of them stricter: bytes that are not valid UTF-8 make the record corrupt here,
 * where {@code from_json} would decode them to U+FFFD; so does anything but exactly one JSON
 * object ({@link RecordShape}: {@code {...}{...}} and text after the object, which {@code
 * from_json} ignores); single quotes, {@code NaN} and {@code Infinity}, which Spark's JSON
 * options allow by default and JSON does not; and a name given twice in one object, which
 * Spark reads as the last value (an ambiguous record is not guessed at).
 */
public final class JsonFromBytes {
  /** Per thread, keyed by the schema literal itself: no string is built per record. */
  private static final ThreadLocal<Map<UTF8String, Parser>> PARSERS =
      ThreadLocal.withInitial(HashMap::new);

  private JsonFromBytes() {}

  /**
   * The column {@code raw} parsed with the schema given in DDL ({@code "a string, b long"}).
   *
   * @param corruptColumn the schema's string field that receives records that do not parse
   */
  public static Column column(Column raw, String schemaDdl, String corruptColumn) {
    StructType schema = StructType.fromDDL(schemaDdl).asNullable();
    List<Expression> arguments = List.of(
        ExpressionUtils.expression(raw),
        Literal.create(schemaDdl, DataTypes.StringType),
        Literal.create(corruptColumn, DataTypes.StringType));
    Expression parse = new StaticInvoke(JsonFromBytes.class, schema, "parse",
        CollectionConverters.asScala(arguments).toSeq(),
        CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(),
        true, true, true, scala.Option.empty());
    return ExpressionUtils.column(parse);
  }

  /** Called by the generated code once per record; {@code null} in, {@code null} out. */
  public static InternalRow parse(UTF8String record, UTF8String schemaDdl,
      UTF8String corruptColumn) {
    Parser parser = parser(schemaDdl, corruptColumn);
    if (record != null && !RecordShape.isOneObject(record.getBytes())) {
      GenericInternalRow corrupt = new GenericInternalRow(parser.width);
      corrupt.update(parser.corruptIndex, record.clone());
      return corrupt;
    }
    scala.collection.Iterator<InternalRow> rows = parser.parser.parse(record);
    return rows.hasNext() ? rows.next() : null;
  }

  /** A schema's parser, with where a corrupt record goes in its rows. */
  private record Parser(FailureSafeParser<UTF8String> parser, int width, int corruptIndex) {}

  private static Parser parser(UTF8String schemaDdl, UTF8String corruptColumn) {
    Map<UTF8String, Parser> mine = PARSERS.get();
    Parser parser = mine.get(schemaDdl);
    if (parser == null) {
      StructType schema = StructType.fromDDL(schemaDdl.toString()).asNullable();
      parser = new Parser(newParser(schema, corruptColumn.toString()), schema.length(),
          schema.fieldIndex(corruptColumn.toString()));
      mine.put(schemaDdl.clone(), parser);
    }
    return parser;
  }

  private static FailureSafeParser<UTF8String> newParser(StructType schema,
      String corruptColumn) {
    Map<String, String> options = Map.of("mode", "PERMISSIVE",
        "columnNameOfCorruptRecord", corruptColumn, "allowSingleQuotes", "false",
        "allowNonNumericNumbers", "false");
    JSONOptions parsed = new JSONOptions(
        scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(options)), "UTC",
        corruptColumn);
    JacksonParser jackson = new JacksonParser(schema, parsed, false,
        CollectionConverters.asScala(List.<Filter>of()).toSeq());
    return new FailureSafeParser<UTF8String>(
        record -> jackson.parse(record, JsonFromBytes::bytesParser, r -> r),
        PermissiveMode$.MODULE$, schema, corruptColumn);
  }

  /**
   * A parser over a copy of the record's bytes: the JacksonParser slices the record by the byte
   * offsets Jackson reports (to read a number or object into a string field), which count from
   * the start of the array given, not from the record.
   */
  private static JsonParser bytesParser(JsonFactory factory, UTF8String record) {
    try {
      JsonParser parser = factory.createParser(record.getBytes());
      parser.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
      return parser;
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
