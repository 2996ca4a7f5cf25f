package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * The golden archives ({@code tests/golden/archives/}, whole and damaged) read through
 * {@link ArchiveLines}: exactly the lines of {@code tests/golden/archives.json}, which the plain
 * loop's reader gives too ({@code tests/unit/test_golden_archives.py}).
 */
class GoldenArchivesTest {
    static String numbered(int i) {
        return String.format("%07d,golden", i);
    }

    static List<String> expected(String name, JsonNode golden) {
        List<String> lines = new ArrayList<>();
        JsonNode spec = golden.get("lines");
        if (spec.isObject()) {
            for (int i = spec.get("numbered").get(0).asInt(); i < spec.get("numbered").get(1).asInt(); i++) {
                lines.add(numbered(i));
            }
        } else {
            spec.forEach(line -> lines.add(line.asText()));
        }
        if (golden.has("corrupt_archive")) {
            lines.add(ArchiveLines.CORRUPT + name + "\u001f" + golden.get("corrupt_archive").asText());
        }
        return lines;
    }

    @Test
    void everyGoldenArchiveGivesItsLines() throws IOException {
        File dir = new File(System.getProperty("golden.dir", "../tests/golden"), "archives");
        JsonNode cases = Golden.load("archives.json").get("cases");
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = cases.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> golden = it.next();
            String name = golden.getKey();
            List<String> want = expected(name, golden.getValue());
            List<String> got = ArchiveLinesTest.read(new File(dir, name).toPath(), 0);
            if (!want.equals(got)) {
                int n = got.size();
                wrong.add(name + ": " + n + " lines, last " + (n == 0 ? "none" : got.get(n - 1)).replace('\u001f', '|')
                        + "; want " + want.size() + ", last "
                        + (want.isEmpty() ? "none" : want.get(want.size() - 1)).replace('\u001f', '|'));
            }
            checked++;
        }
        assertEquals(List.of(), wrong);
        assertEquals(cases.size(), checked);
    }
}
