/*
 * Test-data driver for wireinspect: writes RocketMQ store directories with RocketMQ's own store code
 * (org.apache.rocketmq.store.DefaultMessageStore, RocketMQ 4.9.8) and records, in expected.json, what
 * RocketMQ itself reports about them. See tests/fixtures/rocketmq-java/README.md for how it was run.
 *
 *   java MakeStore normal  STORE_DIR  OUT.json   store A: messages put, clean shutdown
 *   java MakeStore crash   STORE_DIR  OUT.json   store B: messages put, torn tail written, JVM halted
 *   java MakeStore crash-late STORE_DIR OUT.json  store C: three phases, crash long after the checkpoint,
 *                                                 a body byte of the first file's second message inverted
 *   java MakeStore recover STORE_COPY OUT.json   load + recover a copy of B or C as the broker does
 */
import java.io.File;
import java.io.FileOutputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.apache.rocketmq.store.ConsumeQueue;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.MessageArrivingListener;
import org.apache.rocketmq.store.MessageExtBrokerInner;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.SelectMappedBufferResult;
import org.apache.rocketmq.store.StoreCheckpoint;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.config.StorePathConfigHelper;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

public class MakeStore {
    static final String[] TOPICS = {"TopicTest", "OrderTopic"};
    static final int QUEUES = 2;
    static final int MAGIC = -626843481;       // CommitLog.MESSAGE_MAGIC_CODE
    static final int BLANK = -875286124;       // CommitLog.BLANK_MAGIC_CODE
    static final long BORN0 = 1764280000000L;  // fixed born timestamps; store timestamps are the clock's

    static MessageStoreConfig config(String root) {
        MessageStoreConfig c = new MessageStoreConfig();
        c.setStorePathRootDir(root);
        c.setStorePathCommitLog(root + File.separator + "commitlog");
        c.setMappedFileSizeCommitLog(64 * 1024);          // several commit log files roll
        c.setMappedFileSizeConsumeQueue(20 * ConsumeQueue.CQ_STORE_UNIT_SIZE);  // 400-byte consume queue files
        c.setMaxHashSlotNum(64);                          // index file 40 + 64*4 + 128*20 bytes
        c.setMaxIndexNum(128);
        c.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
        c.setHaListenPort(0);
        c.setMessageDelayLevel("1s 2s");
        return c;
    }

    static DefaultMessageStore open(String root) throws Exception {
        MessageArrivingListener none = (topic, queueId, logicOffset, tagsCode, msgStoreTime, filterBitMap, properties) -> { };
        return new DefaultMessageStore(config(root), new BrokerStatsManager("wireinspect", true), none, new BrokerConfig());
    }

    static byte[] body(Random r, int size, boolean text) {
        byte[] b = new byte[size];
        if (text) {
            byte[] w = "the quick brown fox jumps over the lazy dog ".getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < size; i++) b[i] = w[i % w.length];
        } else {
            r.nextBytes(b);
        }
        return b;
    }

    static MessageExtBrokerInner message(String topic, int queueId, int i, byte[] body) throws Exception {
        MessageExtBrokerInner m = new MessageExtBrokerInner();
        m.setTopic(topic);
        m.setQueueId(queueId);
        m.setBody(body);
        if (i % 5 != 4) m.setTags(i % 2 == 0 ? "TagA" : "TagB");               // every fifth has no tags
        if (i % 3 == 0) m.setKeys("key-" + topic + "-" + queueId + "-" + i + " order-" + (i * 7));  // two keys
        else m.setKeys("key-" + topic + "-" + queueId + "-" + i);
        m.putUserProperty("seq", Integer.toString(i));
        if (i % 4 == 1) m.putUserProperty("colour", "bl\u00e9u \u2713");  // non-ASCII value
        MessageClientIDSetter.setUniqID(m);
        m.setBornTimestamp(BORN0 + i);
        m.setBornHost(new InetSocketAddress(InetAddress.getByName("10.0.0." + (1 + queueId)), 40000 + i));
        m.setStoreHost(new InetSocketAddress(InetAddress.getByName("192.168.7.9"), 10911));
        m.setSysFlag(0);
        m.setReconsumeTimes(i % 7 == 6 ? 2 : 0);
        return m;
    }

    static void finish(MessageExtBrokerInner m) {
        m.setPropertiesString(MessageDecoder.messageProperties2String(m.getProperties()));
        m.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(m.getTags()));
    }

    static void put(DefaultMessageStore s, MessageExtBrokerInner m) {
        finish(m);
        PutMessageResult r = s.putMessage(m);
        if (!r.isOk()) throw new IllegalStateException("put failed: " + r);
    }

    /** Puts `perQueue` messages on each topic/queue, with sizes cycling through `sizes`. */
    static void putMessages(DefaultMessageStore s, int perQueue, int seed, boolean extras) throws Exception {
        Random r = new Random(seed);
        int[] sizes = {0, 1, 17, 100, 512, 1000, 4097, 5000, 9000, 300, 2000, 64};
        int n = 0;
        for (int i = 0; i < perQueue; i++) {
            for (String topic : TOPICS) {
                for (int q = 0; q < QUEUES; q++) {
                    int size = sizes[n % sizes.length];
                    MessageExtBrokerInner m = message(topic, q, i, body(r, size, n % 3 == 0));
                    if (extras && n == 5) {                       // zlib-compressed body, flag set as a client sets it
                        m.setBody(UtilAll.compress(body(r, 3000, true), 5));
                        m.setSysFlag(MessageSysFlag.COMPRESSED_FLAG);
                    }
                    if (extras && n == 9) {                       // IPv6 born and store hosts
                        m.setBornHost(new InetSocketAddress(InetAddress.getByName("1050::5:600:300c:326b"), 51000));
                        m.setStoreHost(new InetSocketAddress(InetAddress.getByName("::1"), 10911));
                        m.setBornHostV6Flag();
                        m.setStoreHostAddressV6Flag();
                    }
                    if (extras && n == 13) m.setDelayTimeLevel(1); // goes to SCHEDULE_TOPIC_XXXX, delivered after 1s
                    put(s, m);
                    n++;
                }
            }
        }
    }

    static void waitReput(DefaultMessageStore s) throws InterruptedException {
        for (int i = 0; i < 200 && s.dispatchBehindBytes() > 0; i++) Thread.sleep(50);
    }

    // ---- a tiny JSON writer (no library) ----
    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static String messageJson(MessageExt m) throws Exception {
        StringBuilder b = new StringBuilder("{");
        b.append("\"topic\": ").append(q(m.getTopic()));
        b.append(", \"queueId\": ").append(m.getQueueId());
        b.append(", \"queueOffset\": ").append(m.getQueueOffset());
        b.append(", \"commitLogOffset\": ").append(m.getCommitLogOffset());
        b.append(", \"storeSize\": ").append(m.getStoreSize());
        b.append(", \"bodyCRC\": ").append(m.getBodyCRC());
        b.append(", \"flag\": ").append(m.getFlag());
        b.append(", \"sysFlag\": ").append(m.getSysFlag());
        b.append(", \"bornTimestamp\": ").append(m.getBornTimestamp());
        b.append(", \"bornHost\": ").append(q(m.getBornHostString() + ":" + ((InetSocketAddress) m.getBornHost()).getPort()));
        b.append(", \"storeTimestamp\": ").append(m.getStoreTimestamp());
        b.append(", \"storeHost\": ").append(q(((InetSocketAddress) m.getStoreHost()).getAddress().getHostAddress() + ":" + ((InetSocketAddress) m.getStoreHost()).getPort()));
        b.append(", \"reconsumeTimes\": ").append(m.getReconsumeTimes());
        b.append(", \"preparedTransactionOffset\": ").append(m.getPreparedTransactionOffset());
        b.append(", \"msgId\": ").append(q(m.getMsgId()));
        b.append(", \"keys\": ").append(q(m.getKeys()));
        b.append(", \"tags\": ").append(q(m.getTags()));
        b.append(", \"bodyLength\": ").append(m.getBody() == null ? 0 : m.getBody().length);
        b.append(", \"bodySha256\": ").append(q(hex(MessageDigest.getInstance("SHA-256").digest(m.getBody() == null ? new byte[0] : m.getBody()))));
        b.append(", \"properties\": {");
        String sep = "";
        for (Map.Entry<String, String> e : new TreeMap<>(m.getProperties()).entrySet()) {
            b.append(sep).append(q(e.getKey())).append(": ").append(q(e.getValue()));
            sep = ", ";
        }
        return b.append("}}").toString();
    }

    /** Every message of the commit log, walked file by file as RocketMQ's recovery walks it. */
    static List<String> commitLogMessages(DefaultMessageStore s) throws Exception {
        List<String> out = new ArrayList<>();
        long off = s.getMinPhyOffset(), end = s.getMaxPhyOffset();
        while (off < end) {
            SelectMappedBufferResult head = s.getCommitLog().getMessage(off, 8);
            int size = head.getByteBuffer().getInt();
            int magic = head.getByteBuffer().getInt();
            head.release();
            if (magic == BLANK) { off = s.getCommitLog().rollNextFile(off); continue; }
            if (magic != MAGIC || size <= 0) throw new IllegalStateException("bad entry at " + off);
            MessageExt m = s.lookMessageByOffset(off, size);
            out.add(messageJson(m));
            off += size;
        }
        return out;
    }

    static String queuesJson(DefaultMessageStore s, boolean units) {
        StringBuilder b = new StringBuilder("[");
        String sep = "";
        for (String topic : new String[]{TOPICS[0], TOPICS[1], "SCHEDULE_TOPIC_XXXX"}) {
            for (int qid = 0; qid < QUEUES; qid++) {
                ConsumeQueue cq = s.getConsumeQueueTable().containsKey(topic) ? s.getConsumeQueueTable().get(topic).get(qid) : null;
                if (cq == null) continue;
                b.append(sep).append("\n  {\"topic\": ").append(q(topic)).append(", \"queueId\": ").append(qid);
                b.append(", \"minOffset\": ").append(s.getMinOffsetInQueue(topic, qid));
                b.append(", \"maxOffset\": ").append(s.getMaxOffsetInQueue(topic, qid));
                b.append(", \"maxPhysicOffset\": ").append(cq.getMaxPhysicOffset());
                if (units) {
                    b.append(", \"units\": [");
                    String usep = "";
                    for (long i = cq.getMinOffsetInQueue(); i < cq.getMaxOffsetInQueue(); i++) {
                        SelectMappedBufferResult r = cq.getIndexBuffer(i);
                        ByteBuffer bb = r.getByteBuffer();
                        b.append(usep).append("[").append(i).append(", ").append(bb.getLong()).append(", ")
                            .append(bb.getInt()).append(", ").append(bb.getLong()).append("]");
                        r.release();
                        usep = ", ";
                    }
                    b.append("]");
                }
                b.append("}");
                sep = ",";
            }
        }
        return b.append("\n]").toString();
    }

    static String checkpointJson(String root) throws Exception {
        StoreCheckpoint c = new StoreCheckpoint(StorePathConfigHelper.getStoreCheckpoint(root));
        String j = "{\"physicMsgTimestamp\": " + c.getPhysicMsgTimestamp() + ", \"logicsMsgTimestamp\": " + c.getLogicsMsgTimestamp()
            + ", \"indexMsgTimestamp\": " + c.getIndexMsgTimestamp() + ", \"minTimestamp\": " + c.getMinTimestamp() + "}";
        c.shutdown();
        return j;
    }

    /** Relative path -> length of every file under dir. */
    static TreeMap<String, Long> files(File dir, String prefix, TreeMap<String, Long> out) {
        File[] list = dir.listFiles();
        if (list == null) return out;
        for (File f : list) {
            if (f.isDirectory()) files(f, prefix + f.getName() + "/", out);
            else out.put(prefix + f.getName(), f.length());
        }
        return out;
    }

    static String filesJson(TreeMap<String, Long> m) {
        StringBuilder b = new StringBuilder("{");
        String sep = "";
        for (Map.Entry<String, Long> e : m.entrySet()) {
            b.append(sep).append(q(e.getKey())).append(": ").append(e.getValue());
            sep = ", ";
        }
        return b.append("}").toString();
    }

    static void write(String path, String text) throws Exception {
        try (FileOutputStream f = new FileOutputStream(path)) {
            f.write(text.getBytes(StandardCharsets.UTF_8));
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0], root = args[1], out = args[2];
        if (mode.equals("normal")) {
            DefaultMessageStore s = open(root);
            if (!s.load()) throw new IllegalStateException("load failed");
            s.start();
            putMessages(s, 20, 1, true);
            Thread.sleep(3000);                     // the delayed message is delivered meanwhile
            putMessages(s, 10, 2, false);
            waitReput(s);
            List<String> msgs = commitLogMessages(s);
            String queues = queuesJson(s, true);
            long minPhy = s.getMinPhyOffset(), maxPhy = s.getMaxPhyOffset();
            s.shutdown();
            write(out, "{\"rocketmq\": \"4.9.8\", \"store\": \"normal\", \"minPhyOffset\": " + minPhy
                + ", \"maxPhyOffset\": " + maxPhy + ", \"checkpoint\": " + checkpointJson(root)
                + ",\n\"queues\": " + queues + ",\n\"messages\": [\n" + String.join(",\n", msgs) + "\n]}\n");
            System.exit(0);
        } else if (mode.equals("crash")) {
            DefaultMessageStore s = open(root);
            if (!s.load()) throw new IllegalStateException("load failed");
            s.start();
            putMessages(s, 12, 3, false);
            waitReput(s);
            Thread.sleep(2500);                     // flush services run (commit log 500 ms, consume queues 1 s)
            long maxPhy = s.getMaxPhyOffset();
            List<String> msgs = commitLogMessages(s);
            String queues = queuesJson(s, false);
            // The torn write: the next message of queue TopicTest/1 was being appended when the broker died:
            // its first 120 bytes (size, magic, CRC, queue offset, physical offset ...) reached the file, the rest not.
            MessageExtBrokerInner m = message("TopicTest", 1, 99, body(new Random(4), 700, false));
            finish(m);
            ConsumeQueue cq = s.getConsumeQueueTable().get("TopicTest").get(1);
            long qoff = cq.getMaxOffsetInQueue();
            // encode it exactly as CommitLog would, by appending it to a scratch store, then copy its head
            String scratch = root + ".scratch";
            DefaultMessageStore t = open(scratch);
            t.load();
            t.start();
            PutMessageResult pr = t.putMessage(m);
            SelectMappedBufferResult enc = t.getCommitLog().getMessage(pr.getAppendMessageResult().getWroteOffset(), pr.getAppendMessageResult().getWroteBytes());
            byte[] whole = new byte[enc.getSize()];
            enc.getByteBuffer().get(whole);
            enc.release();
            ByteBuffer w = ByteBuffer.wrap(whole);
            w.putLong(20, qoff);                    // QUEUEOFFSET
            w.putLong(28, maxPhy);                  // PHYSICALOFFSET
            int fileSize = 64 * 1024;
            File clFile = new File(root + "/commitlog/" + UtilAll.offset2FileName(maxPhy - maxPhy % fileSize));
            try (RandomAccessFile f = new RandomAccessFile(clFile, "rw")) {
                f.seek(maxPhy % fileSize);
                f.write(whole, 0, 120);
            }
            // ... and its consume queue unit had reached the disk (pages are written back in any order)
            int cqFile = 20 * ConsumeQueue.CQ_STORE_UNIT_SIZE;
            long cqPos = qoff * ConsumeQueue.CQ_STORE_UNIT_SIZE;
            File cqf = new File(root + "/consumequeue/TopicTest/1/" + UtilAll.offset2FileName(cqPos - cqPos % cqFile));
            boolean cqWritten = cqf.exists();
            if (cqWritten) {
                try (RandomAccessFile f = new RandomAccessFile(cqf, "rw")) {
                    f.seek(cqPos % cqFile);
                    ByteBuffer u = ByteBuffer.allocate(20);
                    u.putLong(maxPhy).putInt(whole.length).putLong(m.getTagsCode());
                    f.write(u.array());
                }
            }
            write(out, "{\"rocketmq\": \"4.9.8\", \"store\": \"crashed\", \"maxPhyOffsetBeforeCrash\": " + maxPhy
                + ", \"tornMessage\": {\"commitLogOffset\": " + maxPhy + ", \"storeSize\": " + whole.length
                + ", \"bytesWritten\": 120, \"topic\": \"TopicTest\", \"queueId\": 1, \"queueOffset\": " + qoff
                + ", \"consumeQueueUnitWritten\": " + cqWritten + "}"
                + ",\n\"queuesBeforeCrash\": " + queues + ",\n\"messages\": [\n" + String.join(",\n", msgs) + "\n]}\n");
            Runtime.getRuntime().halt(0);           // no shutdown: abort file stays, as after a crash
        } else if (mode.equals("crash-late")) {
            // A crash long after the checkpoint: abnormal recovery starts from a later file, not the first.
            DefaultMessageStore s = open(root);
            if (!s.load()) throw new IllegalStateException("load failed");
            s.start();
            putMessages(s, 10, 5, false);           // phase 1: fills the first file and starts the second
            waitReput(s);
            Thread.sleep(4000);
            putMessages(s, 8, 6, false);            // phase 2, stored 4 s later
            waitReput(s);
            Thread.sleep(2500);                     // flushed: the checkpoint holds phase 2's times
            putMessages(s, 4, 7, false);            // phase 3: written, then the crash
            waitReput(s);
            List<String> msgs = commitLogMessages(s);
            String queues = queuesJson(s, false);
            // damage a body byte of the second message of the first file: before where recovery starts
            SelectMappedBufferResult head = s.getCommitLog().getMessage(0, 4);
            int first = head.getByteBuffer().getInt();
            head.release();
            SelectMappedBufferResult second = s.getCommitLog().getMessage(first, 4);
            int secondSize = second.getByteBuffer().getInt();
            second.release();
            MessageExt victim = s.lookMessageByOffset(first, secondSize);
            long at = first + 88 + victim.getBody().length / 2;  // IPv4 hosts: the body starts at byte 88
            try (RandomAccessFile f = new RandomAccessFile(root + "/commitlog/" + UtilAll.offset2FileName(0), "rw")) {
                f.seek(at);
                int b = f.read();
                f.seek(at);
                f.write(b ^ 0xFF);
            }
            write(out, "{\"rocketmq\": \"4.9.8\", \"store\": \"crashed late\", \"maxPhyOffsetBeforeCrash\": " + s.getMaxPhyOffset()
                + ", \"damagedMessage\": {\"commitLogOffset\": " + first + ", \"storeSize\": " + secondSize
                + ", \"bodyLength\": " + victim.getBody().length + ", \"invertedByteAt\": " + at + "}"
                + ",\n\"queuesBeforeCrash\": " + queues + ",\n\"messages\": [\n" + String.join(",\n", msgs) + "\n]}\n");
            Runtime.getRuntime().halt(0);
        } else if (mode.equals("recover")) {
            boolean abortExists = new File(StorePathConfigHelper.getAbortFile(root)).exists();
            String cp = checkpointJson(root);
            TreeMap<String, Long> before = files(new File(root), "", new TreeMap<>());
            DefaultMessageStore s = open(root);
            boolean ok = s.load();                  // load: commit log, consume queues, index, then recover
            String queues = queuesJson(s, false);
            TreeMap<String, Long> after = files(new File(root), "", new TreeMap<>());
            List<String> gone = new ArrayList<>();
            for (String f : before.keySet()) if (!after.containsKey(f)) gone.add(q(f));
            write(out, "{\"rocketmq\": \"4.9.8\", \"store\": \"recovered copy\", \"loaded\": " + ok
                + ", \"abortFileBeforeLoad\": " + abortExists + ", \"recovery\": " + q(abortExists ? "abnormal" : "normal")
                + ", \"checkpoint\": " + cp
                + ", \"minPhyOffset\": " + s.getMinPhyOffset() + ", \"maxPhyOffset\": " + s.getMaxPhyOffset()
                + ", \"confirmOffset\": " + s.getConfirmOffset()
                + ",\n\"filesBeforeLoad\": " + filesJson(before) + ",\n\"filesDeletedByLoad\": [" + String.join(", ", gone) + "]"
                + ",\n\"queues\": " + queues + "}\n");
            Runtime.getRuntime().halt(0);
        } else {
            throw new IllegalArgumentException(mode);
        }
    }
}
