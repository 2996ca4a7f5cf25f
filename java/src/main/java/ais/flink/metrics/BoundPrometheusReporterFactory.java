package ais.flink.metrics;

import java.util.Properties;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.util.PortRange;

/**
 * {@link BoundPrometheusReporter} from a reporter's settings in config.yaml:
 *
 * <pre>
 * metrics.reporter.prom.factory.class: ais.flink.metrics.BoundPrometheusReporterFactory
 * metrics.reporter.prom.host: 127.0.0.1      # the address to serve on (default 127.0.0.1)
 * metrics.reporter.prom.port: 9249-9259      # the first free port of the range (default 9249)
 * </pre>
 */
public final class BoundPrometheusReporterFactory implements MetricReporterFactory {

    static final String HOST = "host";
    static final String PORT = "port";

    @Override
    public BoundPrometheusReporter createMetricReporter(Properties properties) {
        String host = properties.getProperty(HOST, "127.0.0.1");
        PortRange ports = new PortRange(properties.getProperty(PORT, "9249"));
        return new BoundPrometheusReporter(host, ports);
    }
}
