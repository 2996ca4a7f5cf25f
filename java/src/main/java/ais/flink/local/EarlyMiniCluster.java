package ais.flink.local;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.flink.client.deployment.executors.LocalExecutor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.PipelineExecutor;
import org.apache.flink.core.execution.PipelineExecutorFactory;
import org.apache.flink.core.execution.PipelineExecutorServiceLoader;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.minicluster.RpcServiceSharing;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A local run's mini-cluster, started in the background as soon as the run's environment exists,
 * so that its start (RPC services, blob server, TaskManager, REST endpoint: about two seconds)
 * overlaps building the job. Flink's local executor starts the mini-cluster only when the job is
 * submitted.
 *
 * <p>The environment's first job runs on this cluster, through Flink's own {@link LocalExecutor}
 * (which calls {@link #start()} and, once the job has ended, shuts the cluster down), when the
 * cluster the local executor would make for it has the same shape (task managers, slots, and the
 * cluster's own settings: see {@link #fits}); any other job of the environment gets a mini-cluster
 * of its own, as the local executor would give it, and a cluster no job took is shut down by
 * {@link #closeUnlessTaken()}. Used only from the gateway JVM of a local run (this class is on its
 * classpath, in the metrics jar).
 */
public final class EarlyMiniCluster extends MiniCluster {

    private static final Logger LOG = LoggerFactory.getLogger(EarlyMiniCluster.class);

    /** The settings of the cluster itself, as opposed to those of a job (pipeline, python, execution). */
    private static final List<String> CLUSTER_SETTINGS = List.of(
            "taskmanager.", "jobmanager.", "rest.", "metrics.", "blob.", "cluster.", "web.", "io.tmp.dirs",
            "high-availability", "heartbeat.", "resourcemanager.", "slot.", "pekko.");

    private final CompletableFuture<Void> started = new CompletableFuture<>();
    private final AtomicBoolean taken = new AtomicBoolean();
    private final Configuration configuration;
    private final MiniClusterConfiguration planned;

    private EarlyMiniCluster(Configuration configuration, MiniClusterConfiguration planned) {
        super(planned);
        this.configuration = configuration;
        this.planned = planned;
    }

    /** A mini-cluster for these settings, its start begun on a thread of its own. */
    public static EarlyMiniCluster starting(Configuration settings) {
        Configuration configuration = new Configuration(settings);
        configuration.set(DeploymentOptions.TARGET, LocalExecutor.NAME);
        configuration.set(DeploymentOptions.ATTACHED, true);
        EarlyMiniCluster cluster = new EarlyMiniCluster(configuration, clusterConfiguration(configuration));
        Thread thread = new Thread(cluster::startNow, "mini-cluster start");
        thread.setDaemon(true);
        thread.start();
        return cluster;
    }

    /** The cluster a job of these settings gets from Flink's local executor. */
    static MiniClusterConfiguration clusterConfiguration(Configuration settings) {
        Configuration configuration = new Configuration(settings);
        if (!configuration.contains(RestOptions.BIND_PORT)) {
            configuration.set(RestOptions.BIND_PORT, "0");
        }
        return new MiniClusterConfiguration.Builder()
                .setConfiguration(configuration)
                .setNumTaskManagers(configuration.get(TaskManagerOptions.MINI_CLUSTER_NUM_TASK_MANAGERS))
                .setRpcServiceSharing(RpcServiceSharing.SHARED)
                .setNumSlotsPerTaskManager(configuration.get(TaskManagerOptions.NUM_TASK_SLOTS))
                .build();
    }

    private void startNow() {
        try {
            super.start();
            started.complete(null);
        } catch (Throwable failure) {
            started.completeExceptionally(failure);
        }
    }

    /** Waits for the background start (the local executor calls this when it submits the job); its failure, if it failed. */
    @Override
    public void start() throws Exception {
        try {
            started.get();
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw cause instanceof Exception ? (Exception) cause : new Exception(cause);
        }
    }

    /**
     * Whether the cluster the local executor would start for a job is this one: the same number of
     * task managers and the same cluster settings, their slots among them (a job's own settings,
     * such as its jars and Python files, travel with the job).
     */
    boolean fits(MiniClusterConfiguration wanted) {
        return wanted.getNumTaskManagers() == planned.getNumTaskManagers()
                && wanted.getRpcServiceSharing() == planned.getRpcServiceSharing()
                && clusterSettings(wanted.getConfiguration()).equals(clusterSettings(planned.getConfiguration()));
    }

    private static Map<String, String> clusterSettings(Configuration configuration) {
        Map<String, String> out = new TreeMap<>();
        configuration.toMap().forEach((key, value) -> {
            if (CLUSTER_SETTINGS.stream().anyMatch(key::startsWith)) {
                out.put(key, value);
            }
        });
        return out;
    }

    /** The cluster for the job the local executor is about to submit: this one once, if it fits. */
    private MiniCluster forJob(MiniClusterConfiguration wanted) {
        if (taken.compareAndSet(false, true)) {
            if (fits(wanted)) {
                return this;
            }
            LOG.info("The job's cluster settings differ from those the mini-cluster was started with: a new one for the job");
            started.handle((ok, failed) -> closeAsync());
        }
        return new MiniCluster(wanted);
    }

    /** An execution environment of these settings whose first job runs on this cluster. */
    public StreamExecutionEnvironment environment() {
        PipelineExecutorFactory local = new PipelineExecutorFactory() {
            @Override
            public String getName() {
                return LocalExecutor.NAME;
            }

            @Override
            public boolean isCompatibleWith(Configuration given) {
                return LocalExecutor.NAME.equals(given.get(DeploymentOptions.TARGET));
            }

            @Override
            public PipelineExecutor getExecutor(Configuration given) {
                return LocalExecutor.createWithFactory(given, EarlyMiniCluster.this::forJob);
            }
        };
        PipelineExecutorServiceLoader executors = new PipelineExecutorServiceLoader() {
            @Override
            public PipelineExecutorFactory getExecutorFactory(Configuration given) {
                if (!local.isCompatibleWith(given)) {
                    throw new IllegalStateException("a local run's environment executes only locally, not on " + given.get(DeploymentOptions.TARGET));
                }
                return local;
            }

            @Override
            public Stream<String> getExecutorNames() {
                return Stream.of(LocalExecutor.NAME);
            }
        };
        return new StreamExecutionEnvironment(executors, configuration, null);
    }

    /** Whether a job has taken this cluster (it then shuts down with that job). */
    public boolean isTaken() {
        return taken.get();
    }

    /**
     * Shuts the cluster down unless a job took it; waits until it is down (after its start has
     * ended: a close before the start takes the cluster's lock would find nothing to close).
     */
    public void closeUnlessTaken() throws Exception {
        if (taken.compareAndSet(false, true)) {
            started.handle((ok, failed) -> null).join();
            close();
        }
    }
}
