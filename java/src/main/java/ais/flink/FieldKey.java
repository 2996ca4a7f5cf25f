package ais.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;

/** Keys rows on one field, named. */
public final class FieldKey implements KeySelector<Row, Object>, ResultTypeQueryable<Object> {
    private static final long serialVersionUID = 1L;

    private final int index;
    private final TypeInformation<Object> type;

    @SuppressWarnings("unchecked")
    public FieldKey(RowTypeInfo recordType, String field) {
        this.index = recordType.getFieldIndex(field);
        if (index < 0) {
            throw new IllegalArgumentException("no field '" + field + "' to key on");
        }
        this.type = (TypeInformation<Object>) recordType.getTypeAt(index);
    }

    @Override
    public Object getKey(Row row) {
        return row.getField(index);
    }

    @Override
    public TypeInformation<Object> getProducedType() {
        return type;
    }
}
