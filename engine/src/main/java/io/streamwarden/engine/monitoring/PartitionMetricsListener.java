package io.streamwarden.engine.monitoring;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.sql.streaming.StreamingQueryListener;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Per-partition numbers of each stateful operator, per micro-batch (lesson L11).
 *
 * <p>Spark's query progress only has totals. Every stateful operator's task reports its own
 * "number of total state rows" SQL metric, though, and the task's shuffle read is the input of
 * that operator's partition. This listener collects both from task-end events, keyed by the query
 * and batch named in the job's local properties, and marks a batch complete when the query's
 * progress event for it passes through the same listener queue (all its task ends came first).
 * Spark's REST API drops SQL metrics from task data, so this is the one place they are visible.
 */
public final class PartitionMetricsListener extends SparkListener {
  static final String QUERY_ID_KEY = "sql.streaming.queryId";
  static final String BATCH_ID_KEY = "streaming.sql.batchId";
  static final String STATE_ROWS = "number of total state rows";
  static final int BATCHES_KEPT = 16;

  /** stage id -> "queryId/batchId", while the stage's job runs. */
  private final Map<Integer, String> stageBatch = new HashMap<>();
  private final Map<Integer, List<Object>> jobStages = new HashMap<>();
  /** "queryId/batchId" -> accumulator id -> partition -> [state rows, input rows]. */
  private final Map<String, Map<Long, Map<Integer, long[]>>> batches = new HashMap<>();
  private final Map<String, Long> completedUpTo = new HashMap<>();
  private final Deque<String> order = new ArrayDeque<>();

  @Override
  public synchronized void onJobStart(SparkListenerJobStart job) {
    if (job.properties() == null) {
      return;
    }
    String query = job.properties().getProperty(QUERY_ID_KEY);
    String batch = job.properties().getProperty(BATCH_ID_KEY);
    if (query == null || batch == null) {
      return;
    }
    List<Object> stages = CollectionConverters.asJava(job.stageIds());
    jobStages.put(job.jobId(), stages);
    for (Object stage : stages) {
      stageBatch.put((Integer) stage, query + "/" + batch);
    }
  }

  @Override
  public synchronized void onJobEnd(SparkListenerJobEnd job) {
    List<Object> stages = jobStages.remove(job.jobId());
    if (stages != null) {
      stages.forEach(stageBatch::remove);
    }
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd end) {
    String key = stageBatch.get(end.stageId());
    if (key == null || end.taskInfo() == null || !end.taskInfo().successful()) {
      return;
    }
    int partition = end.taskInfo().partitionId();
    long input = inputRows(end.taskMetrics());
    for (AccumulableInfo acc : CollectionConverters.asJava(end.taskInfo().accumulables())) {
      if (!acc.name().isDefined() || !STATE_ROWS.equals(acc.name().get())
          || !acc.update().isDefined()) {
        continue;
      }
      Map<Long, Map<Integer, long[]>> operators = batches.get(key);
      if (operators == null) {
        operators = new HashMap<>();
        batches.put(key, operators);
        order.addLast(key);
        while (order.size() > BATCHES_KEPT) {
          batches.remove(order.removeFirst());
        }
      }
      long rows = ((Number) acc.update().get()).longValue();
      operators.computeIfAbsent(acc.id(), k -> new TreeMap<>())
          .put(partition, new long[] {rows, input});
    }
  }

  @Override
  public void onOtherEvent(SparkListenerEvent event) {
    if (event instanceof StreamingQueryListener.QueryProgressEvent progressEvent) {
      String query = progressEvent.progress().id().toString();
      long batch = progressEvent.progress().batchId();
      synchronized (this) {
        completedUpTo.merge(query, batch, Math::max);
        notifyAll();
      }
    }
  }

  /**
   * The batch's numbers as JSON: {@code {"complete": bool, "operators": {"<metric id>":
   * {"<partition>": [state rows, input rows]}}}}. Waits up to {@code timeoutMs} for the batch's
   * task ends to be seen; "complete" is false if they were not.
   */
  public synchronized String batchJson(String queryId, long batchId, long timeoutMs)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (completedUpTo.getOrDefault(queryId, -1L) < batchId) {
      long left = deadline - System.currentTimeMillis();
      if (left <= 0) {
        break;
      }
      wait(left);
    }
    boolean complete = completedUpTo.getOrDefault(queryId, -1L) >= batchId;
    StringBuilder json = new StringBuilder("{\"complete\":").append(complete)
        .append(",\"operators\":{");
    Map<Long, Map<Integer, long[]>> operators =
        batches.getOrDefault(queryId + "/" + batchId, Map.of());
    String sep = "";
    for (Map.Entry<Long, Map<Integer, long[]>> op : new TreeMap<>(operators).entrySet()) {
      json.append(sep).append('"').append(op.getKey()).append("\":{");
      String inner = "";
      for (Map.Entry<Integer, long[]> p : op.getValue().entrySet()) {
        json.append(inner).append('"').append(p.getKey()).append("\":[")
            .append(p.getValue()[0]).append(',').append(p.getValue()[1]).append(']');
        inner = ",";
      }
      json.append('}');
      sep = ",";
    }
    return json.append("}}").toString();
  }

  private static long inputRows(TaskMetrics metrics) {
    if (metrics == null) {
      return 0L;
    }
    long shuffled = metrics.shuffleReadMetrics().recordsRead();
    return shuffled > 0 ? shuffled : metrics.inputMetrics().recordsRead();
  }
}
