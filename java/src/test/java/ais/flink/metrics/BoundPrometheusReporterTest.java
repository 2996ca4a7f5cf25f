package ais.flink.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class BoundPrometheusReporterTest {

    private static BoundPrometheusReporter reporter(String host, String ports) {
        Properties properties = new Properties();
        if (host != null) {
            properties.setProperty(BoundPrometheusReporterFactory.HOST, host);
        }
        properties.setProperty(BoundPrometheusReporterFactory.PORT, ports);
        return new BoundPrometheusReporterFactory().createMetricReporter(properties);
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** An address of this machine that is not loopback, if it has one. */
    private static Optional<InetAddress> externalAddress() throws IOException {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            for (InetAddress address : Collections.list(nic.getInetAddresses())) {
                if (address instanceof Inet4Address && !address.isLoopbackAddress()) {
                    return Optional.of(address);
                }
            }
        }
        return Optional.empty();
    }

    private static boolean accepts(InetAddress address, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void servesMetricsOnLoopbackByDefaultAndNowhereElse() throws IOException {
        int port = freePort();
        BoundPrometheusReporter reporter = reporter(null, String.valueOf(port));
        try {
            assertEquals(port, reporter.getPort());
            HttpURLConnection http =
                    (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/metrics").openConnection();
            assertEquals(200, http.getResponseCode());
            try (InputStream body = http.getInputStream()) {
                new String(body.readAllBytes(), StandardCharsets.UTF_8);
            }
            Optional<InetAddress> external = externalAddress();
            if (external.isPresent()) {
                assertTrue(!accepts(external.get(), port), "reachable on " + external.get());
            }
        } finally {
            reporter.close();
        }
        assertTrue(!accepts(InetAddress.getLoopbackAddress(), port), "still serving after close");
    }

    @Test
    void takesTheFirstFreePortOfTheRange() throws IOException {
        int first = freePort();
        try (ServerSocket taken = new ServerSocket(first, 1, InetAddress.getByName("127.0.0.1"))) {
            BoundPrometheusReporter reporter = reporter("127.0.0.1", first + "-" + (first + 20));
            try {
                assertTrue(reporter.getPort() > first && reporter.getPort() <= first + 20);
            } finally {
                reporter.close();
            }
        }
    }

    @Test
    void servesEveryInterfaceWhenOpened() throws IOException {
        Optional<InetAddress> external = externalAddress();
        int port = freePort();
        BoundPrometheusReporter reporter = reporter("0.0.0.0", String.valueOf(port));
        try {
            assertTrue(accepts(InetAddress.getLoopbackAddress(), port));
            if (external.isPresent()) {
                assertTrue(accepts(external.get(), port), "not reachable on " + external.get());
            }
        } finally {
            reporter.close();
        }
    }

    @Test
    void failsWithTheAddressWhenNoPortIsFree() throws IOException {
        int port = freePort();
        try (ServerSocket taken = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            RuntimeException error =
                    assertThrows(RuntimeException.class, () -> reporter("127.0.0.1", String.valueOf(port)));
            assertTrue(error.getMessage().contains("127.0.0.1:" + port), error.getMessage());
        }
    }
}
