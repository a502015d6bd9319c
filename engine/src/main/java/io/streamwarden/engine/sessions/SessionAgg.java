package io.streamwarden.engine.sessions;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * The compact summary of one session: everything its output row needs, never the raw events.
 *
 * <p>A Java bean so that Spark's bean encoder can store it in the state store, readable by the
 * state data source. {@code revision} is -1 until the session is first emitted; {@code sessionId}
 * is assigned at that moment and kept for every later revision.
 */
public final class SessionAgg implements Serializable {
  private static final long serialVersionUID = 1L;

  private long startMs;
  private long endMs;
  private long pageCount;
  private long bytes;
  private String firstUrl;
  private String lastUrl;
  private List<String> urls;
  private List<Long> urlTimes;
  private boolean truncated;
  private boolean closed;
  private String sessionId;
  private int revision = -1;
  private List<String> mergedIds;

  public SessionAgg() {}

  static SessionAgg of(Event e, boolean collectUrls) {
    SessionAgg s = new SessionAgg();
    s.startMs = e.tsMs;
    s.endMs = e.tsMs;
    s.pageCount = 1;
    s.bytes = e.size;
    s.firstUrl = e.url;
    s.lastUrl = e.url;
    if (collectUrls) {
      s.urls = new ArrayList<>();
      s.urlTimes = new ArrayList<>();
      s.urls.add(e.url);
      s.urlTimes.add(e.tsMs);
    }
    return s;
  }

  /** A shallow copy for output; lists are replaced, never mutated in place, after emission. */
  SessionAgg snapshot() {
    SessionAgg c = new SessionAgg();
    c.startMs = startMs;
    c.endMs = endMs;
    c.pageCount = pageCount;
    c.bytes = bytes;
    c.firstUrl = firstUrl;
    c.lastUrl = lastUrl;
    c.urls = urls;
    c.urlTimes = urlTimes;
    c.truncated = truncated;
    c.closed = closed;
    c.sessionId = sessionId;
    c.revision = revision;
    c.mergedIds = mergedIds;
    return c;
  }

  /** Folds {@code other} into this session; both must belong to the same user. */
  void absorb(SessionAgg other) {
    if (other.startMs < startMs) {
      startMs = other.startMs;
      firstUrl = other.firstUrl;
    }
    if (other.endMs >= endMs) {
      endMs = other.endMs;
      lastUrl = other.lastUrl;
    }
    pageCount += other.pageCount;
    bytes += other.bytes;
    truncated |= other.truncated;
    if (urls != null && other.urls != null) {
      mergeUrls(other.urls, other.urlTimes);
    }
    if (other.sessionId != null) {
      addMergedId(other.sessionId);
    }
    if (other.mergedIds != null) {
      for (String id : other.mergedIds) {
        addMergedId(id);
      }
    }
  }

  private void addMergedId(String id) {
    if (mergedIds == null) {
      mergedIds = new ArrayList<>();
    }
    mergedIds.add(id);
  }

  private void mergeUrls(List<String> otherUrls, List<Long> otherTimes) {
    List<String> mergedUrls = new ArrayList<>(urls.size() + otherUrls.size());
    List<Long> mergedTimes = new ArrayList<>(urls.size() + otherUrls.size());
    int i = 0;
    int j = 0;
    while (i < urls.size() || j < otherUrls.size()) {
      boolean takeMine =
          j >= otherUrls.size() || (i < urls.size() && urlTimes.get(i) <= otherTimes.get(j));
      if (takeMine) {
        mergedUrls.add(urls.get(i));
        mergedTimes.add(urlTimes.get(i++));
      } else {
        mergedUrls.add(otherUrls.get(j));
        mergedTimes.add(otherTimes.get(j++));
      }
    }
    urls = mergedUrls;
    urlTimes = mergedTimes;
  }

  public long getStartMs() { return startMs; }
  public void setStartMs(long v) { startMs = v; }
  public long getEndMs() { return endMs; }
  public void setEndMs(long v) { endMs = v; }
  public long getPageCount() { return pageCount; }
  public void setPageCount(long v) { pageCount = v; }
  public long getBytes() { return bytes; }
  public void setBytes(long v) { bytes = v; }
  public String getFirstUrl() { return firstUrl; }
  public void setFirstUrl(String v) { firstUrl = v; }
  public String getLastUrl() { return lastUrl; }
  public void setLastUrl(String v) { lastUrl = v; }
  public List<String> getUrls() { return urls; }
  public void setUrls(List<String> v) { urls = v; }
  public List<Long> getUrlTimes() { return urlTimes; }
  public void setUrlTimes(List<Long> v) { urlTimes = v; }
  public boolean isTruncated() { return truncated; }
  public void setTruncated(boolean v) { truncated = v; }
  public boolean isClosed() { return closed; }
  public void setClosed(boolean v) { closed = v; }
  public String getSessionId() { return sessionId; }
  public void setSessionId(String v) { sessionId = v; }
  public int getRevision() { return revision; }
  public void setRevision(int v) { revision = v; }
  public List<String> getMergedIds() { return mergedIds; }
  public void setMergedIds(List<String> v) { mergedIds = v; }
}
