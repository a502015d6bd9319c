package io.streamwarden.engine.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;

/**
 * STRUCT: a JSON object read field by field into an InternalRow in declared order. Names the
 * struct does not declare are skipped, whatever their value. A field that must be there (a
 * required field, the time field, or a struct holding one) is checked once the object ends.
 */
final class StructReader extends ValueReader {
  /**
   * What a field's absence means: {@code label} ("required field", "time field") and the path
   * below the field that is missing ({@code ""} for the field itself).
   */
  record Demand(String label, String below) {
    boolean onItself() {
      return below.isEmpty();
    }

    /** The same demand seen from the struct above: the field's name before the path. */
    Demand under(String name) {
      return new Demand(label, below.isEmpty() ? name : name + "." + below);
    }
  }

  /** A declared field: its index, name, reader and demand (null when it may be missing). */
  private record Slot(int index, String name, ValueReader reader, Demand demand) {}

  private final Slot[] slots;
  private final Map<String, Slot> byName;
  private final Slot[] demanded;
  private final int width;

  /**
   * @param extra slots left at the end of each row, for the caller to fill
   */
  StructReader(DataType type, String[] names, ValueReader[] readers, Demand[] demands,
      int extra) {
    super(type, "a JSON object");
    slots = new Slot[names.length];
    byName = new HashMap<>();
    int count = 0;
    for (int i = 0; i < names.length; i++) {
      slots[i] = new Slot(i, names[i].intern(), readers[i], demands[i]);
      byName.put(names[i], slots[i]);
      count += demands[i] == null ? 0 : 1;
    }
    demanded = new Slot[count];
    count = 0;
    for (Slot slot : slots) {
      if (slot.demand != null) {
        demanded[count++] = slot;
      }
    }
    width = names.length + extra;
  }

  /** The first of this struct's demands in declared order, seen from above; null if none. */
  Demand firstDemand() {
    for (Slot slot : slots) {
      if (slot.demand != null) {
        return slot.demand.under(slot.name);
      }
    }
    return null;
  }

  @Override
  Object read(JsonParser parser, JsonToken token, Reading reading) throws IOException {
    if (token != JsonToken.START_OBJECT) {
      return wrongType(parser, token, reading);
    }
    return new GenericInternalRow(readFields(parser, reading));
  }

  /**
   * Reads the fields of the object whose start is the current token, up to its end, into a new
   * array of this struct's width.
   */
  Object[] readFields(JsonParser parser, Reading reading) throws IOException {
    Object[] values = new Object[width];
    int next = 0;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      Slot slot = slot(parser.currentName(), next);
      next = slot == null ? next : slot.index + 1;
      JsonToken token = parser.nextToken();
      if (slot == null) {
        parser.skipChildren();
      } else if (token == JsonToken.VALUE_NULL) {
        if (slot.demand != null && slot.demand.onItself()) {
          absent(slot, reading, "null");
        }
      } else {
        reading.enterField(slot.index, slot.name);
        values[slot.index] = slot.reader.read(parser, token, reading);
        reading.leave();
      }
    }
    for (Slot slot : demanded) {
      if (values[slot.index] == null) {
        absent(slot, reading, "missing"); // after "null" or a wrong value, it is not reported
      }
    }
    return values;
  }

  /**
   * The declared field of a name, or null. Jackson hands out names interned (its default) as
   * the slots hold them, so a record written in declared order finds each field by identity at
   * the place after the last one found; any other order, by the map.
   */
  private Slot slot(String name, int next) {
    if (next < slots.length && slots[next].name == name) {
      return slots[next];
    }
    return byName.get(name);
  }

  private static void absent(Slot slot, Reading reading, String how) {
    reading.enterField(slot.index, slot.name);
    if (reading.wins()) {
      Demand demand = slot.demand;
      String name = reading.name() + (demand.onItself() ? "" : "." + demand.below);
      reading.problem(RecordReader.MISSING_FIELD, demand.label + " '" + name + "' is " + how);
    }
    reading.leave();
  }
}
