package ais.flink;

import org.apache.flink.metrics.Gauge;

/**
 * A whole-number gauge whose value a Python operator sets (after each batch and timer), read by
 * Flink's metric threads without calling into Python.
 *
 * <p>PyFlink's own Python gauge calls back into the interpreter from the metric thread; in thread
 * mode that call crashed a TaskManager (SIGSEGV in {@code take_gil}) when the web UI or the REST
 * API read the gauge while the task's interpreter was being closed at the end of a job.
 */
public final class SetGauge implements Gauge<Long> {
    private volatile long value;

    /** Made from Python with {@code Class.newInstance()}: pemja cannot pass constructor arguments. */
    public SetGauge() {}

    public void set(long value) {
        this.value = value;
    }

    @Override
    public Long getValue() {
        return value;
    }
}
