/*
 * wireinspect test data: the driver that made the DLedger fixture under tests/data/dledger_java/ by calling
 * openmessaging/dledger's own store code (DLedgerMmapFileStore, MmapFileList, MemberState) at
 * d0545484103f2cd1207fbd7aee201d5b4a882eff. This is ours; DLedger's code is not in this repository (see
 * README.md beside the data for how it was compiled and run).
 *
 *   java DLedgerFixture write   STORE_BASE_DIR COMMITLOG_FILE...   # log A
 *   java DLedgerFixture recover STORE_BASE_DIR                     # load() + recover(), prints a JSON object
 */

import io.openmessaging.storage.dledger.DLedgerConfig;
import io.openmessaging.storage.dledger.MemberState;
import io.openmessaging.storage.dledger.entry.DLedgerEntry;
import io.openmessaging.storage.dledger.entry.DLedgerEntryType;
import io.openmessaging.storage.dledger.store.file.DLedgerMmapFileStore;
import io.openmessaging.storage.dledger.store.file.MmapFile;
import io.openmessaging.storage.dledger.store.file.MmapFileList;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

public class DLedgerFixture {
    static final int DATA_FILE = 1024;      // mappedFileSizeForEntryData (RocketMQ: mappedFileSizeCommitLog, 1 GiB)
    static final int INDEX_FILE = 8 * 32;   // mappedFileSizeForEntryIndex: 8 index entries a file
    static final int PHY_POS_POSITION = 4 + 4 + 4 + 4 + 4 + 8;  // RocketMQ MessageDecoder.PHY_POS_POSITION (28)

    static DLedgerConfig config(String base) {
        DLedgerConfig c = new DLedgerConfig();
        c.setStoreBaseDir(base);
        c.setSelfId("n0");
        c.setGroup("broker-a");
        c.setPeers("n0-127.0.0.1:40911");
        c.setMappedFileSizeForEntryData(DATA_FILE);
        c.setMappedFileSizeForEntryIndex(INDEX_FILE);
        return c;
    }

    /** The commit-log messages of a RocketMQ commit-log file: totalSize-delimited, up to a BLANK or a 0. */
    static List<byte[]> messages(String path) throws Exception {
        byte[] all = Files.readAllBytes(new File(path).toPath());
        ByteBuffer b = ByteBuffer.wrap(all);
        List<byte[]> out = new ArrayList<>();
        int p = 0;
        while (p + 8 <= all.length) {
            int total = b.getInt(p);
            int magic = b.getInt(p + 4);
            if (total <= 0 || p + total > all.length || (magic != 0xdaa320a7 && magic != 0xdaa320ab)) {
                break;
            }
            byte[] m = new byte[total];
            System.arraycopy(all, p, m, 0, total);
            out.add(m);
            p += total;
        }
        return out;
    }

    static void newTerm(MemberState ms) {
        ms.changeToCandidate(ms.currTerm() + 1);
        ms.nextTerm();           // persists dledger-n0/currterm (IOUtils.string2File: currterm, currterm.bak)
        ms.setCurrVoteFor("n0");
        ms.changeToLeader(ms.currTerm());
    }

    static void write(String base, String[] commitlogs) throws Exception {
        List<byte[]> msgs = new ArrayList<>();
        for (String f : commitlogs) {
            msgs.addAll(messages(f));
        }
        DLedgerConfig c = config(base);
        MemberState ms = new MemberState(c);
        DLedgerMmapFileStore store = new DLedgerMmapFileStore(c, ms);
        store.setEnableCleanSpaceService(false);
        // RocketMQ's DLedgerCommitLog hook: the message's physicalOffset is the entry's pos + BODY_OFFSET
        // (ours skips an empty body: RocketMQ's would throw on the NOOP below, which a RocketMQ broker never appends)
        store.addAppendHook((entry, buffer, bodyOffset) -> {
            if (entry.getBody().length == 0) {
                return;
            }
            buffer.position(buffer.position() + bodyOffset + PHY_POS_POSITION);
            buffer.putLong(entry.getPos() + bodyOffset);
        });
        store.load();
        store.recover();
        int[] perTerm = {10, 12, 8};
        int n = 0;
        for (int t = 0; t < perTerm.length; t++) {
            newTerm(ms);
            for (int i = 0; i < perTerm[t]; i++) {
                DLedgerEntry e;
                if (t == 1 && i == 4) {
                    e = new DLedgerEntry(DLedgerEntryType.NOOP);  // DLedgerServer.dealRaftLogRead's empty entry
                } else {
                    e = new DLedgerEntry();
                    e.setBody(msgs.get(n++ % msgs.size()).clone());
                }
                store.appendAsLeader(e);
            }
        }
        store.flush();
        String out = json(store, "write", null);
        System.out.println(out.substring(0, out.length() - 1) + ", \"entries\": " + entries(store) + "}");
    }

    /** Every entry as DLedger reads it back (DLedgerMmapFileStore.get: the index entry, then the data). */
    static String entries(DLedgerMmapFileStore store) throws Exception {
        StringBuilder s = new StringBuilder("[");
        for (long i = store.getLedgerBeforeBeginIndex() + 1; i <= store.getLedgerEndIndex(); i++) {
            DLedgerEntry e = store.get(i);
            byte[] body = e.getBody() == null ? new byte[0] : e.getBody();
            StringBuilder hex = new StringBuilder();
            for (byte x : MessageDigest.getInstance("SHA-256").digest(body)) {
                hex.append(String.format("%02x", x));
            }
            s.append(s.length() > 1 ? ", " : "").append("{\"index\": ").append(e.getIndex())
                .append(", \"term\": ").append(e.getTerm()).append(", \"pos\": ").append(e.getPos())
                .append(", \"size\": ").append(e.getSize()).append(", \"magic\": ").append(e.getMagic())
                .append(", \"channel\": ").append(e.getChannel()).append(", \"chainCrc\": ").append(e.getChainCrc())
                .append(", \"bodyCrc\": ").append(e.getBodyCrc()).append(", \"bodySize\": ").append(body.length)
                .append(", \"bodySha256\": \"").append(hex).append("\"}");
        }
        return s.append("]").toString();
    }

    static String files(MmapFileList list) {
        StringBuilder s = new StringBuilder("[");
        for (MmapFile f : list.getMappedFiles()) {
            if (s.length() > 1) {
                s.append(", ");
            }
            s.append("{\"name\": \"").append(new File(f.getFileName()).getName())
                .append("\", \"fileFromOffset\": ").append(f.getFileFromOffset())
                .append(", \"startPosition\": ").append(f.getStartPosition())
                .append(", \"wrotePosition\": ").append(f.getWrotePosition()).append("}");
        }
        return s.append("]").toString();
    }

    static String json(DLedgerMmapFileStore store, String what, String exit) {
        return "{\"what\": \"" + what + "\""
            + (exit != null ? ", \"exit\": \"" + exit + "\"" : "")
            + ", \"ledgerBeforeBeginIndex\": " + store.getLedgerBeforeBeginIndex()
            + ", \"ledgerEndIndex\": " + store.getLedgerEndIndex()
            + ", \"ledgerEndTerm\": " + store.getLedgerEndTerm()
            + ", \"dataMaxWrotePosition\": " + store.getDataFileList().getMaxWrotePosition()
            + ", \"dataMinOffset\": " + store.getDataFileList().getMinOffset()
            + ", \"indexMaxWrotePosition\": " + store.getIndexFileList().getMaxWrotePosition()
            + ", \"dataFiles\": " + files(store.getDataFileList())
            + ", \"indexFiles\": " + files(store.getIndexFileList()) + "}";
    }

    static class ExitTrap extends SecurityManager {
        @Override
        public void checkPermission(java.security.Permission perm) {
        }

        @Override
        public void checkExit(int status) {
            throw new SecurityException("System.exit(" + status + ")");
        }
    }

    @SuppressWarnings("removal")
    static void recover(String base) {
        DLedgerConfig c = config(base);
        MemberState ms = new MemberState(c);
        DLedgerMmapFileStore store = new DLedgerMmapFileStore(c, ms);
        store.setEnableCleanSpaceService(false);
        String exit = null;
        System.setSecurityManager(new ExitTrap());
        try {
            store.load();
            store.recover();
            store.flush();   // the index entries recover() rebuilt reach the files, as shutdown() would
        } catch (SecurityException e) {
            exit = e.getMessage();
        } catch (Throwable t) {
            exit = t.getClass().getSimpleName() + ": " + t.getMessage();
        }
        System.out.println(json(store, "recover", exit));
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("write")) {
            String[] logs = new String[args.length - 2];
            System.arraycopy(args, 2, logs, 0, logs.length);
            write(args[1], logs);
        } else {
            recover(args[1]);
        }
    }
}
