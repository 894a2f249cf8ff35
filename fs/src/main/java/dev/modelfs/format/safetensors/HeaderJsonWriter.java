package dev.modelfs.format.safetensors;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.modelfs.format.FormatException;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Serialises a safetensors header object compactly, the way the reference writer does (§8.3):
 * {@code __metadata__} first when present, then each tensor as
 * {@code {"dtype":…,"shape":[…],"data_offsets":[b,e]}} in the given order. Standard JSON escaping
 * (Jackson; same output as serde_json: {@code \"}, {@code \\}, {@code \b\f\n\r\t}, other controls as
 * six-character {@code u00XX} escapes, non-ASCII as raw UTF-8). Output is capped at {@code limit} bytes. Stateless.
 */
final class HeaderJsonWriter {

    private static final JsonFactory JSON = JsonFactory.builder().build();

    private HeaderJsonWriter() {
    }

    /**
     * The whole header: the 8-byte little-endian length {@code N}, the compact JSON, spaces up to {@code N % 8 == 0};
     * {@link FormatException} if the JSON would exceed {@code limit} bytes. The JSON is generated twice, first only
     * counted, then straight into the one array returned: a header of many tensors is held once, never in growing
     * buffers and copies.
     */
    static byte[] header(Map<String, String> metadata, List<SafetensorsWriter.Placed> tensors, long limit) {
        Counting count = new Counting(limit);
        generate(metadata, tensors, count, limit);
        int n = (int) ((count.length + 7) & ~7);   // limit is a multiple of 8 below 2^31: n stays within it
        byte[] header = new byte[8 + n];
        ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).putLong(0, n);
        Filling fill = new Filling(header);
        generate(metadata, tensors, fill, limit);
        if (fill.at != 8 + count.length) {
            throw new IllegalStateException("safetensors header: " + (fill.at - 8) + " bytes, counted " + count.length);
        }
        Arrays.fill(header, fill.at, header.length, (byte) ' ');
        return header;
    }

    private static void generate(Map<String, String> metadata, List<SafetensorsWriter.Placed> tensors, OutputStream out, long limit) {
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            if (metadata != null) {
                g.writeObjectFieldStart(HeaderJsonReader.METADATA_KEY);
                for (Map.Entry<String, String> e : metadata.entrySet()) {
                    g.writeStringField(e.getKey(), e.getValue());
                }
                g.writeEndObject();
            }
            for (SafetensorsWriter.Placed p : tensors) {
                g.writeObjectFieldStart(p.spec().name());
                g.writeStringField("dtype", p.spec().dtype().name());
                g.writeArrayFieldStart("shape");
                for (long d : p.spec().shape()) {
                    g.writeNumber(d);
                }
                g.writeEndArray();
                g.writeArrayFieldStart("data_offsets");
                g.writeNumber(p.begin());
                g.writeNumber(p.end());
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndObject();
        } catch (TooLarge e) {
            throw new FormatException("safetensors header would exceed " + limit + " bytes");
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in-memory output: cannot happen
        }
    }

    private static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super("header too large");
        }
    }

    /** Counts bytes and refuses to count beyond a limit (so a huge header fails before it is built). */
    private static final class Counting extends OutputStream {
        private final long limit;
        long length;

        Counting(long limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) throws TooLarge {
            write(null, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws TooLarge {
            if (length + len > limit) {
                throw new TooLarge();
            }
            length += len;
        }
    }

    /** Writes into a header array after its 8-byte length (sized by {@link Counting}). */
    private static final class Filling extends OutputStream {
        private final byte[] header;
        int at = 8;

        Filling(byte[] header) {
            this.header = header;
        }

        @Override
        public void write(int b) throws TooLarge {
            if (at >= header.length) {
                throw new TooLarge();
            }
            header[at++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) throws TooLarge {
            if (len > header.length - at) {
                throw new TooLarge();
            }
            System.arraycopy(b, off, header, at, len);
            at += len;
        }
    }
}
