package io.streamwarden.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.BiFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The JSON the Python testers and the harnesses exchange: input events grouped by key into
 * engine rows, and output rows as JSON objects named by the output schema's columns (the same
 * names the operator's DataFrame has).
 */
final class RowJson {
  static final ObjectMapper JSON = new ObjectMapper();

  private RowJson() {}

  /** {@code eventsJson}, a list of objects each with a {@code key}, as rows by key. */
  static SortedMap<String, List<Row>> rowsByKey(String eventsJson,
      BiFunction<String, JsonNode, Row> toRow) throws Exception {
    SortedMap<String, List<Row>> byKey = new TreeMap<>();
    for (JsonNode n : JSON.readTree(eventsJson)) {
      String key = n.get("key").asText();
      byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(toRow.apply(key, n));
    }
    return byKey;
  }

  static String toJson(List<Row> rows, StructType schema) throws Exception {
    ArrayNode array = JSON.createArrayNode();
    StructField[] fields = schema.fields();
    for (Row r : rows) {
      ObjectNode n = array.addObject();
      for (int i = 0; i < fields.length; i++) {
        n.set(fields[i].name(), value(r.isNullAt(i) ? null : r.get(i)));
      }
    }
    return JSON.writeValueAsString(array);
  }

  private static JsonNode value(Object v) {
    if (v instanceof scala.collection.Seq<?> seq) {
      ArrayNode a = JSON.createArrayNode();
      for (Object item : CollectionConverters.asJava(seq)) {
        a.add(value(item));
      }
      return a;
    }
    return JSON.valueToTree(v);
  }
}
