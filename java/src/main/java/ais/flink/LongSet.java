package ais.flink;

import java.util.Arrays;

/** Distinct values (vessels) of a window: a few per cell, so a small array searched in line. */
final class LongSet {
    private long[] values = new long[8];
    private int size;

    void add(long value) {
        for (int i = 0; i < size; i++) {
            if (values[i] == value) {
                return;
            }
        }
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = value;
    }

    void addAll(long[] more) {
        for (long value : more) {
            add(value);
        }
    }

    int size() {
        return size;
    }

    long get(int i) {
        return values[i];
    }
}
