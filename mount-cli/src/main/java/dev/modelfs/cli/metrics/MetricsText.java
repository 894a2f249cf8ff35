package dev.modelfs.cli.metrics;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the Prometheus text exposition format (version 0.0.4: {@code # HELP} and {@code # TYPE} comments,
 * then one sample per line, {@code name{label="value",...} value [timestamp]}) into samples, for
 * {@code modelfs status}.
 *
 * <p>Invariants: label values are unescaped ({@code \\}, {@code \"}, {@code \n}); {@code +Inf}, {@code -Inf}
 * and {@code NaN} are read as such; comments and blank lines are skipped; a malformed sample line is an
 * {@link IllegalArgumentException} naming it.
 */
public final class MetricsText {
    private MetricsText() {}

    /** One sample: the metric name (with its {@code _total}, {@code _bucket} … suffix), its labels and value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public Sample {
            labels = Collections.unmodifiableMap(new LinkedHashMap<>(labels));
        }

        /** The value of label {@code name}, or "" when it has none. */
        public String label(String name) {
            return labels.getOrDefault(name, "");
        }
    }

    public static List<Sample> parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            String l = line.strip();
            if (!l.isEmpty() && !l.startsWith("#")) {
                out.add(sample(l));
            }
        }
        return out;
    }

    private static Sample sample(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i = labels(line, i + 1, labels);
        }
        String[] rest = line.substring(i).strip().split(" +");
        if (name.isEmpty() || rest.length == 0 || rest[0].isEmpty()) {
            throw new IllegalArgumentException("not a sample line: " + line);
        }
        return new Sample(name, labels, number(rest[0], line));
    }

    /** Reads {@code name="value",...}} from {@code at}; returns the index after the closing brace. */
    private static int labels(String line, int at, Map<String, String> labels) {
        int i = at;
        while (true) {
            while (i < line.length() && (line.charAt(i) == ',' || line.charAt(i) == ' ')) {
                i++;
            }
            if (i < line.length() && line.charAt(i) == '}') {
                return i + 1;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("bad labels in: " + line);
            }
            StringBuilder v = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char c = line.charAt(j);
                if (c == '\\' && j + 1 < line.length()) {
                    char e = line.charAt(++j);
                    v.append(e == 'n' ? '\n' : e);
                } else {
                    v.append(c);
                }
            }
            if (j >= line.length()) {
                throw new IllegalArgumentException("unterminated label value in: " + line);
            }
            labels.put(line.substring(i, eq).strip(), v.toString());
            i = j + 1;
        }
    }

    private static double number(String s, String line) {
        return switch (s) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> {
                try {
                    yield Double.parseDouble(s);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bad value in: " + line);
                }
            }
        };
    }
}
