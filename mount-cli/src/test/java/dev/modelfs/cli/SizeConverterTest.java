package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --cache-size} values (binary units) and the sizes {@code show} prints (decimal units). */
class SizeConverterTest {
    final SizeConverter c = new SizeConverter();

    @Test
    void unitsArePowersOf1024() {
        assertEquals(1_048_576L, c.convert("1048576"));
        assertEquals(512L * 1024 * 1024, c.convert("512M"));
        assertEquals(2L * 1024 * 1024 * 1024, c.convert("2g"));
        assertEquals(4096L, c.convert("4KiB"));
        assertEquals(3L * 1024 * 1024 * 1024 * 1024, c.convert(" 3TB "));
    }

    @Test
    void garbageNegativeAndOverflowingSizesAreRefused() {
        for (String bad : new String[] {"", "lots", "-1", "1.5G", "9999999999T", "M"}) {
            assertThrows(CommandLine.TypeConversionException.class, () -> c.convert(bad), bad);
        }
    }

    @Test
    void humanSizesUseThreeSignificantDigits() {
        assertEquals("999 B", SizeConverter.human(999));
        assertEquals("1.0 KB", SizeConverter.human(1000));
        assertEquals("1.5 KB", SizeConverter.human(1500));
        assertEquals("123 MB", SizeConverter.human(123_456_789));
        assertEquals("4.7 GB", SizeConverter.human(4_700_000_000L));
    }
}
