package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static io.streamwarden.engine.patterns.NfaTestUtilities.named;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.EngineInput;
import io.streamwarden.engine.Poison;
import io.streamwarden.engine.testing.ProcessorDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * No record can fail a batch of the pattern engine: the record it throws on is a {@code poison}
 * dead letter, and the match the key's other records make is still found.
 */
class PatternPoisonTest {
  @AfterEach
  void noMoreFaults() {
    Poison.failOn(null);
  }

  @Test
  void thePoisonRecordIsSetAsideAndTheOthersStillMatch() {
    Poison.failOn("BOOM");
    NfaTestUtilities.PatternBuilder pattern =
        begin("a", named("a")).followedBy("b", named("b"));
    ProcessorDriver driver = new ProcessorDriver(new PatternProcessor(pattern.plan()));
    List<Row> first = driver.runBatch(batch(
        row(pattern, "k", "a1", 1000, "{\"name\": \"a1\"}"),
        row(pattern, "k", "b-BOOM", 2000, "{\"name\": \"b-BOOM\"}"),
        row(pattern, "k", "b2", 3000, "{\"name\": \"b2\"}")), 0);
    assertEquals(1, first.size());
    Row poison = first.get(0);
    assertEquals("dead_letter", poison.getString(PatternRows.SCHEMA.fieldIndex("kind")));
    assertEquals("poison", poison.getString(PatternRows.SCHEMA.fieldIndex("reason")));
    assertEquals("{\"name\": \"b-BOOM\"}",
        poison.getString(PatternRows.SCHEMA.fieldIndex("raw")));
    assertTrue(poison.getString(PatternRows.SCHEMA.fieldIndex("detail")).startsWith(
        "the pattern engine threw io.streamwarden.engine.Poison$InjectedFault"));
    List<Row> later = driver.runBatch(batch(), 10_000);
    assertEquals(1, later.size());
    Row match = later.get(0);
    assertEquals("match", match.getString(PatternRows.SCHEMA.fieldIndex("kind")));
    assertEquals(List.of(1000L, 3000L), CollectionConverters.asJava(
        match.<scala.collection.Seq<Long>>getAs(PatternRows.SCHEMA.fieldIndex("ev_ts_ms"))));
  }

  private static Row row(NfaTestUtilities.PatternBuilder pattern, String key, String name,
      long tsMs, String raw) {
    PEvent e = pattern.event(name, tsMs);
    Object[] values = new Object[9];
    values[EngineInput.KEY] = key;
    values[EngineInput.KIND] = EngineInput.KIND_EVENT;
    values[EngineInput.TS_MS] = tsMs;
    values[EngineInput.RAW] = raw;
    values[EngineInput.USER] = key;
    values[EngineInput.MASK] = e.mask;
    values[EngineInput.VALUES] = CollectionConverters.asScala(List.of(name)).toSeq();
    return RowFactory.create(values);
  }

  private static SortedMap<String, List<Row>> batch(Row... rows) {
    SortedMap<String, List<Row>> byKey = new TreeMap<>();
    for (Row r : rows) {
      byKey.computeIfAbsent(r.getString(EngineInput.KEY), k -> new ArrayList<>()).add(r);
    }
    return byKey;
  }
}
