package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --store}: an explicit folder wins, and a folder that does not exist is a one-line error. */
class StoreOptionTest {
    @TempDir
    Path dir;

    @Test
    void anExplicitStoreIsOpenedAndAMissingOneRefused() throws IOException {
        StoreOption o = new StoreOption();
        o.store = dir;
        assertEquals(dir, o.openExisting().root());
        o.store = dir.resolve("absent");
        NoSuchFileException e = assertThrows(NoSuchFileException.class, o::openExisting);
        assertTrue(e.getMessage().contains("no model store there"), e.getMessage());
        assertEquals(dir.resolve("absent"), o.open().root(), "open() does not check");
    }
}
