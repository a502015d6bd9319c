package io.streamwarden.engine.json;

import org.apache.spark.unsafe.types.UTF8String;

/** Characters straight to a UTF8String, without the String between them. */
final class Utf8 {
  private static final int REPLACEMENT = 0xFFFD;

  private Utf8() {}

  /** The UTF-8 of {@code length} characters at {@code offset}; an unpaired surrogate as U+FFFD. */
  static UTF8String of(char[] chars, int offset, int length) {
    byte[] ascii = new byte[length];
    for (int i = 0; i < length; i++) {
      char c = chars[offset + i];
      if (c >= 0x80) {
        return UTF8String.fromBytes(encode(chars, offset, length));
      }
      ascii[i] = (byte) c;
    }
    return UTF8String.fromBytes(ascii);
  }

  private static byte[] encode(char[] chars, int offset, int length) {
    byte[] out = new byte[size(chars, offset, length)];
    int at = 0;
    int end = offset + length;
    for (int i = offset; i < end; i++) {
      int c = chars[i];
      if (Character.isHighSurrogate((char) c) && i + 1 < end
          && Character.isLowSurrogate(chars[i + 1])) {
        c = Character.toCodePoint((char) c, chars[++i]);
      } else if (Character.isSurrogate((char) c)) {
        c = REPLACEMENT;
      }
      if (c < 0x80) {
        out[at++] = (byte) c;
      } else if (c < 0x800) {
        out[at++] = (byte) (0xC0 | c >> 6);
        out[at++] = (byte) (0x80 | (c & 0x3F));
      } else if (c < 0x10000) {
        out[at++] = (byte) (0xE0 | c >> 12);
        out[at++] = (byte) (0x80 | (c >> 6 & 0x3F));
        out[at++] = (byte) (0x80 | (c & 0x3F));
      } else {
        out[at++] = (byte) (0xF0 | c >> 18);
        out[at++] = (byte) (0x80 | (c >> 12 & 0x3F));
        out[at++] = (byte) (0x80 | (c >> 6 & 0x3F));
        out[at++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return out;
  }

  /** The UTF-8 length of the characters: a pair is 4 bytes, an unpaired surrogate U+FFFD's 3. */
  private static int size(char[] chars, int offset, int length) {
    int size = 0;
    int end = offset + length;
    for (int i = offset; i < end; i++) {
      char c = chars[i];
      if (c < 0x80) {
        size += 1;
      } else if (c < 0x800) {
        size += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < end
          && Character.isLowSurrogate(chars[i + 1])) {
        size += 4;
        i++;
      } else {
        size += 3;
      }
    }
    return size;
  }
}
