package dev.modelfs.fuse;

import jnr.ffi.Pointer;
import ru.serce.jnrfuse.ErrorCodes;
import ru.serce.jnrfuse.FuseFS;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.NotImplemented;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.Flock;
import ru.serce.jnrfuse.struct.FuseBufvec;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FusePollhandle;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * The FUSE operations of a read-only file system. An implementation (extending jnr-fuse's
 * {@code AbstractFuseFS}) writes only the operations it serves: {@link #getattr}, {@link #readdir},
 * {@link #open} and {@link #release}, plus any default it replaces.
 *
 * <p>Invariants: every operation that would change the tree answers {@code EROFS} by default and is
 * installed in libfuse's table; every other default is {@link NotImplemented}, so jnr-fuse leaves its slot
 * empty and libfuse answers as for a missing operation ({@code ENOSYS}, or its own behaviour: no
 * {@code flush} is fine, {@code opendir} may be absent, {@code write_buf} falls back to {@code write}).
 * {@link #read} and {@link #read_buf} stay empty: {@link FuseWorkers} installs its own {@code read_buf}.
 */
interface ReadOnlyFuseOperations extends FuseFS {
    private static int readOnly() {
        return -ErrorCodes.EROFS();
    }

    private static int absent() {
        return -ErrorCodes.ENOSYS();
    }

    // ---- served by the implementation ----
    @Override int getattr(String path, FileStat stat);

    @Override int readdir(String path, Pointer buf, FuseFillDir filler, long offset, FuseFileInfo fi);

    @Override int open(String path, FuseFileInfo fi);

    @Override int release(String path, FuseFileInfo fi);

    // ---- would change the tree: EROFS ----
    @Override default int mknod(String path, long mode, long rdev) { return readOnly(); }
    @Override default int mkdir(String path, long mode) { return readOnly(); }
    @Override default int unlink(String path) { return readOnly(); }
    @Override default int rmdir(String path) { return readOnly(); }
    @Override default int symlink(String oldpath, String newpath) { return readOnly(); }
    @Override default int rename(String oldpath, String newpath) { return readOnly(); }
    @Override default int link(String oldpath, String newpath) { return readOnly(); }
    @Override default int chmod(String path, long mode) { return readOnly(); }
    @Override default int chown(String path, long uid, long gid) { return readOnly(); }
    @Override default int truncate(String path, long size) { return readOnly(); }
    @Override default int write(String path, Pointer buf, long size, long offset, FuseFileInfo fi) { return readOnly(); }
    @Override default int create(String path, long mode, FuseFileInfo fi) { return readOnly(); }
    @Override default int setxattr(String path, String name, Pointer value, long size, int flags) { return readOnly(); }
    @Override default int removexattr(String path, String name) { return readOnly(); }
    @Override default int utimens(String path, Timespec[] timespec) { return readOnly(); }
    @Override default int ftruncate(String path, long size, FuseFileInfo fi) { return readOnly(); }
    @Override default int fallocate(String path, int mode, long off, long length, FuseFileInfo fi) { return readOnly(); }

    // ---- not installed unless implemented ----
    @NotImplemented @Override default int readlink(String path, Pointer buf, long size) { return absent(); }
    @NotImplemented @Override default int read(String path, Pointer buf, long size, long offset, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int read_buf(String path, Pointer bufp, long size, long off, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int write_buf(String path, FuseBufvec buf, long off, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int statfs(String path, Statvfs stbuf) { return absent(); }
    @NotImplemented @Override default int flush(String path, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int fsync(String path, int isdatasync, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int getxattr(String path, String name, Pointer value, long size) { return absent(); }
    @NotImplemented @Override default int listxattr(String path, Pointer list, long size) { return absent(); }
    @NotImplemented @Override default int opendir(String path, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int releasedir(String path, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int fsyncdir(String path, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default Pointer init(Pointer conn) { return null; }
    @NotImplemented @Override default void destroy(Pointer initResult) {}
    @NotImplemented @Override default int access(String path, int mask) { return absent(); }
    @NotImplemented @Override default int fgetattr(String path, FileStat stbuf, FuseFileInfo fi) { return absent(); }
    @NotImplemented @Override default int lock(String path, FuseFileInfo fi, int cmd, Flock flock) { return absent(); }
    @NotImplemented @Override default int bmap(String path, long blocksize, long idx) { return absent(); }
    @NotImplemented @Override default int ioctl(String path, int cmd, Pointer arg, FuseFileInfo fi, long flags, Pointer data) { return absent(); }
    @NotImplemented @Override default int poll(String path, FuseFileInfo fi, FusePollhandle ph, Pointer reventsp) { return absent(); }
    @NotImplemented @Override default int flock(String path, FuseFileInfo fi, int op) { return absent(); }
}
