package dev.modelfs.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.bytes.BlobResolver;
import dev.modelfs.cache.ChunkCache;
import dev.modelfs.read.ReadAhead;
import dev.modelfs.serve.ServePolicy;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.ModelDirectory;
import dev.modelfs.tree.StoreTree;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jnr.ffi.Runtime;
import jnr.ffi.Struct;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import ru.serce.jnrfuse.ErrorCodes;
import ru.serce.jnrfuse.NotImplemented;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FuseOperations;

/** The FUSE adapter without a mount: its operation table, its read-only defaults, its answers. */
class ModelFsTest {
    private static final List<String> MUTATIONS = List.of("mknod", "mkdir", "unlink", "rmdir", "symlink", "rename",
            "link", "chmod", "chown", "truncate", "write", "create", "setxattr", "removexattr", "utimens", "ftruncate",
            "fallocate");

    @TempDir
    Path store;

    private ModelFs fs() {
        BlobResolver none = ref -> {
            throw new NoSuchFileException(ref.digest().fileName());
        };
        StoreTree tree = new StoreTree(new OllamaStore(store), new ModelDirectory(List.of()));
        return new ModelFs(tree, new ServePolicy(store, none, new ChunkCache(1 << 16), ReadAhead.NONE, 1234, 5678));
    }

    @Test
    void everyOperationThatWouldChangeTheTreeAnswersErofsByDefault() throws Exception {
        ModelFs fs = fs();
        List<String> refused = new ArrayList<>();
        for (Method m : ReadOnlyFuseOperations.class.getDeclaredMethods()) {
            if (!m.isDefault() || m.isAnnotationPresent(NotImplemented.class)) {
                continue;
            }
            Object[] args = new Object[m.getParameterCount()];
            Class<?>[] types = m.getParameterTypes();
            for (int i = 0; i < args.length; i++) {
                if (types[i] == String.class) {
                    args[i] = "/x";
                } else if (types[i] == int.class) {
                    args[i] = 0;
                } else if (types[i] == long.class) {
                    args[i] = 0L;
                }
            }
            assertEquals(-ErrorCodes.EROFS(), m.invoke(fs, args), m.getName());
            refused.add(m.getName());
        }
        assertEquals(MUTATIONS.stream().sorted().toList(), refused.stream().sorted().toList());
    }

    @Test
    void theNativeTableHasTheMutationsAndServedOperationsButNoReadCallback() {
        ModelFs fs = fs();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ops = fs.copyOperations(arena);
            assertEquals(FuseStructs.OPERATIONS.byteSize(), ops.byteSize());
            for (String op : MUTATIONS) {
                assertNotEquals(0L, slot(ops, op), op + " is installed (answers EROFS)");
            }
            for (String op : List.of("getattr", "readdir", "open", "release", "statfs", "getxattr", "listxattr",
                    "access", "fgetattr")) {
                assertNotEquals(0L, slot(ops, op), op + " is served");
            }
            for (String op : List.of("read", "read_buf", "readlink", "flush", "opendir", "lock", "write_buf", "ioctl")) {
                assertEquals(0L, slot(ops, op), op + " is left to libfuse (read_buf is FuseWorkers')");
            }
        }
    }

    private static long slot(MemorySegment ops, String name) {
        return ops.get(ValueLayout.ADDRESS, FuseStructs.operationSlot(name)).address();
    }

    /** The declared layout agrees, slot by slot, with jnr-fuse's own declaration of the same struct. */
    @Test
    void theDeclaredLayoutMatchesJnrFusesStructFuseOperations() throws Exception {
        FuseOperations jnr = new FuseOperations(Runtime.getSystemRuntime());
        assertEquals(Struct.size(jnr), FuseStructs.OPERATIONS.byteSize());
        Method offset = Class.forName("jnr.ffi.Struct$Member").getDeclaredMethod("offset");
        offset.setAccessible(true);
        List<String> ops = new ArrayList<>(FuseStructs.OPERATIONS_BEFORE_FLAGS);
        ops.addAll(FuseStructs.OPERATIONS_AFTER_FLAGS);
        int checked = 0;
        for (String op : ops) {
            Field f = FuseOperations.class.getField(op);
            assertTrue(Modifier.isPublic(f.getModifiers()));
            assertEquals((long) offset.invoke(f.get(jnr)), FuseStructs.operationSlot(op), op);
            checked++;
        }
        assertEquals(44, checked);
        assertEquals(336, FuseStructs.OPS_READ_BUF, "libfuse 2.9, LP64: 42 pointer-sized slots before read_buf");
        assertEquals(24, FuseStructs.FI_FH, "struct fuse_file_info.fh, LP64");
        assertEquals(64, FuseStructs.BUFVEC.byteSize(), "struct fuse_bufvec with one fuse_buf, LP64");
    }

    @Test
    void attributesComeFromThePolicyAndMissingPathsAreEnoent() {
        ModelFs fs = fs();
        FileStat st = new FileStat(Runtime.getSystemRuntime());
        assertEquals(0, fs.getattr("/", st));
        assertEquals(FileStat.S_IFDIR | 0555, st.st_mode.intValue());
        assertEquals(2, st.st_nlink.intValue());
        assertEquals(1234, st.st_uid.longValue());
        assertEquals(5678, st.st_gid.longValue());
        assertEquals(4096, st.st_size.longValue());
        assertEquals(-ErrorCodes.ENOENT(), fs.getattr("/no-such-model", st));
    }

    @Test
    void openingForWritingIsErofsAndOpeningADirectoryIsEisdir() {
        ModelFs fs = fs();
        FuseFileInfo fi = FuseFileInfo.of(jnr.ffi.Memory.allocateDirect(Runtime.getSystemRuntime(),
                (int) FuseStructs.FILE_INFO.byteSize()));
        fi.flags.set(1);                                    // O_WRONLY
        assertEquals(-ErrorCodes.EROFS(), fs.open("/", fi));
        fi.flags.set(0);
        assertEquals(-ErrorCodes.EISDIR(), fs.open("/", fi));
        assertEquals(-ErrorCodes.ENOENT(), fs.open("/missing", fi));
    }
}
