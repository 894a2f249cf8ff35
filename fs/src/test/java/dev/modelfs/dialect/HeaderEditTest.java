package dev.modelfs.dialect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufValueType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@code modelfs show} lists of a translation's metadata edits: each key once, relative to the source. */
class HeaderEditTest {
    private static HeaderEdit edit() {
        return new HeaderEdit(new TinyGguf()
                .str("general.architecture", "gemma3")
                .u32("gemma3.block_count", 2)
                .u32("gemma3.context_length", 128)
                .tensor("token_embd.weight", GgmlType.F32, 4, 4)
                .header());
    }

    private static List<String> edits(HeaderEdit e) {
        return e.build("test", Face.TEXT).keyEdits();
    }

    @Test
    void aKeyCopiedAndThenSetIsListedOnceAsAdded() {
        HeaderEdit e = edit();
        e.copyPrefix("gemma3.", "gemma4.");
        e.set("gemma4.block_count", GgufValueType.UINT32, 3);
        assertEquals(List.of("+gemma4.block_count", "+gemma4.context_length"), edits(e));
    }

    @Test
    void aChangedKeySetTwiceIsListedOnceAsChanged() {
        HeaderEdit e = edit();
        e.set("gemma3.context_length", GgufValueType.UINT32, 256);
        e.set("gemma3.context_length", GgufValueType.UINT32, 512);
        assertEquals(List.of("~gemma3.context_length"), edits(e));
    }

    @Test
    void anAddedKeyThatIsRemovedAgainIsNoEditAndARemovedKeySetAgainIsAChange() {
        HeaderEdit e = edit();
        e.set("gemma3.new_key", GgufValueType.UINT32, 1);
        e.remove("gemma3.new_key");
        e.remove("gemma3.block_count");
        e.set("gemma3.block_count", GgufValueType.UINT32, 5);
        assertEquals(List.of("~gemma3.block_count"), edits(e));
    }
}
