package dev.modelfs.cli;

import java.util.Locale;
import picocli.CommandLine;

/** Parses sizes like {@code 512M}, {@code 2G}, {@code 1048576}. */
final class SizeConverter implements CommandLine.ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
        String v = value.trim().toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        long mul = 1;
        if (!v.isEmpty() && "KMGT".indexOf(v.charAt(v.length() - 1)) >= 0) {
            mul = 1L << (10 * ("KMGT".indexOf(v.charAt(v.length() - 1)) + 1));
            v = v.substring(0, v.length() - 1);
        }
        try {
            long n = Long.parseLong(v);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(n, mul);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new CommandLine.TypeConversionException("not a size: " + value);
        }
    }

    static String human(long bytes) {
        if (bytes < 1000) {
            return bytes + " B";
        }
        String[] u = {"KB", "MB", "GB", "TB", "PB"};
        double v = bytes;
        int i = -1;
        while (v >= 1000 && i < u.length - 1) {
            v /= 1000;
            i++;
        }
        return String.format(Locale.ROOT, v >= 100 ? "%.0f %s" : "%.1f %s", v, u[i]);
    }
}
