package ais.flink.metrics;

import io.prometheus.client.CollectorRegistry;
import io.prometheus.client.exporter.HTTPServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.Iterator;
import org.apache.flink.metrics.prometheus.AbstractPrometheusReporter;
import org.apache.flink.util.PortRange;

/**
 * Flink's Prometheus reporter, serving on one address instead of every interface.
 *
 * <p>Flink's own {@code PrometheusReporter} (2.3.0) opens its HTTP server on the wildcard address
 * and has no option to change that; this one is the same reporter (the metric registry and its
 * collectors are Flink's, from {@link AbstractPrometheusReporter}) with the server bound to
 * {@code host}: 127.0.0.1 unless the run was opened to the network.
 */
public final class BoundPrometheusReporter extends AbstractPrometheusReporter {

    private final HTTPServer server;
    private final int port;

    BoundPrometheusReporter(String host, PortRange ports) {
        CollectorRegistry registry = registryOf(this);
        HTTPServer started = null;
        int bound = -1;
        for (Iterator<Integer> it = ports.getPortsIterator(); it.hasNext() && started == null; ) {
            int candidate = it.next();
            try {
                started = new HTTPServer(new InetSocketAddress(host, candidate), registry, true);
                bound = candidate;
            } catch (IOException e) {
                log.debug("Port {} of {} is taken", candidate, host, e);
            }
        }
        if (started == null) {
            throw new RuntimeException(
                    "Could not start the Prometheus reporter's HTTP server on " + host + ":" + ports);
        }
        server = started;
        port = bound;
        log.info("Started the Prometheus reporter's HTTP server on {}:{}", host, port);
    }

    int getPort() {
        return port;
    }

    @Override
    public void close() {
        server.stop();
        super.close();
    }

    /** The registry that the base class fills (a package-private field of Flink's class). */
    private static CollectorRegistry registryOf(AbstractPrometheusReporter reporter) {
        try {
            Field field = AbstractPrometheusReporter.class.getDeclaredField("registry");
            field.setAccessible(true);
            return (CollectorRegistry) field.get(reporter);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "flink-metrics-prometheus changed: AbstractPrometheusReporter.registry is gone", e);
        }
    }
}
