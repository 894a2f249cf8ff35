package dev.modelfs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Layer;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.ModelName;
import dev.modelfs.store.OllamaStore;
import java.io.Console;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code modelfs verify}: hashes every blob the manifests reference and compares it with its digest
 * and the manifest's size. Exit codes: 0 everything intact, 1 a blob is corrupt, missing, refused or
 * of the wrong size (or a manifest cannot be read), 2 usage or runtime errors.
 */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = {"Check that every blob the models reference is intact (SHA-256 and size).",
            "Exit 0: all intact; 1: something is corrupt, missing or refused; 2: usage or runtime error."})
final class VerifyCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final int BROKEN = 1;

    @Mixin
    StoreOption store;

    @Parameters(paramLabel = "MODEL", arity = "0..*", description = "models to check (default: every model in the store)")
    List<String> models = new ArrayList<>();

    @Option(names = "--threads", paramLabel = "N", description = "blobs hashed in parallel (default: the number of CPUs)")
    int threads = Runtime.getRuntime().availableProcessors();

    @Option(names = "--json", description = "machine-readable report on stdout")
    boolean json;

    /** One reference of a model to a blob, with the size its manifest promises. */
    private record Ref(String role, Digest digest, long size) {}

    /** A model to check: its name, its blob references, or why its manifest could not be read. */
    private record Model(String name, List<Ref> refs, String invalid) {}

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (threads < 1) {
            throw new IllegalArgumentException("--threads must be at least 1");
        }
        OllamaStore st = store.openExisting();
        List<Model> todo = select(st);
        Map<Digest, Long> distinct = new LinkedHashMap<>();
        todo.forEach(m -> m.refs().forEach(r -> distinct.putIfAbsent(r.digest(), Math.max(0, r.size()))));
        long total = distinct.values().stream().mapToLong(Long::longValue).sum();
        BlobCheck check = new BlobCheck(st, threads);
        Map<Digest, BlobCheck.Result> results;
        try (Progress p = Progress.start(check, total, distinct.size())) {
            results = check.check(distinct.keySet());
        }
        ObjectNode report = report(st, todo, results);
        if (json) {
            System.out.println(JSON.writeValueAsString(report));
        } else {
            print(report);
        }
        return report.get("intact").asBoolean() ? 0 : BROKEN;
    }

    private List<Model> select(OllamaStore st) throws IOException {
        List<ManifestRef> refs = st.listManifests();
        List<ManifestRef> chosen = new ArrayList<>();
        if (models.isEmpty()) {
            chosen.addAll(refs);
        } else {
            for (String want : models) {
                ModelName n = ModelName.parse(want).orElseThrow(() -> new IllegalArgumentException("not a valid model name: " + want));
                chosen.add(refs.stream().filter(r -> r.name().equalsIgnoreCase(n)).findFirst()
                        .orElseThrow(() -> new IOException("model " + want + " not found in " + st.root())));
            }
        }
        List<Model> out = new ArrayList<>();
        for (ManifestRef ref : new LinkedHashSet<>(chosen)) {
            String name = ref.name().displayShortest();
            try {
                Manifest m = ManifestParser.parse(ref.name(), st.readManifest(ref));
                List<Ref> blobs = new ArrayList<>();
                m.config().digest().ifPresent(d -> blobs.add(new Ref("config", d, m.config().size())));
                for (Layer l : m.layers()) {
                    l.digest().ifPresent(d -> blobs.add(new Ref(l.mediaType().base(), d, l.size())));
                }
                out.add(new Model(name, blobs, null));
            } catch (IOException | RuntimeException e) {
                out.add(new Model(name, List.of(), "manifest cannot be read: " + e.getMessage()));
            }
        }
        return out;
    }

    private static ObjectNode report(OllamaStore st, List<Model> todo, Map<Digest, BlobCheck.Result> results) {
        ObjectNode out = JSON.createObjectNode();
        out.put("store", st.root().toString());
        boolean allIntact = true;
        long bytes = 0;
        ArrayNode models = out.putArray("models");
        for (Model m : todo) {
            ObjectNode mn = models.addObject();
            mn.put("name", m.name());
            boolean intact = m.invalid() == null;
            if (!intact) {
                mn.put("problem", m.invalid());
            }
            ArrayNode blobs = mn.putArray("blobs");
            for (Ref r : m.refs()) {
                BlobCheck.Result res = results.get(r.digest());
                String status = res.state().name().toLowerCase(Locale.ROOT);
                String detail = res.detail();
                if (res.size() >= 0 && res.size() != r.size()) {   // a truncated download: say so rather than "corrupt"
                    status = "size";
                    detail = "blob has " + res.size() + " bytes, the manifest says " + r.size();
                }
                ObjectNode bn = blobs.addObject();
                bn.put("role", r.role());
                bn.put("digest", r.digest().toString());
                bn.put("size", r.size());
                if (res.size() >= 0) {
                    bn.put("actualSize", res.size());
                    bytes += res.size();
                }
                bn.put("status", status);
                if (!detail.isEmpty()) {
                    bn.put("detail", detail);
                }
                intact &= status.equals("intact");
            }
            mn.put("status", intact ? "intact" : m.invalid() != null ? "invalid" : "broken");
            allIntact &= intact;
        }
        out.put("intact", allIntact);
        out.put("blobsChecked", results.size());
        out.put("bytesChecked", bytes);
        return out;
    }

    private static void print(ObjectNode report) {
        int bad = 0;
        for (var m : report.get("models")) {
            String status = m.get("status").asText();
            System.out.printf("%-40s %s (%d blobs)%n", m.get("name").asText(), status, m.get("blobs").size());
            if (m.has("problem")) {
                System.out.println("    " + m.get("problem").asText());
            }
            for (var b : m.get("blobs")) {
                if (!b.get("status").asText().equals("intact")) {
                    System.out.printf("    %-8s %s %s%s%n", b.get("status").asText(), b.get("role").asText(),
                            b.get("digest").asText(), b.has("detail") ? ": " + b.get("detail").asText() : "");
                }
            }
            bad += status.equals("intact") ? 0 : 1;
        }
        int n = report.get("models").size();
        int blobs = report.get("blobsChecked").asInt();
        System.out.printf("%d model%s, %d of them with problems; %d blob%s, %s hashed%n", n, n == 1 ? "" : "s", bad,
                blobs, blobs == 1 ? "" : "s", SizeConverter.human(report.get("bytesChecked").asLong()));
    }

    /** A progress bar on stderr, drawn only when the console is a terminal; closing it erases it. */
    private static final class Progress implements AutoCloseable {
        private final Thread drawer;
        private final PrintStream err = System.err;

        private Progress(Thread drawer) {
            this.drawer = drawer;
        }

        static Progress start(BlobCheck check, long total, int blobs) {
            Console c = System.console();
            if (c == null || !c.isTerminal()) {
                return new Progress(null);
            }
            Thread t = Thread.ofPlatform().daemon().name("modelfs-verify-progress").unstarted(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        draw(check.bytesDone(), total, blobs);
                        Thread.sleep(200);
                    }
                } catch (InterruptedException e) {
                    // done
                }
            });
            t.start();
            return new Progress(t);
        }

        private static void draw(long done, long total, int blobs) {
            double f = total == 0 ? 1 : Math.min(1, (double) done / total);
            int w = 30;
            int fill = (int) Math.round(f * w);
            System.err.print("\r[" + "#".repeat(fill) + " ".repeat(w - fill) + "] "
                    + String.format("%3d%% %s of %s, %d blobs", Math.round(f * 100), SizeConverter.human(done),
                    SizeConverter.human(total), blobs));
            System.err.flush();
        }

        @Override
        public void close() throws InterruptedException {
            if (drawer != null) {
                drawer.interrupt();
                drawer.join();
                err.print("\r" + " ".repeat(79) + "\r");
                err.flush();
            }
        }
    }
}
