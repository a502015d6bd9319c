package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Readers of ARRAY and MAP. Each keeps scratch space that grows to its longest value and is
 * reused, so a value costs one exact-size array; a reader is never nested in itself, and a
 * reader tree belongs to one thread, so the scratch is never in use twice at once.
 */
final class ContainerReaders {
  private ContainerReaders() {}

  /** ARRAY&lt;T&gt;: a JSON array whose elements are each a T or null. */
  static final class ArrayReader extends ValueReader {
    private final ValueReader element;
    private Object[] scratch = new Object[16];

    ArrayReader(DataType type, ValueReader element) {
      super(type, "a JSON array");
      this.element = element;
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (token != JsonToken.START_ARRAY) {
        return wrongType(parser, token, reading);
      }
      int count = 0;
      JsonToken next;
      while ((next = parser.nextToken()) != JsonToken.END_ARRAY) {
        if (count == scratch.length) {
          scratch = Arrays.copyOf(scratch, count * 2);
        }
        Object value = null;
        if (next != JsonToken.VALUE_NULL) {
          reading.enterElement(count);
          value = element.read(parser, next, reading);
          reading.leave();
        }
        scratch[count++] = value;
      }
      return new GenericArrayData(Arrays.copyOf(scratch, count));
    }
  }

  /** MAP&lt;STRING, T&gt;: a JSON object, each name a key and each value a T or null. */
  static final class MapReader extends ValueReader {
    private final ValueReader value;
    private Object[] keys = new Object[16];
    private Object[] values = new Object[16];

    MapReader(DataType type, ValueReader value) {
      super(type, "a JSON object");
      this.value = value;
    }

    @Override
    Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
      if (token != JsonToken.START_OBJECT) {
        return wrongType(parser, token, reading);
      }
      int count = 0;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        if (count == keys.length) {
          keys = Arrays.copyOf(keys, count * 2);
          values = Arrays.copyOf(values, count * 2);
        }
        String name = parser.currentName();
        JsonToken next = parser.nextToken();
        Object read = null;
        if (next != JsonToken.VALUE_NULL) {
          reading.enterEntry(count, name);
          read = value.read(parser, next, reading);
          reading.leave();
        }
        keys[count] = UTF8String.fromString(name);
        values[count++] = read;
      }
      return new ArrayBasedMapData(new GenericArrayData(Arrays.copyOf(keys, count)),
          new GenericArrayData(Arrays.copyOf(values, count)));
    }
  }
}
