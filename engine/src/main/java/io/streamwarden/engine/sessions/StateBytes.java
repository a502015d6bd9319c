package io.streamwarden.engine.sessions;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The byte layer of the aggregate state ({@link AggregatePlan#encode}): a growable writer and a
 * reader of variable-length integers (LEB128, signed ones zigzag-coded), fixed 8-byte doubles
 * and UTF-8 strings. No stream objects, so that encoding a touched session costs one array.
 */
final class StateBytes {
  private StateBytes() {}

  /** Bytes of {@code s} in UTF-8, without encoding it (a lone surrogate counts as '?'). */
  static int utf8Length(String s) {
    int n = s.length();
    int bytes = n;
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) {
        if (c < 0x800) {
          bytes += 1;
        } else if (Character.isHighSurrogate(c) && i + 1 < n
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          bytes += 2; // the pair's two chars count 2, its four bytes 4
          i++;
        } else if (Character.isSurrogate(c)) {
          bytes += 0; // lone surrogate: '?'
        } else {
          bytes += 2;
        }
      }
    }
    return bytes;
  }

  /** Appends to a growable array; {@link #toBytes} copies out what was written. */
  static final class Writer {
    private byte[] buf = new byte[128];
    private int len;

    void reset() {
      len = 0;
    }

    byte[] toBytes() {
      return Arrays.copyOf(buf, len);
    }

    private void ensure(int more) {
      if (len + more > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
      }
    }

    void writeByte(int b) {
      ensure(1);
      buf[len++] = (byte) b;
    }

    void writeBoolean(boolean b) {
      writeByte(b ? 1 : 0);
    }

    /** An unsigned variable-length integer (7 bits a byte, low first). */
    void writeVarLong(long v) {
      ensure(10);
      while ((v & ~0x7FL) != 0) {
        buf[len++] = (byte) ((v & 0x7F) | 0x80);
        v >>>= 7;
      }
      buf[len++] = (byte) v;
    }

    /** A signed variable-length integer, zigzag-coded so that small magnitudes stay short. */
    void writeZigZag(long v) {
      writeVarLong((v << 1) ^ (v >> 63));
    }

    void writeInt(int v) {
      ensure(4);
      buf[len++] = (byte) (v >>> 24);
      buf[len++] = (byte) (v >>> 16);
      buf[len++] = (byte) (v >>> 8);
      buf[len++] = (byte) v;
    }

    void writeDouble(double d) {
      long bits = Double.doubleToLongBits(d);
      ensure(8);
      for (int shift = 56; shift >= 0; shift -= 8) {
        buf[len++] = (byte) (bits >>> shift);
      }
    }

    void writeBytes(byte[] bytes) {
      writeVarLong(bytes.length);
      ensure(bytes.length);
      System.arraycopy(bytes, 0, buf, len, bytes.length);
      len += bytes.length;
    }

    /** Its UTF-8 length, then its UTF-8 bytes (a lone surrogate as '?', as String does). */
    void writeString(String s) {
      int n = s.length();
      writeVarLong(utf8Length(s));
      ensure(n * 3);
      for (int i = 0; i < n; i++) {
        char c = s.charAt(i);
        if (c < 0x80) {
          buf[len++] = (byte) c;
        } else if (c < 0x800) {
          buf[len++] = (byte) (0xC0 | (c >> 6));
          buf[len++] = (byte) (0x80 | (c & 0x3F));
        } else if (Character.isHighSurrogate(c) && i + 1 < n
            && Character.isLowSurrogate(s.charAt(i + 1))) {
          int cp = Character.toCodePoint(c, s.charAt(++i));
          buf[len++] = (byte) (0xF0 | (cp >> 18));
          buf[len++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
          buf[len++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
          buf[len++] = (byte) (0x80 | (cp & 0x3F));
        } else if (Character.isSurrogate(c)) {
          buf[len++] = (byte) '?';
        } else {
          buf[len++] = (byte) (0xE0 | (c >> 12));
          buf[len++] = (byte) (0x80 | ((c >> 6) & 0x3F));
          buf[len++] = (byte) (0x80 | (c & 0x3F));
        }
      }
    }
  }

  /** Reads what a {@link Writer} wrote; running past the end throws. */
  static final class Reader {
    private final byte[] buf;
    private int pos;

    Reader(byte[] buf) {
      this.buf = buf;
    }

    boolean atEnd() {
      return pos == buf.length;
    }

    private void need(int n) {
      if (pos + n > buf.length) {
        throw new IllegalStateException("aggregate state is cut short: " + buf.length
            + " bytes, reading " + n + " at " + pos);
      }
    }

    int readByte() {
      need(1);
      return buf[pos++] & 0xFF;
    }

    boolean readBoolean() {
      return readByte() != 0;
    }

    long readVarLong() {
      long v = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        int b = readByte();
        v |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) == 0) {
          return v;
        }
      }
      throw new IllegalStateException("aggregate state holds a malformed number at " + pos);
    }

    long readZigZag() {
      long v = readVarLong();
      return (v >>> 1) ^ -(v & 1);
    }

    /**
     * A byte length or an element count, each element taking a byte at least: never more than
     * what is left, so that damaged state cannot make a huge array.
     */
    int readLength() {
      long n = readVarLong();
      if (n < 0 || n > buf.length - pos) {
        throw new IllegalStateException("aggregate state holds a bad length " + n);
      }
      return (int) n;
    }

    int readInt() {
      need(4);
      int v = ((buf[pos] & 0xFF) << 24) | ((buf[pos + 1] & 0xFF) << 16)
          | ((buf[pos + 2] & 0xFF) << 8) | (buf[pos + 3] & 0xFF);
      pos += 4;
      return v;
    }

    double readDouble() {
      need(8);
      long bits = 0;
      for (int i = 0; i < 8; i++) {
        bits = (bits << 8) | (buf[pos++] & 0xFF);
      }
      return Double.longBitsToDouble(bits);
    }

    byte[] readBytes() {
      int n = readLength();
      need(n);
      byte[] out = Arrays.copyOfRange(buf, pos, pos + n);
      pos += n;
      return out;
    }

    String readString() {
      int n = readLength();
      need(n);
      String s = new String(buf, pos, n, StandardCharsets.UTF_8);
      pos += n;
      return s;
    }
  }
}
