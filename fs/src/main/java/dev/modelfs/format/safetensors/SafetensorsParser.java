package dev.modelfs.format.safetensors;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.LittleEndian;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads and validates the header of a safetensors file exactly as the reference reader does
 * (docs/FORMATS.md §8.2, every row), plus an explicit duplicate-key check.
 *
 * <p>Reads only bytes {@code [0, 8 + N)} of the input, so it is cheap on multi-GB mmapped blobs.
 * Every malformed input yields a {@link FormatException} with a one-line message; nothing else is
 * thrown for any input bytes. Stateless and thread-safe.
 */
public final class SafetensorsParser {


    private SafetensorsParser() {
    }

    /**
     * Parses and validates per §8.2: {@code N <= 100_000_000}, header inside the file, strict UTF-8
     * JSON, known dtypes, sizes matching shapes, no duplicate keys, offsets contiguous from 0 without
     * holes or overlaps, and the data buffer covering the rest of {@code file.byteSize()} exactly.
     *
     * @return the header; tensors in JSON order with offsets relative to the data start
     * @throws FormatException if the file is not a valid safetensors file
     */
    public static SafetensorsHeader parse(MemorySegment file) {
        long size = file.byteSize();
        if (size < 8) {
            throw new FormatException("safetensors file too small: " + size + " bytes, need at least 8");
        }
        long n = file.get(LittleEndian.I64, 0);
        if (Long.compareUnsigned(n, SafetensorsHeader.MAX_HEADER_LENGTH) > 0) {
            throw new FormatException("safetensors header length " + Long.toUnsignedString(n)
                    + " exceeds " + SafetensorsHeader.MAX_HEADER_LENGTH);
        }
        if (n > size - 8) {
            throw new FormatException("safetensors header length " + n + " runs past end of file (" + size + " bytes)");
        }
        byte[] json = file.asSlice(8, n).toArray(ValueLayout.JAVA_BYTE);
        HeaderJsonReader.Parsed parsed = HeaderJsonReader.read(json);
        long bufferEnd = checkContiguous(parsed.tensors());
        if (bufferEnd > size - 8 - n) {
            throw new FormatException("safetensors data buffer of " + bufferEnd + " bytes runs past end of file ("
                    + size + " bytes, data starts at " + (8 + n) + ")");
        }
        long trailing = size - 8 - n - bufferEnd;
        if (trailing != 0) {
            throw new FormatException("safetensors data buffer of " + bufferEnd + " bytes does not cover the file: "
                    + trailing + " trailing bytes");
        }
        return new SafetensorsHeader(n, parsed.tensors(), parsed.metadata());
    }

    /**
     * Sorts by {@code (begin, end)} like the reference and demands {@code begin == previous end},
     * starting at 0. Returns the end of the buffer.
     */
    private static long checkContiguous(List<TensorEntry> tensors) {
        List<TensorEntry> byOffset = new ArrayList<>(tensors);
        byOffset.sort(Comparator.comparingLong(TensorEntry::begin).thenComparingLong(TensorEntry::end));
        long at = 0;
        for (TensorEntry t : byOffset) {
            if (t.begin() != at) {
                throw new FormatException("tensor " + Names.quote(t.name()) + ": data_offsets begin " + t.begin()
                        + " but previous tensor ends at " + at + (t.begin() > at ? " (hole)" : " (overlap)"));
            }
            at = t.end();
        }
        return at;
    }
}
