package ais.flink;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * A batch of records as columns (a row whose fields are arrays, one value per record, as a
 * Python operator emits them: one crossing per batch instead of one per record) back into one
 * row per record. The column row must have the record type's arity; all columns the same length.
 */
public final class ColumnsToRows implements FlatMapFunction<Row, Row> {
    private static final long serialVersionUID = 1L;

    private final int arity;

    public ColumnsToRows(RowTypeInfo recordType) {
        this.arity = recordType.getArity();
    }

    @Override
    public void flatMap(Row batch, Collector<Row> out) {
        if (batch.getArity() != arity) {
            throw new IllegalArgumentException("a batch of " + batch.getArity() + " columns for records of " + arity);
        }
        Object[][] columns = new Object[arity][];
        for (int c = 0; c < arity; c++) {
            columns[c] = (Object[]) batch.getField(c);
        }
        int n = columns[0].length;
        for (int i = 0; i < n; i++) {
            Row row = new Row(arity);
            for (int c = 0; c < arity; c++) {
                row.setField(c, columns[c][i]);
            }
            out.collect(row);
        }
    }
}
