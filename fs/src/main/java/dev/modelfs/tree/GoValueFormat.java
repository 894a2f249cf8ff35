package dev.modelfs.tree;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;

/**
 * Formats JSON-decoded values the way Go's {@code fmt.Sprintf("%v", v)} prints what
 * {@code encoding/json} decodes into {@code any}: strings raw, booleans {@code true}/{@code false},
 * every number as a float64 in shortest form, switching to exponent form below 1e-4 or from 1e21.
 */
final class GoValueFormat {
    private GoValueFormat() {}

    static String format(JsonNode v) {
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isBoolean()) {
            return Boolean.toString(v.asBoolean());
        }
        if (v.isNumber()) {
            return formatFloat(v.asDouble());
        }
        if (v.isNull()) {
            return "<nil>";
        }
        return v.toString();
    }

    static String formatFloat(double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "+Inf" : "-Inf";
        }
        if (d == 0) {
            return (1 / d < 0) ? "-0" : "0";
        }
        BigDecimal bd = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        int exp = bd.precision() - bd.scale() - 1;
        if (exp < -4 || exp >= 21) {
            String digits = bd.unscaledValue().abs().toString();
            StringBuilder sb = new StringBuilder();
            if (d < 0) {
                sb.append('-');
            }
            sb.append(digits.charAt(0));
            if (digits.length() > 1) {
                sb.append('.').append(digits, 1, digits.length());
            }
            sb.append('e').append(exp < 0 ? '-' : '+');
            int a = Math.abs(exp);
            if (a < 10) {
                sb.append('0');
            }
            sb.append(a);
            return sb.toString();
        }
        return bd.toPlainString();
    }
}
