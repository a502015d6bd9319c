package io.streamwarden.engine.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.streamwarden.engine.json.StructReader.Demand;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampType;

/**
 * A reader's spec, {@code {"schema": <StructType JSON>, "required": ["account", "geo.city"],
 * "time": "at", "time_unit": "ms"}}, checked and turned into a tree of {@link ValueReader}s.
 * Only {@code schema} must be given; {@code time_unit} defaults to {@code ms}. A spec that is
 * wrong in any way is an {@link IllegalArgumentException} naming what to change.
 */
final class ReaderSpec {
  /** Names of the columns a reader adds after the declared fields, in their order. */
  static final List<String> ADDED = List.of("_sw_ts_ms", "_sw_reason", "_sw_detail");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> KEYS = Set.of("schema", "required", "time", "time_unit");

  final StructType schema;
  final StructType resultType;
  final StructReader root;
  private final Set<String> required = new HashSet<>();
  private final String time;
  private final TimeFieldReader.Unit unit;

  private ReaderSpec(JsonNode spec) {
    schema = schema(spec.get("schema"));
    JsonNode paths = spec.path("required");
    if (!paths.isMissingNode() && !paths.isArray()) {
      throw new IllegalArgumentException("the spec's 'required' must be a list of field paths");
    }
    for (JsonNode node : paths) {
      String path = text(node, "required");
      resolve(path, "required field");
      required.add(path);
    }
    JsonNode timeNode = spec.path("time");
    time = timeNode.isMissingNode() || timeNode.isNull() ? null : text(timeNode, "time");
    String unitName = spec.path("time_unit").asText("ms");
    unit = TimeFieldReader.Unit.named(unitName);
    if (unit == null) {
      throw new IllegalArgumentException("the spec's 'time_unit' is '" + unitName
          + "'; write s, ms or us");
    }
    if (time != null) {
      checkTimeType(resolve(time, "time field"));
    }
    for (String added : ADDED) {
      if (schema.getFieldIndex(added).isDefined()) {
        throw new IllegalArgumentException("the schema declares '" + added
            + "', a name the reader adds to its result; rename that field");
      }
    }
    root = struct(schema, "", true, ADDED.size());
    StructType result = schema.asNullable();
    result = result.add(ADDED.get(0), DataTypes.LongType);
    result = result.add(ADDED.get(1), DataTypes.StringType);
    resultType = result.add(ADDED.get(2), DataTypes.StringType);
  }

  /** The spec of a JSON text, checked. */
  static ReaderSpec parse(String specJson) {
    JsonNode spec;
    try {
      spec = JSON.readTree(specJson);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("the reader's spec is not JSON: "
          + e.getOriginalMessage(), e);
    }
    if (spec == null || !spec.isObject()) {
      throw new IllegalArgumentException("the reader's spec must be a JSON object");
    }
    for (Iterator<String> names = spec.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!KEYS.contains(name)) {
        throw new IllegalArgumentException("the spec has an unknown key '" + name
            + "'; known keys are schema, required, time and time_unit");
      }
    }
    return new ReaderSpec(spec);
  }

  private static StructType schema(JsonNode node) {
    if (node == null) {
      throw new IllegalArgumentException("the spec has no 'schema'");
    }
    DataType type;
    try {
      type = DataType.fromJson(node.toString());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("the spec's 'schema' is not a Spark type as JSON ("
          + e.getMessage() + ")", e);
    }
    if (!(type instanceof StructType struct)) {
      throw new IllegalArgumentException("the spec's 'schema' must be a struct, not "
          + type.sql());
    }
    return struct;
  }

  private static String text(JsonNode node, String key) {
    if (!node.isTextual() || node.asText().isEmpty()) {
      throw new IllegalArgumentException("the spec's '" + key + "' holds " + node
          + ", not a field path such as \"geo.city\"");
    }
    return node.asText();
  }

  /** The dotted path, checked to name a field through structs only; its type is returned. */
  private DataType resolve(String path, String what) {
    DataType at = schema;
    String reached = "";
    for (String name : path.split("\\.", -1)) {
      if (!(at instanceof StructType struct)) {
        throw new IllegalArgumentException(what + " '" + path + "' goes into '" + reached
            + "', " + Shown.type(at) + "; a path goes through structs only");
      }
      scala.Option<Object> index = struct.getFieldIndex(name);
      if (index.isEmpty()) {
        throw new IllegalArgumentException(what + " '" + path + "': "
            + (reached.isEmpty() ? "the schema" : "'" + reached + "'")
            + " declares no field '" + name + "'");
      }
      at = struct.fields()[(Integer) index.get()].dataType();
      reached = reached.isEmpty() ? name : reached + "." + name;
    }
    return at;
  }

  private void checkTimeType(DataType type) {
    if (!(type instanceof TimestampType || type instanceof LongType
        || type instanceof IntegerType)) {
      throw new IllegalArgumentException("time field '" + time + "' is " + Shown.type(type)
          + "; an event time is a TIMESTAMP, or a BIGINT or INT of epoch time in time_unit");
    }
  }

  /**
   * The reader of a struct at {@code path} ("" at the top), whose fields a spec's path can name
   * when it is {@code addressable} (not inside an array or a map).
   */
  private StructReader struct(StructType type, String path, boolean addressable, int extra) {
    StructField[] fields = type.fields();
    String[] names = new String[fields.length];
    ValueReader[] readers = new ValueReader[fields.length];
    Demand[] demands = new Demand[fields.length];
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < fields.length; i++) {
      names[i] = fields[i].name();
      if (!seen.add(names[i])) {
        throw new IllegalArgumentException("the schema declares '" + names[i]
            + "' twice in one struct");
      }
      String full = path.isEmpty() ? names[i] : path + "." + names[i];
      readers[i] = reader(fields[i].dataType(), full, addressable);
      if (addressable && full.equals(time)) {
        readers[i] = new TimeFieldReader(readers[i], unit);
        demands[i] = new Demand("time field", "");
      } else if (addressable && required.contains(full)) {
        demands[i] = new Demand("required field", "");
      } else if (readers[i] instanceof StructReader inner && inner.firstDemand() != null) {
        demands[i] = inner.firstDemand();
      }
    }
    return new StructReader(type, names, readers, demands, extra);
  }

  private ValueReader reader(DataType type, String path, boolean addressable) {
    if (type instanceof StructType struct) {
      return struct(struct, path, addressable, 0);
    } else if (type instanceof ArrayType array) {
      return new ContainerReaders.ArrayReader(type,
          reader(array.elementType(), path + "[]", false));
    } else if (type instanceof MapType map) {
      if (!(map.keyType() instanceof StringType)) {
        throw new IllegalArgumentException("field '" + path + "' is " + Shown.type(type)
            + "; a JSON object's names are strings, declare MAP<STRING, ...>");
      }
      return new ContainerReaders.MapReader(type, reader(map.valueType(), path + "[]", false));
    }
    ValueReader scalar = ScalarReaders.of(type);
    if (scalar == null) {
      throw new IllegalArgumentException("field '" + path + "' is " + Shown.type(type)
          + ", which a JSON record does not hold; declare STRING, BOOLEAN, an integer or"
          + " fractional type, DECIMAL, TIMESTAMP, DATE, STRUCT, ARRAY or MAP<STRING, ...>");
    }
    return scalar;
  }
}
