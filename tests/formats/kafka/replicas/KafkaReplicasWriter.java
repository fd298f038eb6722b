// Writes the replica scenarios of tests/formats/kafka/replicas/scenarios.py with Apache Kafka's own code,
// and records Kafka's answer to "where does each follower truncate". Run by make_java_replicas.py.
//
// Batches: kafka-clients' MemoryRecords.withIdempotentRecords (the partitionLeaderEpoch stamped as the
// leader stamps it), appended to segment files through FileRecords. Epochs: kafka-storage's
// LeaderEpochFileCache over a LeaderEpochCheckpointFile, assigned as UnifiedLog.append does for every
// batch (assign(partitionLeaderEpoch, baseOffset)) and as Partition.makeLeader does on election
// (assign(epoch, logEndOffset)). Offset checkpoints: OffsetCheckpointFile; partition.metadata:
// PartitionMetadataFile. meta.properties is plain text (node.id, version, cluster.id).
//
// The answer, for every ordered pair (leader, follower): the leader is elected in a new epoch
// (1 + the largest epoch of every copy) and assigns it at its log end offset (Partition.makeLeader);
// the follower then fetches as Kafka 4.0's ReplicaFetcherThread does with truncation on fetch
// (KIP-320; AbstractFetcherThread + Partition.fetchRecords): it sends lastFetchedEpoch = its latest
// epoch and fetchOffset = its log end offset; the leader looks the epoch up with
// LeaderEpochFileCache.endOffsetFor(epoch, leaderLogEndOffset) (UnifiedLog.endOffsetForEpoch: an
// undefined offset is no answer) and answers a diverging epoch when (epoch < lastFetchedEpoch ||
// endOffset < fetchOffset); the follower applies AbstractFetcherThread.getOffsetTruncationState
// (KIP-279: an epoch it does not know truncates to the end of its largest smaller epoch, then asks
// again) and truncates (UnifiedLog.truncateTo: LeaderEpochFileCache.truncateFromEndAsyncFlush). A
// follower with no epoch truncates to its high watermark (ReplicaManager.initialFetchOffset,
// AbstractFetcherThread.truncateToHighWatermark). No answer from the leader (it has no epoch):
// OffsetOutOfRange, handled as AbstractFetcherThread.fetchOffsetAndTruncate (truncate to the
// leader's log end offset when below the follower's). The loop lines are a transcription of those
// Scala methods around Kafka's own LeaderEpochFileCache; every epoch lookup is Kafka's.

import java.io.*;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.checkpoint.PartitionMetadataFile;
import org.apache.kafka.storage.internals.epoch.LeaderEpochFileCache;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;

public class KafkaReplicasWriter {
    static final String TOPIC = "orders";
    static final int PARTITION = 0;
    static final TopicPartition TP = new TopicPartition(TOPIC, PARTITION);
    static final Uuid TOPIC_ID = new Uuid(0x9b034d7c1d254ee8L, 0x9398d6189e9913c9L);
    static final long PRODUCER_ID = 4242L, BASE_TIME = 1_700_000_000_000L;
    static final Scheduler SCHEDULER = (Scheduler) Proxy.newProxyInstance(
        Scheduler.class.getClassLoader(), new Class<?>[]{Scheduler.class}, (p, m, a) -> null);  // flushes: not needed

    static class Copy {
        String name; int id; long hw, rp; List<Long> rolls = new ArrayList<>();
        List<long[]> log = new ArrayList<>();  // {0, base, count, epoch} batch, {1, epoch, start} epoch only
        String damagedCheckpoint;
        long leo; List<EpochEntry> epochs; List<EpochEntry> batchEpochs; String checkpointError;
    }

    public static void main(String[] args) throws Exception {
        File out = new File(args[0]);
        Map<String, List<Copy>> scenarios = new LinkedHashMap<>();
        List<Copy> cur = null; Copy c = null;
        for (String line : Files.readAllLines(Paths.get(args[1]))) {
            if (line.isEmpty()) continue;
            String[] t = line.split(" ", 2);
            String[] f = t.length > 1 ? t[1].split(" ") : new String[0];
            switch (t[0]) {
                case "S": cur = new ArrayList<>(); scenarios.put(t[1], cur); break;
                case "C":
                    c = new Copy(); c.name = f[0]; c.id = Integer.parseInt(f[1]);
                    c.hw = Long.parseLong(f[2]); c.rp = Long.parseLong(f[3]);
                    if (!f[4].equals("-")) for (String r : f[4].split(",")) c.rolls.add(Long.parseLong(r));
                    cur.add(c); break;
                case "B": c.log.add(new long[]{0, Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])}); break;
                case "E": c.log.add(new long[]{1, Long.parseLong(f[0]), Long.parseLong(f[1])}); break;
                case "D": c.damagedCheckpoint = t[1].replace("|", "\n"); break;
                default: throw new IllegalArgumentException(line);
            }
        }
        try (PrintWriter answers = new PrintWriter(new File(out, "answers.txt"), "UTF-8")) {
            for (Map.Entry<String, List<Copy>> sc : scenarios.entrySet()) {
                File dir = new File(out, sc.getKey());
                for (Copy cp : sc.getValue()) write(dir, cp);
                for (Copy cp : sc.getValue()) {
                    answers.println("copy " + sc.getKey() + " " + cp.name + " leo " + cp.leo + " epochs " + fmt(cp.epochs)
                                    + " batchEpochs " + fmt(cp.batchEpochs)
                                    + (cp.checkpointError != null ? " checkpointError " + cp.checkpointError.replace(' ', '_') : ""));
                }
                int newEpoch = 0;
                for (Copy cp : sc.getValue())
                    for (EpochEntry e : effective(cp)) newEpoch = Math.max(newEpoch, e.epoch + 1);
                for (Copy leader : sc.getValue())
                    for (Copy follower : sc.getValue())
                        if (leader != follower)
                            answers.println("truncate " + sc.getKey() + " " + leader.name + " " + follower.name + " "
                                            + newEpoch + " " + truncate(leader, follower, newEpoch));
            }
        }
    }

    static List<EpochEntry> effective(Copy cp) { return cp.checkpointError == null ? cp.epochs : cp.batchEpochs; }

    static String fmt(List<EpochEntry> es) {
        StringBuilder sb = new StringBuilder();
        for (EpochEntry e : es) sb.append(sb.length() == 0 ? "" : ",").append(e.epoch).append(":").append(e.startOffset);
        return sb.length() == 0 ? "-" : sb.toString();
    }

    static LeaderEpochFileCache cache(File file, List<EpochEntry> entries) throws IOException {
        LeaderEpochCheckpointFile ck = new LeaderEpochCheckpointFile(file, new LogDirFailureChannel(1));
        ck.write(entries);
        return new LeaderEpochFileCache(TP, ck, SCHEDULER);
    }

    static void write(File dir, Copy c) throws Exception {
        File broker = new File(dir, c.name), pdir = new File(broker, TOPIC + "-" + PARTITION);
        pdir.mkdirs();
        LeaderEpochFileCache epochs = cache(new File(pdir, "leader-epoch-checkpoint"), List.of());
        File scratch = File.createTempFile("epochs", ".ck"); scratch.deleteOnExit();
        LeaderEpochFileCache fromBatches = cache(scratch, List.of());  // what the batches alone say
        Map<Long, FileRecords> segments = new TreeMap<>();
        segments.put(0L, FileRecords.open(new File(pdir, String.format("%020d.log", 0L))));
        for (long r : c.rolls) segments.put(r, FileRecords.open(new File(pdir, String.format("%020d.log", r))));
        for (long[] e : c.log) {
            if (e[0] == 1) { epochs.assign((int) e[1], e[2]); continue; }
            long base = e[1]; int count = (int) e[2]; int epoch = (int) e[3];
            SimpleRecord[] recs = new SimpleRecord[count];
            for (int i = 0; i < count; i++) {
                long o = base + i;
                recs[i] = new SimpleRecord(BASE_TIME + 1000 * o, ("k" + o).getBytes(StandardCharsets.UTF_8),
                                           ("v" + o + "-e" + epoch).getBytes(StandardCharsets.UTF_8));
            }
            MemoryRecords batch = MemoryRecords.withIdempotentRecords(base, Compression.NONE, PRODUCER_ID, (short) 0,
                                                                      (int) base, epoch, recs);
            long seg = 0;
            for (long r : segments.keySet()) if (base >= r) seg = r;
            segments.get(seg).append(batch);
            epochs.assign(epoch, base);  // UnifiedLog.append: maybeAssignEpochStartOffset per batch
            fromBatches.assign(epoch, base);
            c.leo = base + count;
        }
        for (FileRecords fr : segments.values()) { fr.flush(); fr.close(); }
        c.epochs = epochs.epochEntries();
        c.batchEpochs = fromBatches.epochEntries();
        File ckFile = new File(pdir, "leader-epoch-checkpoint");
        new LeaderEpochCheckpointFile(ckFile, new LogDirFailureChannel(1)).write(c.epochs);
        if (c.damagedCheckpoint != null) {
            Files.write(ckFile.toPath(), c.damagedCheckpoint.getBytes(StandardCharsets.UTF_8));
            try {
                new LeaderEpochCheckpointFile(ckFile, new LogDirFailureChannel(1)).read();
            } catch (Exception ex) {
                Throwable root = ex; while (root.getCause() != null) root = root.getCause();
                c.checkpointError = ex.getClass().getSimpleName() + ": " + root.getMessage();
            }
        }
        PartitionMetadataFile pm = new PartitionMetadataFile(PartitionMetadataFile.newFile(pdir), new LogDirFailureChannel(1));
        pm.record(TOPIC_ID); pm.maybeFlush();
        new OffsetCheckpointFile(new File(broker, "replication-offset-checkpoint"), new LogDirFailureChannel(1))
            .write(Map.of(TP, c.hw));
        new OffsetCheckpointFile(new File(broker, "recovery-point-offset-checkpoint"), new LogDirFailureChannel(1))
            .write(Map.of(TP, c.rp));
        Files.write(new File(broker, "meta.properties").toPath(),
                    ("node.id=" + c.id + "\nversion=1\ncluster.id=wireinspect-replicas\n").getBytes(StandardCharsets.UTF_8));
    }

    static final long UNDEFINED_EPOCH_OFFSET = -1L;

    /** UnifiedLog.endOffsetForEpoch: the cache's endOffsetFor, an undefined offset being no answer. */
    static Map.Entry<Integer, Long> endOffsetForEpoch(LeaderEpochFileCache cache, int epoch, long leo) {
        Map.Entry<Integer, Long> e = cache.endOffsetFor(epoch, leo);
        return e.getValue() == UNDEFINED_EPOCH_OFFSET ? null : e;
    }

    static String truncate(Copy leaderCopy, Copy followerCopy, int newEpoch) throws IOException {
        File a = File.createTempFile("leader", ".ck"), b = File.createTempFile("follower", ".ck");
        a.deleteOnExit(); b.deleteOnExit();
        LeaderEpochFileCache leader = cache(a, effective(leaderCopy));
        LeaderEpochFileCache follower = cache(b, effective(followerCopy));
        long leaderLeo = leaderCopy.leo, leo = followerCopy.leo;
        leader.assign(newEpoch, leaderLeo);  // Partition.makeLeader
        StringBuilder steps = new StringBuilder();
        if (follower.latestEpoch().isEmpty()) {  // ReplicaManager.initialFetchOffset: the high watermark
            long to = Math.min(followerCopy.hw, leo);
            return to + " high-watermark";
        }
        for (int round = 0; round < 1000; round++) {
            if (follower.latestEpoch().isEmpty()) return leo + "" + steps;  // a fetch without lastFetchedEpoch
            int fetchEpoch = follower.latestEpoch().getAsInt();
            Map.Entry<Integer, Long> ans = endOffsetForEpoch(leader, fetchEpoch, leaderLeo);
            if (ans == null) {  // OffsetOutOfRange -> fetchOffsetAndTruncate
                long to = leaderLeo < leo ? leaderLeo : leo;
                return to + "" + steps + " out-of-range";
            }
            if (!(ans.getKey() < fetchEpoch || ans.getValue() < leo)) return leo + "" + steps;  // no diverging epoch
            steps.append(" ask:").append(fetchEpoch).append("->").append(ans.getKey()).append(":").append(ans.getValue());
            // AbstractFetcherThread.getOffsetTruncationState
            Map.Entry<Integer, Long> mine = endOffsetForEpoch(follower, ans.getKey(), leo);
            long to; boolean done;
            if (mine == null) { to = Math.min(ans.getValue(), leo); done = true; }
            else if (mine.getKey().intValue() != ans.getKey().intValue()) { to = Math.min(mine.getValue(), leo); done = false; }
            else { to = Math.min(Math.min(mine.getValue(), ans.getValue()), leo); done = true; }
            steps.append(" truncate:").append(to).append(done ? "" : ":again");
            if (to >= leo) return leo + "" + steps + " stuck";  // truncateTo is a no-op: the same answer comes again
            follower.truncateFromEndAsyncFlush(to); leo = to;  // UnifiedLog.truncateTo
            // the next fetch carries the new latest epoch and log end offset: loop
        }
        throw new IllegalStateException("no end");
    }
}
