package ais.flink.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;

/**
 * {@code deploy/kubernetes/flink-deployment.yaml} read as the Flink Kubernetes Operator reads it:
 * checked against the operator's own CRD schema of {@code FlinkDeployment} (its OpenAPI v3
 * schema, as the Kubernetes API server checks a resource: a misspelt field, a wrong type or a
 * value outside an enum fails), and against the project's pins (Flink version, image, jars,
 * paths in the image, one slot per TaskManager, savepoint upgrades, no secret in it).
 */
class FlinkDeploymentTest {
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final Path ROOT = Paths.get(System.getProperty("project.root", ".."));

    static JsonNode manifest() throws IOException {
        return YAML.readTree(ROOT.resolve("deploy/kubernetes/flink-deployment.yaml").toFile());
    }

    static JsonNode schema(String version) throws IOException {
        try (InputStream in = FlinkDeploymentTest.class.getResourceAsStream(
                "/kubernetes/flinkdeployments.flink.apache.org-v1.yml")) {
            for (JsonNode v : YAML.readTree(in).at("/spec/versions")) {
                if (v.get("name").asText().equals(version)) {
                    return v.at("/schema/openAPIV3Schema");
                }
            }
        }
        throw new AssertionError("the CRD has no version " + version);
    }

    /** The ways {@code node} breaks {@code schema}, each with its path. */
    static List<String> violations(JsonNode node, JsonNode schema) {
        List<String> out = new ArrayList<>();
        check(node, schema, "", out);
        return out;
    }

    private static void check(JsonNode node, JsonNode schema, String path, List<String> out) {
        boolean intOrString = schema.path("x-kubernetes-int-or-string").asBoolean(false);
        String type = schema.path("type").asText("");
        if (intOrString) {
            if (!(node.isIntegralNumber() || node.isTextual())) {
                out.add(path + ": expected an integer or a string, got " + node.getNodeType());
            }
            return;
        }
        switch (type) {
            case "object":
                if (!node.isObject()) {
                    out.add(path + ": expected an object, got " + node.getNodeType());
                    return;
                }
                JsonNode properties = schema.path("properties");
                JsonNode additional = schema.path("additionalProperties");
                boolean preserve = schema.path("x-kubernetes-preserve-unknown-fields").asBoolean(false);
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> field = it.next();
                    String at = path + "." + field.getKey();
                    if (properties.has(field.getKey())) {
                        check(field.getValue(), properties.get(field.getKey()), at, out);
                    } else if (additional.isObject()) {
                        check(field.getValue(), additional, at, out);
                    } else if (!preserve) {
                        out.add(at + ": no such field");
                    }
                }
                for (JsonNode required : schema.path("required")) {
                    if (!node.has(required.asText())) {
                        out.add(path + "." + required.asText() + ": required");
                    }
                }
                return;
            case "array":
                if (!node.isArray()) {
                    out.add(path + ": expected a list, got " + node.getNodeType());
                    return;
                }
                for (int i = 0; i < node.size(); i++) {
                    check(node.get(i), schema.path("items"), path + "[" + i + "]", out);
                }
                return;
            case "string":
                if (!node.isTextual()) {
                    out.add(path + ": expected a string, got " + node.getNodeType());
                } else if (schema.has("enum")) {
                    boolean listed = false;
                    for (JsonNode value : schema.get("enum")) {
                        listed |= value.asText().equals(node.asText());
                    }
                    if (!listed) {
                        out.add(path + ": " + node.asText() + " is not one of " + schema.get("enum"));
                    }
                }
                return;
            case "integer":
                if (!node.isIntegralNumber()) {
                    out.add(path + ": expected an integer, got " + node.getNodeType());
                }
                return;
            case "number":
                if (!node.isNumber()) {
                    out.add(path + ": expected a number, got " + node.getNodeType());
                }
                return;
            case "boolean":
                if (!node.isBoolean()) {
                    out.add(path + ": expected true or false, got " + node.getNodeType());
                }
                return;
            default:
                // no type: anything (x-kubernetes-preserve-unknown-fields)
        }
    }

    static String read(String path) throws IOException {
        return new String(Files.readAllBytes(ROOT.resolve(path)), StandardCharsets.UTF_8);
    }

    static String pin(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertTrue(m.find(), "no match for " + regex);
        return m.group(1);
    }

    @Test
    void theManifestIsAFlinkDeploymentTheOperatorsSchemaAccepts() throws IOException {
        JsonNode manifest = manifest();
        assertEquals("flink.apache.org/v1beta1", manifest.get("apiVersion").asText());
        assertEquals("FlinkDeployment", manifest.get("kind").asText());
        assertEquals(List.of(), violations(manifest.get("spec"), schema("v1beta1").at("/properties/spec")));
    }

    @Test
    void aMisspeltFieldAWrongTypeOrAnUnknownVersionFails() throws IOException {
        JsonNode spec = schema("v1beta1").at("/properties/spec");
        ObjectNode wrong = (ObjectNode) manifest().get("spec").deepCopy();
        ObjectNode job = (ObjectNode) wrong.get("job");
        job.set("upgradMode", job.remove("upgradeMode"));
        job.put("parallelism", "two");
        wrong.put("flinkVersion", "v2_9");
        List<String> found = violations(wrong, spec);
        assertTrue(found.contains(".job.upgradMode: no such field"), found.toString());
        assertTrue(found.contains(".job.parallelism: expected an integer, got STRING"), found.toString());
        assertTrue(found.stream().anyMatch(v -> v.startsWith(".flinkVersion: v2_9 is not one of")), found.toString());
    }

    @Test
    void theFieldsTheJobDependsOnMatchTheProjectsPins() throws IOException {
        JsonNode spec = manifest().get("spec");
        JsonNode conf = spec.get("flinkConfiguration");
        String pom = read("java/pom.xml");
        String flink = pin(pom, "<flink.version>([^<]+)</flink.version>");
        String[] parts = flink.split("\\.");
        assertEquals("v" + parts[0] + "_" + parts[1], spec.get("flinkVersion").asText());
        String dockerfile = read("docker/Dockerfile");
        assertTrue(dockerfile.contains("FROM flink:" + flink + "-"), "the image is built on Flink " + flink);
        // the image's name and tag: the package's version (pyproject.toml reads it from there), as
        // docker-compose.yml names it
        String version = pin(read("udfs/ais_pipeline/__init__.py"), "(?m)^__version__ = \"([^\"]+)\"");
        assertEquals("ais-pipeline-flink:" + version, spec.get("image").asText());
        assertTrue(read("docker-compose.yml").contains("image: ais-pipeline-flink:" + version));
        // the connectors the image carries are the ones the project pins
        assertEquals(pin(pom, "<flink.kafka.connector.version>([^<]+)<"), pin(dockerfile, "ARG KAFKA_CONNECTOR=(\\S+)"));
        assertEquals(pin(pom, "<flink.jdbc.connector.version>([^<]+)<"), pin(dockerfile, "ARG JDBC_CONNECTOR=(\\S+)"));
        // the Python job, as the image lays it out
        JsonNode job = spec.get("job");
        assertEquals("org.apache.flink.client.python.PythonDriver", job.get("entryClass").asText());
        assertEquals("local:///opt/flink/lib/flink-python-" + flink + ".jar", job.get("jarURI").asText());
        assertTrue(dockerfile.contains("cp /opt/flink/opt/flink-python-*.jar /opt/flink/lib/"));
        List<String> args = new ArrayList<>();
        job.get("args").forEach(a -> args.add(a.asText()));
        assertEquals("/opt/ais/jobs/ais_traffic.py", args.get(args.indexOf("-py") + 1));
        assertTrue(Files.exists(ROOT.resolve("jobs/ais_traffic.py")) && dockerfile.contains("COPY jobs /opt/ais/jobs"));
        assertEquals("/opt/ais/udfs", args.get(args.indexOf("--pyFiles") + 1));
        assertEquals("kafka", args.get(args.indexOf("--source") + 1));
        assertEquals(job.get("parallelism").asText(), args.get(args.indexOf("--parallelism") + 1));
        assertEquals("savepoint", job.get("upgradeMode").asText());
        // thread mode, the image's venv, one slot per TaskManager
        assertEquals("thread", conf.get("python.execution-mode").asText());
        assertEquals("/opt/venv/bin/python", conf.get("python.executable").asText());
        assertTrue(dockerfile.contains("python3 -m venv /opt/venv"));
        assertEquals("1", conf.get("taskmanager.numberOfTaskSlots").asText());
        // checkpoints and savepoints on the mounted volume, the web UI behind a ClusterIP Service
        String mount = spec.at("/podTemplate/spec/containers/0/volumeMounts/0/mountPath").asText();
        for (String key : List.of("execution.checkpointing.dir", "execution.checkpointing.savepoint-dir",
                "high-availability.storageDir")) {
            assertTrue(conf.get(key).asText().startsWith("file://" + mount + "/"), key);
        }
        assertEquals("ais-pipeline-flink-data", spec.at("/podTemplate/spec/volumes/0/persistentVolumeClaim/claimName").asText());
        assertTrue(read("deploy/kubernetes/pvc.yaml").contains("name: ais-pipeline-flink-data"));
        assertEquals("ClusterIP", conf.get("kubernetes.rest-service.exposed.type").asText());
        assertEquals("false", conf.get("web.submit.enable").asText());
        // Prometheus where the pods are annotated to be scraped
        assertEquals(conf.get("metrics.reporter.prom.port").asText(),
                spec.at("/podTemplate/metadata/annotations").get("prometheus.io/port").asText());
        assertEquals("true", spec.at("/podTemplate/metadata/annotations").get("prometheus.io/scrape").asText());
    }

    @Test
    void noSecretIsInTheManifest() throws IOException {
        String text = read("deploy/kubernetes/flink-deployment.yaml").toLowerCase();
        for (String line : text.split("\n")) {
            if (line.trim().startsWith("#")) {
                continue;
            }
            assertFalse(line.matches(".*(password|secret|token|jaas)[a-z._-]*\\s*:\\s*\\S.*")
                    && !line.contains("secretref") && !line.contains("name: ais-pipeline-kafka"), line);
        }
        assertTrue(manifest().at("/spec/podTemplate/spec/containers/0/envFrom/0/secretRef/optional").asBoolean());
    }
}
