package dev.modelfs.fuse;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The structures of libfuse 2.9's high-level API this process reads or writes itself, declared as FFM
 * layouts (from {@code fuse.h}, {@code fuse_common.h}; LP64: Linux x86-64 and aarch64). Field offsets
 * come from these declarations, never from hand arithmetic.
 */
final class FuseStructs {
    private FuseStructs() {}

    /** The operation slots of {@code struct fuse_operations} before its flag bit fields, in order. */
    static final List<String> OPERATIONS_BEFORE_FLAGS = List.of("getattr", "readlink", "getdir", "mknod", "mkdir",
            "unlink", "rmdir", "symlink", "rename", "link", "chmod", "chown", "truncate", "utime", "open", "read",
            "write", "statfs", "flush", "release", "fsync", "setxattr", "getxattr", "listxattr", "removexattr",
            "opendir", "readdir", "releasedir", "fsyncdir", "init", "destroy", "access", "create", "ftruncate",
            "fgetattr", "lock", "utimens", "bmap");
    /** The operation slots after the flag bit fields, in order. */
    static final List<String> OPERATIONS_AFTER_FLAGS = List.of("ioctl", "poll", "write_buf", "read_buf", "flock",
            "fallocate");

    /**
     * {@code struct fuse_operations}: one function pointer per operation, and after {@code bmap} the
     * {@code flag_nullpath_ok}, {@code flag_nopath}, {@code flag_utime_omit_ok} and reserved bits in one
     * {@code unsigned int} (padded to the next pointer).
     */
    static final StructLayout OPERATIONS = operations();

    /**
     * {@code struct fuse_file_info}: {@code flags}, {@code fh_old}, {@code writepage}, the bit fields
     * ({@code direct_io}, {@code keep_cache}, ...) in one {@code unsigned int}, {@code fh}, {@code lock_owner}.
     */
    static final StructLayout FILE_INFO = MemoryLayout.structLayout(
            JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("fh_old"),
            JAVA_INT.withName("writepage"), JAVA_INT.withName("bits"),
            JAVA_LONG.withName("fh"),
            JAVA_LONG.withName("lock_owner")).withName("fuse_file_info");

    /** {@code struct fuse_buf}: {@code size}, {@code flags} ({@code enum fuse_buf_flags}), {@code mem}, {@code fd}, {@code pos}. */
    static final StructLayout BUF = MemoryLayout.structLayout(
            JAVA_LONG.withName("size"),
            JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4),
            ADDRESS.withName("mem"),
            JAVA_INT.withName("fd"), MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("pos")).withName("fuse_buf");

    /** {@code struct fuse_bufvec} with its one {@code struct fuse_buf}: {@code count}, {@code idx}, {@code off}, {@code buf[0]}. */
    static final StructLayout BUFVEC = MemoryLayout.structLayout(
            JAVA_LONG.withName("count"),
            JAVA_LONG.withName("idx"),
            JAVA_LONG.withName("off"),
            BUF.withName("buf")).withName("fuse_bufvec");

    /** {@code FUSE_BUF_IS_FD}: the buffer is a file descriptor, not memory. */
    static final int BUF_IS_FD = 1 << 1;
    /** {@code FUSE_BUF_FD_SEEK}: read the descriptor at {@code pos}. */
    static final int BUF_FD_SEEK = 1 << 2;

    static final long OPS_READ_BUF = OPERATIONS.byteOffset(groupElement("read_buf"));
    static final long FI_FH = FILE_INFO.byteOffset(groupElement("fh"));
    static final long BV_COUNT = BUFVEC.byteOffset(groupElement("count"));
    static final long BV_BUF_SIZE = BUFVEC.byteOffset(groupElement("buf"), groupElement("size"));
    static final long BV_BUF_FLAGS = BUFVEC.byteOffset(groupElement("buf"), groupElement("flags"));
    static final long BV_BUF_MEM = BUFVEC.byteOffset(groupElement("buf"), groupElement("mem"));
    static final long BV_BUF_FD = BUFVEC.byteOffset(groupElement("buf"), groupElement("fd"));
    static final long BV_BUF_POS = BUFVEC.byteOffset(groupElement("buf"), groupElement("pos"));

    /** The byte offset of operation {@code name}'s slot in {@link #OPERATIONS}. */
    static long operationSlot(String name) {
        return OPERATIONS.byteOffset(groupElement(name));
    }

    private static StructLayout operations() {
        List<MemoryLayout> fields = new ArrayList<>();
        for (String op : OPERATIONS_BEFORE_FLAGS) {
            fields.add(ADDRESS.withName(op));
        }
        fields.add(JAVA_INT.withName("flags"));
        fields.add(MemoryLayout.paddingLayout(ADDRESS.byteSize() - JAVA_INT.byteSize()));
        for (String op : OPERATIONS_AFTER_FLAGS) {
            fields.add(ADDRESS.withName(op));
        }
        return MemoryLayout.structLayout(fields.toArray(MemoryLayout[]::new)).withName("fuse_operations");
    }
}
