package dev.modelfs.fuse;

import dev.modelfs.serve.ServePolicy;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * The {@link ServePolicy}'s answers encoded as FUSE's {@code struct stat} and {@code struct statvfs} (docs/SEMANTICS.md
 * "Attributes"): one mtime for all three times, a directory or a regular file, the policy's permissions, links, size
 * and blocks; a read-only file system of the policy's space.
 *
 * <p>Invariants: pure encoding; nothing here decides a value.
 */
final class StatReplies {
    private StatReplies() {}

    /** Fills {@code stat} with attributes {@code a}. */
    static void fill(ServePolicy.Attributes a, FileStat stat) {
        stat.st_ino.set(a.inode());
        stat.st_uid.set(a.uid());
        stat.st_gid.set(a.gid());
        for (Timespec t : new Timespec[] {stat.st_mtim, stat.st_ctim, stat.st_atim}) {
            t.tv_sec.set(a.mtimeSeconds());
            t.tv_nsec.set(a.mtimeNanosOfSecond());
        }
        stat.st_mode.set((a.directory() ? FileStat.S_IFDIR : FileStat.S_IFREG) | a.permissions());
        stat.st_nlink.set(a.links());
        stat.st_size.set(a.size());
        stat.st_blocks.set(a.blocks());
        stat.st_blksize.set(ServePolicy.BLOCK_SIZE);
    }

    /** Fills {@code st} with {@code space}, read-only. */
    static void fill(ServePolicy.Space space, Statvfs st) {
        st.f_bsize.set(space.blockSize());
        st.f_frsize.set(space.blockSize());
        st.f_blocks.set(space.totalBytes() / space.blockSize());
        st.f_bfree.set(space.freeBytes() / space.blockSize());
        st.f_bavail.set(space.availableBytes() / space.blockSize());
        st.f_namemax.set(ServePolicy.NAME_MAX);
        st.f_flag.set(Statvfs.ST_RDONLY);
    }
}
