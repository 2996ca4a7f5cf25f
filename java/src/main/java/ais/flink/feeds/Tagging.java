package ais.flink.feeds;

/**
 * The tag block a line without one gets when it is received (the rule of the Python reference,
 * {@code ais_pipeline.rules.feeds.tag_line}; the golden cases of {@code tests/golden/feeds.json}
 * run against both): {@code \s:<station>,c:<receive time in ms>,t:received*hh\}. A line that has
 * a tag block already, or is blank, is unchanged. Commas, backslashes and stars in the station
 * (which would break the tag block) become {@code _}.
 */
public final class Tagging {
    /** The {@code t:} field of a stamped tag block: its time is the receive time. */
    public static final String RECEIVED = "t:received";

    private Tagging() {}

    public static String tag(String line, String station, long receivedMs) {
        if (line.startsWith("\\") || line.trim().isEmpty()) {
            return line;
        }
        String body = "s:" + safe(station) + ",c:" + receivedMs + "," + RECEIVED;
        return "\\" + body + "*" + checksum(body) + "\\" + line;
    }

    static String safe(String station) {
        return station.replace(',', '_').replace('\\', '_').replace('*', '_');
    }

    static String checksum(String body) {
        int value = 0;
        for (int i = 0; i < body.length(); i++) {
            value ^= body.charAt(i);
        }
        return String.format("%02X", value & 0xFF);
    }
}
