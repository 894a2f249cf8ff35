package dev.modelfs.fuse;

import dev.modelfs.tree.FileNode;
import dev.modelfs.tree.Node;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import jnr.ffi.Pointer;
import ru.serce.jnrfuse.ErrorCodes;

/**
 * Extended attributes as FUSE answers them (docs/SEMANTICS.md "Extended attributes"): a file's own
 * ({@code user.modelfs.digest}, {@code user.modelfs.source}), the root's ({@value ModelFs#METRICS_XATTR} when the
 * mount has a metrics endpoint), none elsewhere; {@code getxattr}/{@code listxattr} with size 0 answer the length,
 * a buffer too small is ERANGE.
 *
 * <p>Invariants: the values are UTF-8; the list is sorted and NUL-terminated per name.
 */
final class XattrReplies {
    private final Map<String, String> rootXattrs;

    /** Replies whose root carries {@code rootXattrs}. */
    XattrReplies(Map<String, String> rootXattrs) {
        this.rootXattrs = rootXattrs;
    }

    /** {@code getxattr} of {@code name} on node {@code n} at {@code path}, into {@code value} of {@code size} bytes. */
    int get(String path, Node n, String name, Pointer value, long size) {
        String v = of(path, n).get(name);
        return v == null ? -ErrorCodes.ENODATA() : reply(v.getBytes(StandardCharsets.UTF_8), value, size);
    }

    /** {@code listxattr} of node {@code n} at {@code path}, into {@code list} of {@code size} bytes. */
    int list(String path, Node n, Pointer list, long size) {
        StringBuilder sb = new StringBuilder();
        of(path, n).keySet().stream().sorted().forEach(k -> sb.append(k).append('\0'));
        return reply(sb.toString().getBytes(StandardCharsets.UTF_8), list, size);
    }

    private static int reply(byte[] b, Pointer to, long size) {
        if (size == 0) {
            return b.length;
        }
        if (size < b.length) {
            return -ErrorCodes.ERANGE();
        }
        to.put(0, b, 0, b.length);
        return b.length;
    }

    /** The extended attributes of node {@code n} at {@code path}: a file's own, the root's, else none. */
    private Map<String, String> of(String path, Node n) {
        if (n instanceof FileNode f) {
            return f.xattrs();
        }
        return "/".equals(path) ? rootXattrs : Map.of();
    }
}
