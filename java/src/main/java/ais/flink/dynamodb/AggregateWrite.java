package ais.flink.dynamodb;

import java.io.Serializable;

/** One aggregate waiting to be written (its JSON line), and how many rounds it has failed. */
public final class AggregateWrite implements Serializable {
    private static final long serialVersionUID = 1L;

    final String json;
    final int failures;

    AggregateWrite(String json, int failures) {
        this.json = json;
        this.failures = failures;
    }

    AggregateWrite failedAgain() {
        return new AggregateWrite(json, failures + 1);
    }
}
