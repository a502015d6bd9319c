package io.streamwarden.engine.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A record is exactly one JSON object, whose strings are Unicode text. */
class RecordShapeTest {
  private static String problem(String record) {
    return RecordShape.problemOf(record.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void oneObjectWithWhiteSpaceAroundIt() {
    assertNull(problem("{\"a\": 1}"));
    assertNull(problem(" \t{\"a\": {\"b\": [1, \"}\", \"\\\"]\"]}}\r\n"));
    assertNull(problem("{\"a\": \"\\ud83d\\ude00 \\u00e9 \\\\ud800\"}")); // a pair; an escaped \
    assertNull(problem("{}"));
  }

  @Test
  void anythingAfterTheObjectIsRefused() {
    assertEquals("record has more after its JSON object, at byte 8 (one JSON object per record)",
        problem("{\"a\": 1}{\"a\": 2}"));
    assertEquals("record has more after its JSON object, at byte 9 (one JSON object per record)",
        problem("{\"a\": 1} x"));
    assertEquals("record has more after its JSON object, at byte 3 (one JSON object per record)",
        problem("{} ,"));
  }

  @Test
  void blankEmptyAndNonObjectRecordsSayWhatTheyAre() {
    assertEquals("record is empty", problem(""));
    assertEquals("record is only white space", problem(" \t "));
    assertEquals("record is only white space", problem("   "));
    assertEquals("record is not a JSON object (it starts with '[')", problem("[{}]"));
    assertEquals("record is not a JSON object (it starts with byte 0xef)", problem("\ufeff{}"));
    assertEquals("record ends inside its JSON object (cut short?)", problem("{\"a\": [1"));
  }

  @Test
  void singleQuotesAndUnpairedSurrogatesAreRefused() {
    assertEquals("record uses single quotes (at byte 1), which JSON does not allow",
        problem("{'a': 1}"));
    assertNull(problem("{\"it's\": \"fine inside strings\"}"));
    assertEquals("a string holds an unpaired surrogate escape (\\ud800) at byte 7, which is not "
        + "Unicode text", problem("{\"a\": \"\\ud800\"}"));
    assertEquals("a string holds an unpaired surrogate escape (\\uDC00) at byte 7, which is not "
        + "Unicode text", problem("{\"a\": \"\\uDC00\\ud800\"}"));
    assertEquals("a string holds an unpaired surrogate escape (\\ud83d) at byte 7, which is not "
        + "Unicode text", problem("{\"a\": \"\\ud83dx\"}"));
  }
}
