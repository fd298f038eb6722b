/*
 * Test-data driver for wireinspect: writes a RocketMQ 5 store with timer messages, with RocketMQ's own
 * store code (DefaultMessageStore and TimerMessageStore of rocketmq-all-5.1.4), and records in
 * expected.json what RocketMQ itself reports about it. See tests/fixtures/rocketmq-java/README.md.
 *
 *   java MakeStore5 timer   STORE_DIR OUT.json    timer messages, clean shutdown
 *   java MakeStore5 crash   STORE_DIR OUT.json    timer messages, a torn tail written, JVM halted
 *   java MakeStore5 recover STORE_COPY OUT.json   load (commit log, consume queues, timer) as the broker does
 */
import java.io.File;
import java.io.FileOutputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
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
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.message.MessageAccessor;
import org.apache.rocketmq.common.message.MessageClientIDSetter;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageExtBrokerInner;
import org.apache.rocketmq.store.ConsumeQueue;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.MessageArrivingListener;
import org.apache.rocketmq.store.PutMessageResult;
import org.apache.rocketmq.store.SelectMappedBufferResult;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.config.StorePathConfigHelper;
import org.apache.rocketmq.store.stats.BrokerStatsManager;
import org.apache.rocketmq.store.timer.Slot;
import org.apache.rocketmq.store.timer.TimerCheckpoint;
import org.apache.rocketmq.store.timer.TimerMessageStore;
import org.apache.rocketmq.store.timer.TimerMetrics;

public class MakeStore5 {
    static final String[] TOPICS = {"TopicTest", "OrderTopic"};
    static final int MAGIC = -626843481;       // CommitLog.MESSAGE_MAGIC_CODE (V1)
    static final int BLANK = -875286124;       // CommitLog.BLANK_MAGIC_CODE
    static final long BORN0 = 1764280000000L;
    static long lastOffset;                    // commit-log offset of the last message put

    static MessageStoreConfig config(String root) {
        MessageStoreConfig c = new MessageStoreConfig();
        c.setStorePathRootDir(root);
        c.setStorePathCommitLog(root + File.separator + "commitlog");
        c.setMappedFileSizeCommitLog(64 * 1024);
        c.setMappedFileSizeConsumeQueue(20 * ConsumeQueue.CQ_STORE_UNIT_SIZE);
        c.setMaxHashSlotNum(64);
        c.setMaxIndexNum(256);                            // the default 1:4 ratio this time
        c.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
        c.setHaListenPort(0);
        c.setMappedFileSizeTimerLog(2048);                // 52-byte units: a blank pads each file's end
        c.setTimerFlushIntervalMs(200);
        c.setTimerEnableCheckMetrics(false);
        return c;
    }

    static MessageExtBrokerInner message(String topic, int queueId, int i, byte[] body) throws Exception {
        MessageExtBrokerInner m = new MessageExtBrokerInner();
        m.setTopic(topic);
        m.setQueueId(queueId);
        m.setBody(body);
        m.setTags(i % 2 == 0 ? "TagA" : "TagB");
        m.setKeys("key-" + topic + "-" + queueId + "-" + i);
        m.putUserProperty("seq", Integer.toString(i));
        MessageClientIDSetter.setUniqID(m);
        m.setBornTimestamp(BORN0 + i);
        m.setBornHost(new InetSocketAddress(InetAddress.getByName("10.0.0." + (1 + queueId)), 40000 + i));
        m.setStoreHost(new InetSocketAddress(InetAddress.getByName("192.168.7.9"), 10911));
        return m;
    }

    /** What the broker's HookUtils.transformTimerMessage (5.1.4) does to a message with TIMER_DELIVER_MS:
     * the deliver time rounded down to the timer's precision, the real topic and queue kept in properties,
     * and the message put on rmq_sys_wheel_timer queue 0. */
    static void transformTimer(MessageExtBrokerInner m, long deliverMs, int precisionMs) {
        if (deliverMs % precisionMs == 0) deliverMs -= precisionMs;
        else deliverMs = deliverMs / precisionMs * precisionMs;
        MessageAccessor.putProperty(m, MessageConst.PROPERTY_TIMER_OUT_MS, deliverMs + "");
        MessageAccessor.putProperty(m, MessageConst.PROPERTY_REAL_TOPIC, m.getTopic());
        MessageAccessor.putProperty(m, MessageConst.PROPERTY_REAL_QUEUE_ID, String.valueOf(m.getQueueId()));
        m.setTopic(TimerMessageStore.TIMER_TOPIC);
        m.setQueueId(0);
    }

    static void put(DefaultMessageStore s, MessageExtBrokerInner m) {
        m.setPropertiesString(MessageDecoder.messageProperties2String(m.getProperties()));
        m.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(m.getTags()));
        PutMessageResult r = s.putMessage(m);
        if (!r.isOk()) throw new IllegalStateException("put failed: " + r);
        lastOffset = r.getAppendMessageResult().getWroteOffset();
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

    static String queuesJson(DefaultMessageStore s) {
        StringBuilder b = new StringBuilder("[");
        String sep = "";
        for (String topic : new TreeSet<>(s.getConsumeQueueTable().keySet())) {
            for (int qid : new TreeSet<>(s.getConsumeQueueTable().get(topic).keySet())) {
                ConsumeQueue cq = (ConsumeQueue) s.getConsumeQueueTable().get(topic).get(qid);
                b.append(sep).append("\n  {\"topic\": ").append(q(topic)).append(", \"queueId\": ").append(qid);
                b.append(", \"minOffset\": ").append(cq.getMinOffsetInQueue());
                b.append(", \"maxOffset\": ").append(cq.getMaxOffsetInQueue());
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
                b.append("]}");
                sep = ",";
            }
        }
        return b.append("\n]").toString();
    }

    /** The wheel's slot for each deliver time (TimerWheel.getSlot) and the timer-log units of its chain,
     * newest first, read with TimerLog.getTimerMessage (fields in TimerLog.UNIT_SIZE order). */
    static String timerJson(TimerMessageStore t, TreeSet<Long> deliverTimes) {
        StringBuilder b = new StringBuilder("[");
        String sep = "";
        for (long ms : deliverTimes) {
            Slot slot = t.getTimerWheel().getSlot(ms);
            b.append(sep).append("\n  {\"deliverMs\": ").append(ms).append(", \"slotIndex\": ").append(t.getTimerWheel().getSlotIndex(ms))
                .append(", \"slot\": {\"timeMs\": ").append(slot.timeMs).append(", \"firstPos\": ").append(slot.firstPos)
                .append(", \"lastPos\": ").append(slot.lastPos).append(", \"num\": ").append(slot.num)
                .append(", \"magic\": ").append(slot.magic).append("}, \"chain\": [");
            String csep = "";
            long pos = slot.lastPos;
            for (int guard = 0; pos >= 0 && guard < 1000; guard++) {
                SelectMappedBufferResult r = t.getTimerLog().getTimerMessage(pos);
                if (r == null) break;
                ByteBuffer u = r.getByteBuffer();
                int size = u.getInt();
                long prev = u.getLong();
                int magic = u.getInt();
                long writeTime = u.getLong();
                int delayed = u.getInt();
                long offsetPy = u.getLong();
                int sizePy = u.getInt();
                int hash = u.getInt();
                long reserved = u.getLong();
                r.release();
                b.append(csep).append("{\"position\": ").append(pos).append(", \"size\": ").append(size)
                    .append(", \"prevPos\": ").append(prev).append(", \"magic\": ").append(magic)
                    .append(", \"currWriteTime\": ").append(writeTime).append(", \"delayedTime\": ").append(delayed)
                    .append(", \"offsetPy\": ").append(offsetPy).append(", \"sizePy\": ").append(sizePy)
                    .append(", \"hashCodeOfRealTopic\": ").append(hash).append(", \"reserved\": ").append(reserved).append("}");
                csep = ", ";
                if (pos == slot.firstPos) break;
                pos = prev;
            }
            b.append("]}");
            sep = ",";
        }
        return b.append("\n]").toString();
    }

    static void write(String path, String text) throws Exception {
        try (FileOutputStream f = new FileOutputStream(path)) {
            f.write(text.getBytes(StandardCharsets.UTF_8));
        }
    }

    static DefaultMessageStore store;
    static TimerMessageStore timer;

    /** The store and its timer, set up as BrokerController.initializeMessageStore does when timerWheelEnable is set. */
    static void open(MessageStoreConfig cfg, String root) throws Exception {
        MessageArrivingListener none = (topic, queueId, logicOffset, tagsCode, msgStoreTime, filterBitMap, properties) -> { };
        BrokerStatsManager stats = new BrokerStatsManager("wireinspect", true);
        DefaultMessageStore s = new DefaultMessageStore(cfg, stats, none, new BrokerConfig(), new ConcurrentHashMap<String, TopicConfig>());
        TimerCheckpoint cp = new TimerCheckpoint(root + File.separator + "config" + File.separator + "timercheck");
        TimerMetrics metrics = new TimerMetrics(root + File.separator + "config" + File.separator + "timermetrics");
        TimerMessageStore t = new TimerMessageStore(s, cfg, cp, metrics, stats);
        t.registerEscapeBridgeHook(msg -> s.putMessage(msg));
        s.setTimerMessageStore(t);
        store = s;
        timer = t;
    }

    static TreeMap<String, Long> files(File dir, String prefix, TreeMap<String, Long> out) {
        File[] list = dir.listFiles();
        if (list == null) return out;
        for (File f : list) {
            if (f.isDirectory()) files(f, prefix + f.getName() + "/", out);
            else out.put(prefix + f.getName(), f.length());
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0], root = args[1], out = args[2];
        MessageStoreConfig cfg = config(root);
        if (mode.equals("recover")) {
            File abort = new File(StorePathConfigHelper.getAbortFile(root));
            String abortText = abort.exists() ? new String(Files.readAllBytes(abort.toPath()), StandardCharsets.US_ASCII) : null;
            TreeMap<String, Long> before = files(new File(root), "", new TreeMap<>());
            open(cfg, root);
            boolean ok = store.load() && timer.load();
            TreeMap<String, Long> after = files(new File(root), "", new TreeMap<>());
            List<String> gone = new ArrayList<>();
            for (String f : before.keySet()) if (!after.containsKey(f)) gone.add(q(f));
            write(out, "{\"rocketmq\": \"5.1.4\", \"store\": \"recovered copy\", \"loaded\": " + ok
                + ", \"abortFileBeforeLoad\": " + q(abortText) + ", \"recovery\": " + q(abortText != null ? "abnormal" : "normal")
                + ", \"minPhyOffset\": " + store.getMinPhyOffset() + ", \"maxPhyOffset\": " + store.getMaxPhyOffset()
                + ", \"filesDeletedByLoad\": [" + String.join(", ", gone) + "]"
                + ",\n\"queues\": " + queuesJson(store) + "}\n");
            Runtime.getRuntime().halt(0);
        }
        open(cfg, root);
        DefaultMessageStore s = store;
        TimerMessageStore t = timer;
        if (!s.load() || !t.load()) throw new IllegalStateException("load failed");
        s.start();
        t.start(true);                          // a master runs the dequeue
        Random r = new Random(11);
        long now = System.currentTimeMillis();
        TreeSet<Long> deliverTimes = new TreeSet<>();
        int n = 0;
        for (int i = 0; i < 12; i++) {
            for (String topic : TOPICS) {
                for (int q = 0; q < 2; q++) {
                    byte[] body = new byte[new int[]{5, 300, 1200, 4500}[n % 4]];
                    r.nextBytes(body);
                    MessageExtBrokerInner m = message(topic, q, i, body);
                    long deliver = 0;
                    if (n % 3 == 1) deliver = now + 2000 + 250L * (n % 8);            // due during the run
                    else if (n % 3 == 2) deliver = now + 3_600_000L * (1 + n % 30);    // hours ahead: stays in the wheel
                    if (n % 9 == 2) deliver = now + 3_600_000L * 2;                    // several on one slot
                    if (deliver != 0) {
                        MessageAccessor.putProperty(m, MessageConst.PROPERTY_TIMER_DELIVER_MS, Long.toString(deliver));
                        transformTimer(m, deliver, cfg.getTimerPrecisionMs());
                        deliverTimes.add(Long.parseLong(m.getProperty(MessageConst.PROPERTY_TIMER_OUT_MS)));
                    }
                    put(s, m);
                    n++;
                }
            }
        }
        if (mode.equals("crash")) {
            Thread.sleep(3000);                 // enqueued into the wheel, flushed; none due yet
            for (int i = 0; i < 200 && s.dispatchBehindBytes() > 0; i++) Thread.sleep(50);
            List<String> msgs = commitLogMessages(s);
            String queues = queuesJson(s);
            // a torn write at the end of the commit log: the first 120 bytes of a copy of the last message,
            // its queue offset and physical offset advanced to where the next one would have gone
            long maxPhy = s.getMaxPhyOffset();
            MessageExt last = s.lookMessageByOffset(lastOffset);
            SelectMappedBufferResult enc = s.getCommitLog().getMessage(lastOffset, last.getStoreSize());
            byte[] whole = new byte[enc.getSize()];
            enc.getByteBuffer().get(whole);
            enc.release();
            ByteBuffer w = ByteBuffer.wrap(whole);
            w.putLong(20, s.getMaxOffsetInQueue(last.getTopic(), last.getQueueId()));
            w.putLong(28, maxPhy);
            try (RandomAccessFile f = new RandomAccessFile(root + "/commitlog/" + UtilAll.offset2FileName(maxPhy - maxPhy % (64 * 1024)), "rw")) {
                f.seek(maxPhy % (64 * 1024));
                f.write(whole, 0, 120);
            }
            write(out, "{\"rocketmq\": \"5.1.4\", \"store\": \"crashed, timer messages\", \"maxPhyOffsetBeforeCrash\": " + maxPhy
                + ", \"tornMessage\": {\"commitLogOffset\": " + maxPhy + ", \"storeSize\": " + whole.length + ", \"bytesWritten\": 120"
                + ", \"copyOf\": " + lastOffset + "}"
                + ",\n\"queuesBeforeCrash\": " + queues + ",\n\"messages\": [\n" + String.join(",\n", msgs) + "\n]}\n");
            Runtime.getRuntime().halt(0);
        }
        Thread.sleep(9000);                     // enqueue into the wheel, deliver the due ones, flush
        for (int i = 0; i < 200 && s.dispatchBehindBytes() > 0; i++) Thread.sleep(50);
        List<String> msgs = commitLogMessages(s);
        String queues = queuesJson(s);
        String timer = timerJson(t, deliverTimes);
        t.shutdown();
        s.shutdown();
        TimerCheckpoint c = new TimerCheckpoint(root + File.separator + "config" + File.separator + "timercheck");
        String cpJson = "{\"lastReadTimeMs\": " + c.getLastReadTimeMs() + ", \"lastTimerLogFlushPos\": " + c.getLastTimerLogFlushPos()
            + ", \"lastTimerQueueOffset\": " + c.getLastTimerQueueOffset() + ", \"masterTimerQueueOffset\": " + c.getMasterTimerQueueOffset()
            + ", \"dataVersion\": {\"timestamp\": " + c.getDataVersion().getTimestamp() + ", \"counter\": " + c.getDataVersion().getCounter().get() + "}}";
        c.shutdown();
        write(out, "{\"rocketmq\": \"5.1.4\", \"store\": \"normal, timer messages\", \"timerPrecisionMs\": " + cfg.getTimerPrecisionMs()
            + ", \"timerLogFileSize\": " + cfg.getMappedFileSizeTimerLog() + ", \"timerWheelSlots\": " + t.getTimerWheel().slotsTotal
            + ", \"timerCheckpoint\": " + cpJson
            + ",\n\"timer\": " + timer + ",\n\"queues\": " + queues + ",\n\"messages\": [\n" + String.join(",\n", msgs) + "\n]}\n");
        System.exit(0);
    }
}
