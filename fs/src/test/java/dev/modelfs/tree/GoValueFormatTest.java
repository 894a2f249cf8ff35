package dev.modelfs.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * JSON values as Go's {@code fmt.Sprintf("%v", v)} prints what {@code encoding/json} decodes into
 * {@code any}; the expected strings are Go's own output (every JSON number is a float64; {@code %v} is
 * strconv's shortest {@code 'g'}, whose exponent form starts at 1e+06: {@code fmt.Println(1e6)} prints {@code 1e+06}).
 */
class GoValueFormatTest {
    static String go(String json) throws Exception {
        return GoValueFormat.format(new ObjectMapper().readTree(json));
    }

    @Test
    void scalarsPrintAsGoPrintsThem() throws Exception {
        assertEquals("hello", go("\"hello\""));
        assertEquals("true", go("true"));
        assertEquals("false", go("false"));
        assertEquals("<nil>", go("null"));
        assertEquals("40", go("40"));
        assertEquals("0.7", go("0.7"));
        assertEquals("-1.5", go("-1.5"));
        assertEquals("0", go("0"));
        assertEquals("0.0001", go("0.0001"));
        assertEquals("1e-05", go("0.00001"));
        assertEquals("1.5e-07", go("1.5e-7"));
        assertEquals("-2.5e-10", go("-2.5e-10"));
        assertEquals("123456", go("123456"));
        assertEquals("999999", go("999999"));
        assertEquals("1e+06", go("1000000"));
        assertEquals("1.048576e+06", go("1048576"));
        assertEquals("-2.5e+07", go("-25000000"));
        assertEquals("1e+21", go("1e21"));
    }

    @Test
    void specialFloats() {
        assertEquals("NaN", GoValueFormat.formatFloat(Double.NaN));
        assertEquals("+Inf", GoValueFormat.formatFloat(Double.POSITIVE_INFINITY));
        assertEquals("-Inf", GoValueFormat.formatFloat(Double.NEGATIVE_INFINITY));
        assertEquals("-0", GoValueFormat.formatFloat(-0.0));
    }
}
