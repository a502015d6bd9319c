package io.streamwarden.engine.patterns;

import io.streamwarden.engine.EngineInput;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The per-key cap on events waiting for the watermark (lesson L4: per-key caps hold before state
 * grows). Waiting is bounded in time by the watermark delay, but not in number: one key sending
 * a burst within that delay would otherwise buffer all of it. Events past the cap are refused
 * and become {@code key_buffer_full} dead letters; which ones depends only on their content
 * (the last ones in {@link PEvent#CONTENT_ORDER}), so a replayed batch refuses the same events.
 */
public final class BufferCap {

  private BufferCap() {}

  /**
   * Removes from {@code fresh} the events that do not fit and returns their {@code sources}
   * (same index as in {@code fresh}), in content order.
   *
   * @param watermarkMs events of {@code s}'s buffer at or behind it are consumed in this call,
   *     so they do not count as waiting
   */
  public static <T> List<T> refuse(KeyState s, List<PEvent> fresh, List<T> sources, int cap,
      long watermarkMs) {
    int room = Math.max(0, cap - waiting(s, watermarkMs));
    if (fresh.size() <= room) {
      return List.of();
    }
    List<Integer> order = new ArrayList<>(fresh.size());
    for (int i = 0; i < fresh.size(); i++) {
      order.add(i);
    }
    order.sort(Comparator.comparing(fresh::get, PEvent.CONTENT_ORDER));
    List<PEvent> kept = new ArrayList<>(room);
    List<T> refused = new ArrayList<>(fresh.size() - room);
    for (int i = 0; i < order.size(); i++) {
      int index = order.get(i);
      if (i < room) {
        kept.add(fresh.get(index));
      } else {
        refused.add(sources.get(index));
      }
    }
    fresh.clear();
    fresh.addAll(kept);
    return refused;
  }

  /** Buffered events still waiting after {@code watermarkMs}. */
  public static int waiting(KeyState s, long watermarkMs) {
    int due = 0;
    while (due < s.buffer.size() && s.buffer.get(due).tsMs <= watermarkMs) {
      due++;
    }
    return s.buffer.size() - due;
  }

  /** The detail of a refused event's dead letter. */
  public static String detail(int cap) {
    return "the key's events waiting for the watermark fill max_buffered_per_key (" + cap
        + "); raise max_buffered_per_key, or lower max_out_of_orderness so that events wait "
        + "less";
  }
}
