package io.streamwarden.engine.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Runs a real {@link StatefulProcessor} micro-batch by micro-batch under an {@link
 * InMemoryStateHandle}, in transformWithState's event-time order: each key's input rows (keys
 * in sorted order, as Spark sorts a partition by its grouping key), then every timer at or
 * below the batch's watermark (by expiry time, then key), each deleted once handled.
 *
 * <p>Spark's own {@code TwsTester} (4.2) does not fit the engine: it drops rows behind the
 * watermark before the processor sees them (the processors dead-letter or merge those) and fires
 * timers before a batch's input rather than after.
 */
public final class ProcessorDriver {
  private final StatefulProcessor<String, Row, Row> processor;
  private final InMemoryStateHandle handle = new InMemoryStateHandle();

  public ProcessorDriver(StatefulProcessor<String, Row, Row> processor) {
    this.processor = processor;
    processor.setHandle(handle);
    processor.init(OutputMode.Append(), TimeMode.EventTime());
  }

  public InMemoryStateHandle handle() {
    return handle;
  }

  /** One micro-batch: {@code rowsByKey}'s rows, then the timers {@code watermarkMs} expires. */
  public List<Row> runBatch(SortedMap<String, List<Row>> rowsByKey, long watermarkMs) {
    TimerValues times = new BatchTimes(watermarkMs);
    List<Row> out = new ArrayList<>();
    for (Map.Entry<String, List<Row>> e : rowsByKey.entrySet()) {
      handle.setCurrentKey(e.getKey());
      add(out, processor.handleInputRows(e.getKey(),
          CollectionConverters.asScala(e.getValue().iterator()), times));
    }
    for (InMemoryStateHandle.Timer t : handle.expired(watermarkMs)) {
      handle.setCurrentKey(t.key());
      add(out, processor.handleExpiredTimer(t.key(), times, new FiredTimer(t.expiryMs())));
      handle.deleteTimer(t.expiryMs());
    }
    handle.setCurrentKey(null);
    return out;
  }

  private static void add(List<Row> out, scala.collection.Iterator<Row> rows) {
    while (rows.hasNext()) {
      out.add(rows.next());
    }
  }

  /**
   * The batch's times: its watermark; processing time is 0, since the engine's processors run
   * in event time and never read it.
   */
  private record BatchTimes(long watermarkMs) implements TimerValues {
    @Override
    public long getCurrentProcessingTimeInMs() {
      return 0L;
    }

    @Override
    public long getCurrentWatermarkInMs() {
      return watermarkMs;
    }
  }

  private record FiredTimer(long expiryMs) implements ExpiredTimerInfo {
    @Override
    public long getExpiryTimeInMs() {
      return expiryMs;
    }
  }
}
