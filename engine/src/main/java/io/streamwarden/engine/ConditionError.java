package io.streamwarden.engine;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What a stage condition threw on a record, as {@link Poison#describe} writes it (the exception's
 * class and message on one line), or null where it did not throw. {@code TryEval}-guarded
 * conditions only say that a condition threw; this says what, for the {@code poison} dead
 * letter. Evaluated by interpretation ({@link CodegenFallback}) and only for the records whose
 * guarded condition is null, so it costs nothing on the records that pass.
 *
 * <p>It extends {@code Expression}, not {@code UnaryExpression}: javac cannot subclass the
 * latter (its Scala trait forwarders have signatures that clash in Java).
 *
 * @see ConditionGuard#errorOf
 */
public final class ConditionError extends Expression
    implements CodegenFallback, Serializable {
  private static final long serialVersionUID = 1L;

  private final Expression condition;
  private final Seq<Expression> children;

  public ConditionError(Expression condition) {
    this.condition = condition;
    this.children = CollectionConverters.asScala(List.of(condition)).toList();
  }

  @Override
  public Seq<Expression> children() {
    return children;
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
    return new ConditionError(newChildren.head());
  }

  @Override
  public Object eval(InternalRow input) {
    try {
      condition.eval(input);
      return null;
    } catch (RuntimeException e) {
      return UTF8String.fromString(Poison.describe(e));
    }
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    return CodegenFallback.super.doGenCode(ctx, ev);
  }

  @Override
  public DataType dataType() {
    return DataTypes.StringType;
  }

  @Override
  public boolean nullable() {
    return true;
  }

  @Override
  public String prettyName() {
    return "condition_error";
  }

  @Override
  public int productArity() {
    return 1;
  }

  @Override
  public Object productElement(int n) {
    if (n != 0) {
      throw new IndexOutOfBoundsException(String.valueOf(n));
    }
    return condition;
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof ConditionError;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof ConditionError o && condition.equals(o.condition);
  }

  @Override
  public int hashCode() {
    return 31 * ConditionError.class.hashCode() + condition.hashCode();
  }
}
