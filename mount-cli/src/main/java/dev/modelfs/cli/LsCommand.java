package dev.modelfs.cli;

import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ManifestRef;
import dev.modelfs.store.ModelConfig;
import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code modelfs ls}: the models of the store, like {@code ollama list}, plus format and quantization. */
@Command(name = "ls", aliases = "list", mixinStandardHelpOptions = true, description = "List the models in the store.")
final class LsCommand implements Callable<Integer> {
    private static final int REASON_MAX = 200;

    @Mixin
    StoreOption store;

    @Override
    public Integer call() throws IOException {
        OllamaStore st = store.openExisting();
        List<String[]> rows = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        rows.add(new String[] {"NAME", "ID", "SIZE", "FORMAT", "QUANTIZATION", "MODIFIED"});
        DateTimeFormatter fmt = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneId.systemDefault());
        for (ManifestRef ref : st.listManifests()) {
            try {
                Manifest m = ManifestParser.parse(ref.name(), st.readManifest(ref));
                ModelConfig c = ModelSummary.config(st, m);
                rows.add(new String[] {ref.name().displayShortest(), m.digest().shortId(), SizeConverter.human(m.totalSize()),
                        ModelSummary.format(m, c), ModelSummary.quantization(st, m, c),
                        fmt.format(Instant.ofEpochSecond(0, ref.mtimeNanos()))});
            } catch (IOException | RuntimeException e) {
                rows.add(new String[] {ref.name().displayShortest(), "-", "-", "invalid", "-", ""});
                problems.add(ref.name().displayShortest() + ": " + oneLine(e));
            }
        }
        int[] w = new int[rows.getFirst().length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                sb.append(r[i]);
                if (i < r.length - 1) {
                    sb.append(" ".repeat(w[i] - r[i].length() + 3));
                }
            }
            System.out.println(sb.toString().stripTrailing());
        }
        for (String p : problems) {                  // the reasons below the table, never in a column
            System.err.println("modelfs: " + p);
        }
        return 0;
    }

    /** The first line of a failure's message, at most {@value #REASON_MAX} characters. */
    private static String oneLine(Exception e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        m = m.lines().findFirst().orElse("");
        return m.length() > REASON_MAX ? m.substring(0, REASON_MAX - 3) + "..." : m;
    }
}
