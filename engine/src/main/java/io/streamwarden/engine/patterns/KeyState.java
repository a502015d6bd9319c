package io.streamwarden.engine.patterns;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything one key holds: events waiting for the watermark (kept in event-time order) and
 * the partial matches. Each has a deadline (an event's own time; a partial's start + within),
 * so a key's state always empties, whether or not the key sends again (lesson L3).
 *
 * <p>Stored as one compact binary value: events shared by several partial matches are written
 * once and referenced by index.
 */
public final class KeyState {
  public static final long NO_TIMER = Long.MIN_VALUE;
  private static final byte VERSION = 2;
  /** The format before held matches and committed branches; read (as no held matches and no
   * committed branch), never written, so a pattern checkpoint of an earlier version restarts. */
  private static final byte VERSION_1 = 1;

  public long nextSeq;
  public long nextOrd;
  public long timerMs = NO_TIMER;
  public final List<PEvent> buffer = new ArrayList<>();
  public List<Partial> partials = new ArrayList<>();
  /** Completed matches held back under a skip strategy while an earlier-started partial match
   * is open (as Flink does); released at the latest when that partial expires. */
  public List<Partial> held = new ArrayList<>();

  public boolean holdsNothing() {
    return buffer.isEmpty() && partials.isEmpty() && held.isEmpty();
  }

  public byte[] encode() {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
      DataOutputStream out = new DataOutputStream(bytes);
      out.writeByte(VERSION);
      out.writeLong(nextSeq);
      out.writeLong(nextOrd);
      out.writeLong(timerMs);
      out.writeInt(buffer.size());
      for (PEvent e : buffer) {
        writeEvent(out, e);
      }
      Map<PEvent, Integer> index = new IdentityHashMap<>();
      List<PEvent> taken = new ArrayList<>();
      List<Partial> all = new ArrayList<>(partials);
      all.addAll(held);
      for (Partial p : all) {
        for (PEvent e : p.events) {
          if (!index.containsKey(e)) {
            index.put(e, taken.size());
            taken.add(e);
          }
        }
      }
      out.writeInt(taken.size());
      for (PEvent e : taken) {
        writeEvent(out, e);
      }
      out.writeInt(partials.size());
      out.writeInt(held.size());
      for (Partial p : all) {
        out.writeInt(p.stage);
        out.writeInt(p.count);
        out.writeInt(p.guard);
        out.writeBoolean(p.committed);
        out.writeInt(p.events.size());
        for (int i = 0; i < p.events.size(); i++) {
          out.writeInt(index.get(p.events.get(i)));
          out.writeInt(p.stageOf[i]);
        }
      }
      out.flush();
      return bytes.toByteArray();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static KeyState decode(byte[] data) {
    try {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
      byte version = in.readByte();
      if (version != VERSION && version != VERSION_1) {
        throw new IllegalStateException("pattern state version " + version + " is neither "
            + VERSION_1 + " nor " + VERSION + "; this checkpoint was written by a newer "
            + "streamwarden: run that version, or start the query on a new checkpoint location");
      }
      boolean v1 = version == VERSION_1;
      KeyState s = new KeyState();
      s.nextSeq = in.readLong();
      s.nextOrd = in.readLong();
      s.timerMs = in.readLong();
      int buffered = in.readInt();
      for (int i = 0; i < buffered; i++) {
        s.buffer.add(readEvent(in));
      }
      int takenCount = in.readInt();
      List<PEvent> taken = new ArrayList<>(takenCount);
      for (int i = 0; i < takenCount; i++) {
        taken.add(readEvent(in));
      }
      int partialCount = in.readInt();
      int heldCount = v1 ? 0 : in.readInt();
      for (int i = 0; i < partialCount + heldCount; i++) {
        int stage = in.readInt();
        int count = in.readInt();
        int guard = in.readInt();
        boolean committed = !v1 && in.readBoolean();
        int n = in.readInt();
        List<PEvent> events = new ArrayList<>(n);
        int[] stageOf = new int[n];
        for (int j = 0; j < n; j++) {
          events.add(taken.get(in.readInt()));
          stageOf[j] = in.readInt();
        }
        Partial p = new Partial(stage, count, guard, committed, events, stageOf);
        (i < partialCount ? s.partials : s.held).add(p);
      }
      return s;
    } catch (IOException e) {
      throw new IllegalStateException("unreadable pattern state: " + e.getMessage(), e);
    }
  }

  private static void writeEvent(DataOutputStream out, PEvent e) throws IOException {
    out.writeLong(e.tsMs);
    out.writeLong(e.mask);
    out.writeLong(e.seq);
    out.writeLong(e.ord);
    out.writeShort(e.values.length);
    for (String v : e.values) {
      out.writeBoolean(v != null);
      if (v != null) {
        out.writeUTF(v);
      }
    }
  }

  private static PEvent readEvent(DataInputStream in) throws IOException {
    long ts = in.readLong();
    long mask = in.readLong();
    long seq = in.readLong();
    long ord = in.readLong();
    String[] values = new String[in.readShort()];
    for (int i = 0; i < values.length; i++) {
      values[i] = in.readBoolean() ? in.readUTF() : null;
    }
    PEvent e = new PEvent(ts, mask, values);
    e.seq = seq;
    e.ord = ord;
    return e;
  }
}
