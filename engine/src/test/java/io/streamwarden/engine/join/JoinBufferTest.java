package io.streamwarden.engine.join;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.encoders.AgnosticEncoder;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/** The join's state goes through Spark's bean encoder whole, as the state store keeps it. */
class JoinBufferTest {
  @Test
  void theBufferRoundTripsThroughSparksBeanEncoder() {
    ExpressionEncoder<JoinBuffer> encoder = beanEncoder();
    StructType row = (StructType) ((ArrayType) encoder.schema().apply("left").dataType())
        .elementType();
    assertEquals(List.of("matched", "row", "tsMs"), Arrays.asList(row.fieldNames()));
    assertEquals(List.of("left", "right", "timerMs"),
        Arrays.asList(encoder.schema().fieldNames()));

    JoinBuffer buffer = new JoinBuffer();
    Buffered left = new Buffered(100, "{\"a\":1}");
    left.setMatched(true);
    buffer.getLeft().add(left);
    buffer.getRight().add(new Buffered(105, "{\"b\":2}"));
    buffer.setTimerMs(111);
    InternalRow stored = encoder.createSerializer().apply(buffer);
    JoinBuffer back = encoder.resolveAndBind(encoder.resolveAndBind$default$1(),
        encoder.resolveAndBind$default$2()).createDeserializer().apply(stored);
    assertEquals(111, back.getTimerMs());
    assertEquals(100, back.getLeft().get(0).getTsMs());
    assertEquals("{\"a\":1}", back.getLeft().get(0).getRow());
    assertTrue(back.getLeft().get(0).isMatched());
    assertFalse(back.getRight().get(0).isMatched());
    back.getRight().add(new Buffered(106, null)); // the logic changes the lists it reads
    assertEquals(3, back.rowCount());
  }

  @SuppressWarnings("unchecked") // Encoders.bean makes an agnostic encoder of the bean class
  private static ExpressionEncoder<JoinBuffer> beanEncoder() {
    return ExpressionEncoder.apply(
        (AgnosticEncoder<JoinBuffer>) Encoders.bean(JoinBuffer.class));
  }
}
