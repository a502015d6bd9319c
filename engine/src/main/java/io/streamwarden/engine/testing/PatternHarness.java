package io.streamwarden.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.streamwarden.engine.patterns.BufferCap;
import io.streamwarden.engine.patterns.Found;
import io.streamwarden.engine.patterns.KeyState;
import io.streamwarden.engine.patterns.Nfa;
import io.streamwarden.engine.patterns.PEvent;
import io.streamwarden.engine.patterns.Partial;
import io.streamwarden.engine.patterns.PatternPlan;
import io.streamwarden.engine.patterns.PatternRows;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Drives {@link Nfa} the way {@code PatternProcessor} does under transformWithState, without
 * Spark: per micro-batch, each key's rows first (too-late ones dead-lettered), then the timers
 * the watermark has passed. State goes through its binary encoding on every save, as in the
 * state store. Talks JSON so that Python tests can drive it over py4j.
 */
public final class PatternHarness {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final PatternPlan plan;
  private final Nfa nfa;
  private final Map<String, byte[]> states = new TreeMap<>();
  private final Map<String, Long> timers = new TreeMap<>();

  public PatternHarness(String planJson) {
    this.plan = PatternPlan.fromJson(planJson);
    this.nfa = new Nfa(plan);
  }

  /** {@code eventsJson}: a list of {"key", "ts_ms", "mask", "values": [...], "raw"}. */
  public String runBatch(String eventsJson, long watermarkMs) throws Exception {
    Map<String, List<JsonNode>> byKey = new LinkedHashMap<>();
    for (JsonNode n : JSON.readTree(eventsJson)) {
      byKey.computeIfAbsent(n.get("key").asText(), k -> new ArrayList<>()).add(n);
    }
    ArrayNode out = JSON.createArrayNode();
    for (Map.Entry<String, List<JsonNode>> entry : byKey.entrySet()) {
      String key = entry.getKey();
      List<PEvent> fresh = new ArrayList<>();
      List<JsonNode> freshNodes = new ArrayList<>();
      for (JsonNode n : entry.getValue()) {
        long ts = n.get("ts_ms").asLong();
        if (ts <= watermarkMs) {
          deadLetter(out, key, n, PatternRows.TOO_LATE);
          continue;
        }
        String[] values = new String[n.path("values").size()];
        for (int i = 0; i < values.length; i++) {
          JsonNode v = n.get("values").get(i);
          values[i] = v.isNull() ? null : v.asText();
        }
        fresh.add(new PEvent(ts, n.get("mask").asLong(), values));
        freshNodes.add(n);
      }
      KeyState s = load(key);
      for (JsonNode n : BufferCap.refuse(s, fresh, freshNodes, plan.maxBufferedPerKey,
          watermarkMs)) {
        deadLetter(out, key, n, BufferCap.KEY_BUFFER_FULL)
            .put("detail", BufferCap.detail(plan.maxBufferedPerKey));
      }
      nfa.buffer(s, fresh);
      List<Found> found = new ArrayList<>();
      nfa.advance(s, watermarkMs, found);
      save(key, s);
      write(out, key, found);
    }
    for (String key : new ArrayList<>(timers.keySet())) {
      if (timers.get(key) <= watermarkMs) {
        KeyState s = load(key);
        List<Found> found = new ArrayList<>();
        nfa.advance(s, watermarkMs, found);
        save(key, s);
        write(out, key, found);
      }
    }
    return JSON.writeValueAsString(out);
  }

  private static ObjectNode deadLetter(ArrayNode out, String key, JsonNode event,
      String reason) {
    ObjectNode d = out.addObject();
    d.put("kind", "dead_letter");
    d.put("key", key);
    d.put("event_ts_ms", event.get("ts_ms").asLong());
    d.put("raw", event.path("raw").asText(""));
    d.put("reason", reason);
    return d;
  }

  /** The key's state as JSON ({"buffered", "partials": [[stage names]...]}), or null. */
  public String peek(String key) throws Exception {
    byte[] stored = states.get(key);
    if (stored == null) {
      return null;
    }
    KeyState s = KeyState.decode(stored);
    ObjectNode n = JSON.createObjectNode();
    n.put("buffered", s.buffer.size());
    n.put("timer_ms", timers.getOrDefault(key, KeyState.NO_TIMER));
    ArrayNode partials = n.putArray("partials");
    for (Partial p : s.partials) {
      ArrayNode a = partials.addArray();
      for (int i = 0; i < p.events.size(); i++) {
        a.add(plan.stages.get(p.stageOf[i]).name + "@" + p.events.get(i).tsMs);
      }
    }
    return JSON.writeValueAsString(n);
  }

  /** Keys holding state: the operator's state rows in Spark. */
  public int stateRows() {
    return states.size();
  }

  /** Bytes of all keys' encoded state. */
  public long stateBytes() {
    long total = 0;
    for (byte[] b : states.values()) {
      total += b.length;
    }
    return total;
  }

  private KeyState load(String key) {
    byte[] stored = states.get(key);
    return stored == null ? new KeyState() : KeyState.decode(stored);
  }

  private void save(String key, KeyState s) {
    long next = nfa.nextDeadline(s);
    if (next == KeyState.NO_TIMER) {
      timers.remove(key);
    } else {
      timers.put(key, next);
    }
    s.timerMs = next;
    if (s.holdsNothing() && !plan.keepEmptyState) {
      states.remove(key);
    } else {
      states.put(key, s.encode());
    }
  }

  private void write(ArrayNode out, String key, List<Found> found) {
    for (Found f : found) {
      ObjectNode n = out.addObject();
      n.put("key", key);
      if (f.kind == Found.Kind.OVERFLOW) {
        n.put("kind", "overflow");
        n.put("dropped", f.dropped);
        continue;
      }
      n.put("kind", f.kind == Found.Kind.MATCH ? "match" : "timeout");
      n.put("match_id", PatternRows.matchId(key, f.partial));
      ArrayNode events = n.putArray("events");
      for (int i = 0; i < f.partial.events.size(); i++) {
        ObjectNode e = events.addObject();
        e.put("stage", plan.stages.get(f.partial.stageOf[i]).name);
        e.put("ts_ms", f.partial.events.get(i).tsMs);
        ArrayNode values = e.putArray("values");
        for (String v : f.partial.events.get(i).values) {
          values.add(v);
        }
      }
    }
  }
}
