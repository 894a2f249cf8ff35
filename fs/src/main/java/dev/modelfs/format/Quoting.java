package dev.modelfs.format;

/**
 * Renders possibly hostile strings (tensor names, keys, paths from files) for one-line messages:
 * quoted, control and line-separator characters escaped as {@code \\uXXXX}, cut after 80 characters.
 */
public final class Quoting {
    private static final int MAX_QUOTED = 80;

    private Quoting() {}

    public static String quote(String s) {
        if (s == null) {
            return "null";
        }
        int n = Math.min(s.length(), MAX_QUOTED);
        StringBuilder b = new StringBuilder(n + 8).append('"');
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '"' || c == '\\' || c == 0x2028 || c == 0x2029) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        b.append('"');
        if (s.length() > MAX_QUOTED) {
            b.append("...(").append(s.length()).append(" chars)");
        }
        return b.toString();
    }
}
