package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.fuse.MountTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code modelfs demo}, the README's first command, as a user runs it (the real CLI in its own JVM):
 * its sample models are complete, so the listing shows every view (the Hugging Face folder of the GGUF
 * model, the synthesized GGUF of the safetensors model) and the log has no complaint about them; with
 * {@code --keep} the real clients (gguf-py, safetensors, transformers) read the mount
 * (python/check_demo.py) and {@code modelfs unmount} ends the command.
 */
class DemoCommandTest {
    /** A log line of java.util.logging as modelfs formats it (Main): date, time, level, message. */
    private static final Pattern LOG_LINE = Pattern.compile("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d (SEVERE|WARNING|INFO) (.*)");
    /** A file line of the listing: indentation, name, size ({@code 84.4 KB}, {@code 502 B}). */
    private static final Pattern FILE_LINE = Pattern.compile("( *)(\\S.*?) +\\d+(\\.\\d+)? [KMGT]?B");
    /** The names of the sample models in a log message. */
    private static final Pattern SAMPLE_MODEL = Pattern.compile("\\bdemo-(llama|st|image)\\b");
    private static final Pattern DIR_LINE = Pattern.compile("( *)(\\S.*)/");

    @Test
    void demoListsEveryViewOfItsSampleModelsWithoutComplaints() throws Exception {
        Env.requireFuse();
        Path work = Files.createTempDirectory("modelfs-it-demo");
        Path mp = work.resolve("mnt");
        try {
            Env.Run run = Env.run(120, CliMount.command("demo", mp.toString()));
            System.out.println(run.output());
            deleteSampleStore(run.output());
            assertEquals(0, run.exit(), run.output());
            assertNoComplaints(run.output());
            Set<String> listed = listing(run.output());
            for (String f : List.of("demo-llama/config.json", "demo-llama/generation_config.json", "demo-llama/tokenizer.json",
                    "demo-llama/tokenizer_config.json", "demo-llama/special_tokens_map.json", "demo-llama/model.safetensors",
                    "demo-llama/bf16/model.safetensors", "demo-llama/bf16/config.json", "demo-llama/gguf/model.safetensors", "demo-llama/model.gguf",
                    "demo-llama/model.fp16.gguf", "demo-llama/ollama/Modelfile",
                    "demo-st:int4/model.gguf", "demo-st:int4/model.fp32.gguf", "demo-st:int4/model.safetensors",
                    "demo-st:int4/bf16/model.safetensors", "demo-st:int4/bf16/tokenizer.json", "demo-st:int4/config.json", "demo-st:int4/tokenizer.json",
                    "x/demo-image/transformer/diffusion_pytorch_model.safetensors", "x/demo-image/model_index.json")) {
                assertTrue(listed.contains(f), f + " not in the listing:\n" + run.output());
            }
            assertTrue(run.output().contains("unmounted " + mp), run.output());
            assertFalse(MountTable.isMounted(mp), "still mounted after demo");
        } finally {
            cleanUp(work, mp);
        }
    }

    @Test
    void demoKeepServesRealClientsUntilModelfsUnmount() throws Exception {
        Env.requireFuse();
        Path work = Files.createTempDirectory("modelfs-it-demo-keep");
        Path mp = work.resolve("mnt");
        Path log = work.resolve("demo.log");
        Process demo = CliMount.launch(List.of("demo", "--keep", mp.toString()), log, "demo --keep",
                () -> Files.readString(log).contains("staying mounted") && MountTable.isMounted(mp));
        try {
            Env.Run check = Env.python(300, "check_demo.py", mp.toString());
            System.out.println(check.output());
            assertEquals(0, check.exit(), "check_demo.py failed:\n" + check.output() + "\ndemo log:\n" + Files.readString(log));
            assertTrue(check.output().lines().anyMatch(l -> l.matches("\\d+ passed, 0 failed")), check.output());
            Env.Run walk = Env.python(120, "check_one_weight_set.py", mp.toString());
            System.out.println(walk.output());
            assertEquals(0, walk.exit(), "check_one_weight_set.py failed:\n" + walk.output());

            Env.Run unmount = Env.run(60, CliMount.command("unmount", mp.toString()));
            assertEquals(0, unmount.exit(), unmount.output());
            assertTrue(demo.waitFor(30, TimeUnit.SECONDS), "demo --keep still running after modelfs unmount:\n" + Files.readString(log));
            assertEquals(0, demo.exitValue(), Files.readString(log));
            String out = Files.readString(log);
            assertTrue(out.contains("unmounted " + mp), out);
            assertNoComplaints(out);
            deleteSampleStore(out);
        } finally {
            if (demo.isAlive()) {
                demo.destroy();
                if (!demo.waitFor(30, TimeUnit.SECONDS)) {
                    demo.destroyForcibly();
                }
            }
            cleanUp(work, mp);
        }
    }

    /** No modelfs log line at WARNING or SEVERE at all, none at INFO about a sample model. */
    private static void assertNoComplaints(String output) {
        for (String line : output.lines().toList()) {
            Matcher m = LOG_LINE.matcher(line);
            if (m.matches()) {
                assertFalse(!m.group(1).equals("INFO") || SAMPLE_MODEL.matcher(m.group(2)).find(),
                        "log line about the sample store: " + line + "\n" + output);
            }
        }
    }

    /** The paths the demo listed (between "mounted at:" and the "try:" hint), as {@code dir/sub/file}. */
    private static Set<String> listing(String output) {
        Set<String> out = new TreeSet<>();
        List<String> dirs = new ArrayList<>();
        boolean in = false;
        for (String line : output.lines().toList()) {
            if (line.startsWith("mounted at:")) {
                in = true;
                continue;
            }
            if (!in || line.isBlank() || LOG_LINE.matcher(line).matches()) {
                continue;
            }
            if (line.startsWith("try:")) {
                break;
            }
            Matcher d = DIR_LINE.matcher(line), f = FILE_LINE.matcher(line);
            boolean dir = d.matches();
            Matcher m = dir ? d : f;
            assertTrue(dir || f.matches(), "not a listing line: " + line);
            int depth = m.group(1).length() / 2;
            assertTrue(depth <= dirs.size(), "indentation of " + line);
            dirs.subList(depth, dirs.size()).clear();
            String path = String.join("/", dirs) + (depth == 0 ? "" : "/") + m.group(2);
            if (dir) {
                dirs.add(m.group(2));
            } else {
                out.add(path);
            }
        }
        return out;
    }

    /** The demo writes its sample store to a new temporary directory (it prints the path) and removes it on exit. */
    private static void deleteSampleStore(String output) throws IOException {
        for (String line : output.lines().toList()) {
            if (line.startsWith("sample store: ")) {
                Path store = Path.of(line.substring("sample store: ".length()).trim());
                boolean left = Files.exists(store);
                if (store.getParent().getFileName().toString().startsWith("modelfs-demo-")) {
                    deleteTree(store.getParent());
                }
                assertFalse(left, "the demo left its sample store behind: " + store);
            }
        }
    }

    private static void cleanUp(Path work, Path mp) throws IOException {
        if (MountTable.isMounted(mp)) {
            MountTable.fusermount(mp, true);
        }
        if (!MountTable.isMounted(mp)) {
            deleteTree(work);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
