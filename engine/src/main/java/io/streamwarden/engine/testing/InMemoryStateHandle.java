package io.streamwarden.engine.testing;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.streaming.ListState;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.QueryInfo;
import org.apache.spark.sql.streaming.StatefulProcessorHandle;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.ValueState;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's {@link StatefulProcessorHandle} kept in memory, for driving a real processor without
 * Spark (as pyspark's {@code _InMemoryStatefulProcessorHandle} does for {@code TwsTester}).
 *
 * <p>Value state is held per state name and grouping key, event-time timers per key; both act
 * on the key {@link #setCurrentKey} names, as Spark's handle acts on the key of the call under
 * way. Values are held as serialized copies, as a real store holds them: what a processor changes
 * on a value it read is not stored until it calls {@code update} (a processor that threw before
 * saving relies on that). List and map state, TTL and query info are not
 * supported: the engine's processors use none of them.
 */
public final class InMemoryStateHandle implements StatefulProcessorHandle {
  private static final long serialVersionUID = 1L;

  /** One fired timer: its key and expiry time. */
  public record Timer(String key, long expiryMs) {}

  private final Map<String, Map<String, Object>> values = new HashMap<>();
  private final Map<String, TreeSet<Long>> timers = new TreeMap<>();
  private String currentKey;

  /** The grouping key the next state and timer calls act on. */
  public void setCurrentKey(String key) {
    currentKey = key;
  }

  /** The value {@code stateName} holds for {@code key}, or null. */
  public Object peek(String stateName, String key) {
    Map<String, Object> byKey = values.get(stateName);
    return byKey == null ? null : byKey.get(key);
  }

  /** Every value {@code stateName} holds, by key. */
  public Map<String, Object> all(String stateName) {
    return new TreeMap<>(values.getOrDefault(stateName, Map.of()));
  }

  /** The timers of {@code key}, earliest first. */
  public List<Long> timersOf(String key) {
    return new ArrayList<>(timers.getOrDefault(key, new TreeSet<>()));
  }

  /** The timers at or below {@code watermarkMs}, by expiry time then key, as Spark fires them. */
  public List<Timer> expired(long watermarkMs) {
    List<Timer> due = new ArrayList<>();
    for (Map.Entry<String, TreeSet<Long>> e : timers.entrySet()) {
      for (long t : e.getValue().headSet(watermarkMs, true)) {
        due.add(new Timer(e.getKey(), t));
      }
    }
    due.sort(Comparator.comparingLong(Timer::expiryMs).thenComparing(Timer::key));
    return due;
  }

  private String key() {
    if (currentKey == null) {
      throw new IllegalStateException(
          "state and timers are per key: call setCurrentKey before the processor's handler");
    }
    return currentKey;
  }

  @Override
  public <T> ValueState<T> getValueState(String stateName, Encoder<T> encoder, TTLConfig ttl) {
    if (!TTLConfig.NONE().equals(ttl)) {
      throw unsupported("value state with a TTL (" + stateName + ")");
    }
    return new InMemoryValueState<>(stateName);
  }

  @Override
  public <T> ValueState<T> getValueState(String stateName, TTLConfig ttl, Encoder<T> encoder) {
    return getValueState(stateName, encoder, ttl);
  }

  @Override
  public <T> ListState<T> getListState(String stateName, Encoder<T> encoder, TTLConfig ttl) {
    throw unsupported("list state (" + stateName + ")");
  }

  @Override
  public <T> ListState<T> getListState(String stateName, TTLConfig ttl, Encoder<T> encoder) {
    throw unsupported("list state (" + stateName + ")");
  }

  @Override
  public <K, V> MapState<K, V> getMapState(String stateName, Encoder<K> keyEncoder,
      Encoder<V> valueEncoder, TTLConfig ttl) {
    throw unsupported("map state (" + stateName + ")");
  }

  @Override
  public <K, V> MapState<K, V> getMapState(String stateName, TTLConfig ttl,
      Encoder<K> keyEncoder, Encoder<V> valueEncoder) {
    throw unsupported("map state (" + stateName + ")");
  }

  @Override
  public QueryInfo getQueryInfo() {
    throw unsupported("getQueryInfo");
  }

  @Override
  public void registerTimer(long expiryMs) {
    timers.computeIfAbsent(key(), k -> new TreeSet<>()).add(expiryMs);
  }

  @Override
  public void deleteTimer(long expiryMs) {
    TreeSet<Long> mine = timers.get(key());
    if (mine != null && mine.remove(expiryMs) && mine.isEmpty()) {
      timers.remove(key());
    }
  }

  @Override
  public Iterator<Object> listTimers() {
    return CollectionConverters.asScala(new ArrayList<Object>(timersOf(key())).iterator());
  }

  @Override
  public void deleteIfExists(String stateName) {
    values.remove(stateName);
  }

  /** A deep copy of a stored value (the engine's values are serializable), or null. */
  private static Object copy(Object value) {
    if (value == null) {
      return null;
    }
    try {
      java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
      try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
        out.writeObject(value);
      }
      try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(
          new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
        return in.readObject();
      }
    } catch (java.io.IOException | ClassNotFoundException e) {
      throw new IllegalStateException("cannot copy a state value of " + value.getClass(), e);
    }
  }

  private static UnsupportedOperationException unsupported(String what) {
    return new UnsupportedOperationException(what + " is not supported by the in-memory state "
        + "handle of streamwarden's testers, which holds value state and event-time timers only");
  }

  /** One value state: a value per key, read and written for the current key. */
  private final class InMemoryValueState<T> implements ValueState<T> {
    private static final long serialVersionUID = 1L;
    private final String name;

    InMemoryValueState(String name) {
      this.name = name;
    }

    private Map<String, Object> byKey() {
      return values.computeIfAbsent(name, n -> new HashMap<>());
    }

    @Override
    public boolean exists() {
      return byKey().containsKey(key());
    }

    @Override
    @SuppressWarnings("unchecked") // only update(T) stores values under this name
    public T get() {
      return (T) copy(byKey().get(key()));
    }

    @Override
    public void update(T value) {
      byKey().put(key(), copy(value));
    }

    @Override
    public void clear() {
      byKey().remove(key());
    }
  }
}
