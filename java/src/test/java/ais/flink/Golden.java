package ais.flink;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/** The golden cases shared with the Python reference ({@code tests/golden/}). */
final class Golden {
    static final ObjectMapper JSON = new ObjectMapper();

    private Golden() {}

    static JsonNode load(String name) throws IOException {
        String dir = System.getProperty("golden.dir", "../tests/golden");
        return JSON.readTree(new File(dir, name));
    }

    static List<JsonNode> cases(String name) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        load(name).get("cases").forEach(out::add);
        return out;
    }
}
