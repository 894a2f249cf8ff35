package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * llama.cpp's multimodal CLI, {@code llama-mtmd-cli}, built once from the llama.cpp source node-llama-cpp bundles
 * by {@code mtmd/build-mtmd-cli.sh} (its multimodal library and the CLI alone, linked against the llama.cpp
 * libraries node-llama-cpp ships prebuilt: about a minute on 2 CPUs) and kept in
 * {@code ~/.cache/modelfs/llama-mtmd/<source commit>-<recipe and libraries hash>/}
 * (like the QEMU guest: {@link QemuGuest#image}). The image checks of {@link DialectGgufTest} run it on the mount's
 * {@code model.gguf} + {@code mmproj.gguf} and on llama.cpp's own conversion.
 *
 * <p>Invariant: {@link #binary} returns an executable file or fails the test, saying why (cmake or a compiler
 * missing, the build failed, or it took longer than {@link #BUILD_SECONDS}); it never skips.
 */
final class MtmdCli {
    /**
     * A fresh 2-CPU machine builds it in about a minute (mtmd and the CLI; 2.5 min at a load average of 12), the
     * whole of llama.cpp (the fallback without prebuilt libraries) in about ten.
     */
    static final long BUILD_SECONDS = 2400;

    private MtmdCli() {
    }

    /** The cached binary, built first when missing. */
    static Path binary() throws IOException, InterruptedException {
        String cacheHome = System.getenv("XDG_CACHE_HOME");
        Path cache = (cacheHome == null || cacheHome.isEmpty() ? Path.of(System.getProperty("user.home"), ".cache") : Path.of(cacheHome))
                .resolve("modelfs").resolve("llama-mtmd");
        Path src = Path.of(System.getProperty("modelfs.llamaCppSrc", "node/node_modules/.llama.cpp-src")).toAbsolutePath();
        Path script = Path.of("mtmd", "build-mtmd-cli.sh").toAbsolutePath();
        Env.Run r = Env.run(BUILD_SECONDS, List.of("bash", script.toString(), cache.toString(), src.toString()));
        List<Path> bin = r.output().lines().filter(l -> l.startsWith("/")).map(Path::of).toList();
        if (r.exit() != 0 || bin.size() != 1 || !Files.isExecutable(bin.get(0))) {
            fail("cannot build llama-mtmd-cli from " + src + " (g++ is required, cmake too without prebuilt libraries: scripts/lib.sh ensure_mtmd_build):\n" + r.output());
        }
        return bin.get(0);
    }
}
