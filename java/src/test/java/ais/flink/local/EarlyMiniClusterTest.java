package ais.flink.local;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;

class EarlyMiniClusterTest {

    private static Configuration settings() {
        Configuration settings = new Configuration();
        settings.setString("rest.bind-address", "127.0.0.1");
        settings.setString("rest.bind-port", "0");
        settings.setString("taskmanager.numberOfTaskSlots", "2");
        return settings;
    }

    private static List<Long> doubled(StreamExecutionEnvironment env) throws Exception {
        List<Long> out = new ArrayList<>();
        try (CloseableIterator<Long> it = env.fromSequence(1, 4).map(x -> x * 2).executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        out.sort(null);
        return out;
    }

    private static void awaitDown(EarlyMiniCluster cluster) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (cluster.isRunning() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertFalse(cluster.isRunning());
    }

    @Test
    void theFirstJobRunsOnTheEarlyClusterWhichEndsWithIt() throws Exception {
        EarlyMiniCluster cluster = EarlyMiniCluster.starting(settings());
        StreamExecutionEnvironment env = cluster.environment();
        env.setParallelism(2);
        assertFalse(cluster.isTaken());

        assertEquals(List.of(2L, 4L, 6L, 8L), doubled(env));

        assertTrue(cluster.isTaken());
        awaitDown(cluster); // shut down with its job, as Flink's local executor does
        cluster.closeUnlessTaken(); // nothing left to do
    }

    @Test
    void aLaterJobOfTheSameEnvironmentGetsAClusterOfItsOwn() throws Exception {
        EarlyMiniCluster cluster = EarlyMiniCluster.starting(settings());
        StreamExecutionEnvironment env = cluster.environment();

        assertEquals(List.of(2L, 4L, 6L, 8L), doubled(env));
        awaitDown(cluster);
        assertEquals(List.of(2L, 4L, 6L, 8L), doubled(env));
    }

    @Test
    void aClusterNoJobTookIsClosedEvenWhileItIsStillStarting() throws Exception {
        EarlyMiniCluster cluster = EarlyMiniCluster.starting(settings());
        cluster.closeUnlessTaken();

        assertTrue(cluster.isTaken());
        assertFalse(cluster.isRunning());
        Thread.sleep(2_000); // a start that had not begun when it was closed would be up by now
        assertFalse(cluster.isRunning());
    }

    @Test
    void aJobWhoseClusterWouldDifferGetsItsOwnAndTheEarlyOneIsClosed() throws Exception {
        EarlyMiniCluster cluster = EarlyMiniCluster.starting(settings());
        StreamExecutionEnvironment env = cluster.environment();
        ((Configuration) env.getConfiguration()).setString("taskmanager.numberOfTaskSlots", "3");

        assertEquals(List.of(2L, 4L, 6L, 8L), doubled(env));

        assertTrue(cluster.isTaken());
        awaitDown(cluster);
    }

    @Test
    void theClusterTheEnvironmentWasMadeForFitsItsJobsAndAnotherShapeDoesNot() {
        Configuration settings = settings();
        EarlyMiniCluster cluster = EarlyMiniCluster.starting(settings);
        try {
            Configuration job = new Configuration(settings);
            job.setString("pipeline.jars", "file:/tmp/a.jar");
            job.setString("python.files", "/tmp/udfs");
            assertTrue(cluster.fits(EarlyMiniCluster.clusterConfiguration(job)));
            Configuration otherPort = new Configuration(settings);
            otherPort.setString("rest.bind-port", "8089");
            assertFalse(cluster.fits(EarlyMiniCluster.clusterConfiguration(otherPort)));
        } finally {
            assertDoesNotThrow(cluster::closeUnlessTaken);
        }
    }

    @Test
    void aClusterThatCouldNotStartFailsTheJobWithItsCause() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Configuration settings = settings();
            settings.setString("rest.bind-port", String.valueOf(taken.getLocalPort()));
            EarlyMiniCluster cluster = EarlyMiniCluster.starting(settings);
            StreamExecutionEnvironment env = cluster.environment();

            Exception failed = assertThrows(Exception.class, () -> doubled(env));

            Throwable cause = failed;
            while (cause.getCause() != null) {
                cause = cause.getCause();
            }
            assertTrue(cause instanceof java.net.BindException, cause.toString());
            cluster.closeUnlessTaken();
        }
    }
}
