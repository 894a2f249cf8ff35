package dev.modelfs.format.safetensors;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.modelfs.format.FormatException;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
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

    /** Compact JSON bytes; {@link FormatException} if they would exceed {@code limit} bytes. */
    static byte[] write(Map<String, String> metadata, List<SafetensorsWriter.Placed> tensors, long limit) {
        CappedBuffer out = new CappedBuffer(limit);
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
        return out.toByteArray();
    }

    private static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge() {
            super("header too large");
        }
    }

    /** A byte buffer that refuses to grow beyond a limit (so a huge header fails before it is built). */
    private static final class CappedBuffer extends OutputStream {
        private final long limit;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);

        CappedBuffer(long limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) throws TooLarge {
            check(1);
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws TooLarge {
            check(len);
            bytes.write(b, off, len);
        }

        byte[] toByteArray() {
            return bytes.toByteArray();
        }

        private void check(int len) throws TooLarge {
            if (bytes.size() + (long) len > limit) {
                throw new TooLarge();
            }
        }
    }
}
