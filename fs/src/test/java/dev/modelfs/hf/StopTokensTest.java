package dev.modelfs.hf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.modelfs.arch.Architecture;
import java.util.List;
import org.junit.jupiter.api.Test;

/** gpt-oss's stop tokens found by text in the vocabulary, in the published generation_config.json's order. */
class StopTokensTest {
    private static GgufVocab vocab(List<String> tokens, Integer eos) {
        return new GgufVocab("gpt2", "gpt-4o", tokens, new int[tokens.size()], new float[tokens.size()], List.of(), null, eos, null,
                null, false, false, false, null);
    }

    @Test
    void gptOssListsReturnEndoftextAndCallByText() {
        List<String> texts = Architecture.GPT_OSS.spec().hfStopTokens();
        GgufVocab v = vocab(List.of("a", "<|call|>", "b", "<|endoftext|>", "<|return|>", "<|end|>"), 3);   // Ollama's eos: <|endoftext|>
        assertEquals(List.of(4, 3, 1), StopTokens.of(v, texts));
        assertEquals(Integer.valueOf(4), StopTokens.eos(v, texts));   // config.json: <|return|>, as gpt-oss's published config, not the GGUF's eos
        assertEquals(Integer.valueOf(3), StopTokens.eos(v, List.<String>of()));   // an architecture without stops: the GGUF's eos
        assertEquals(Integer.valueOf(0), StopTokens.eos(vocab(List.of("</s>", "x"), 0), texts));   // no stop text in the vocabulary: the eos
        ObjectNode gen = JsonNodeFactory.instance.objectNode().put("eos_token_id", 3);
        StopTokens.put(gen, v, texts);
        assertEquals("[4,3,1]", gen.get("eos_token_id").toString());
        // llama.cpp's conversion: eos <|return|>; a vocabulary without <|call|>; an eos of another text kept, last
        assertEquals(List.of(4, 3), StopTokens.of(vocab(List.of("a", "b", "c", "<|endoftext|>", "<|return|>"), 4), texts));
        assertEquals(List.of(1, 0), StopTokens.of(vocab(List.of("</s>", "<|return|>"), 0), texts));
    }

    @Test
    void aSingleStopLeavesTheEosAsItIs() {
        ObjectNode gen = JsonNodeFactory.instance.objectNode().put("eos_token_id", 0);
        StopTokens.put(gen, vocab(List.of("</s>", "x"), 0), Architecture.GPT_OSS.spec().hfStopTokens());
        assertEquals("0", gen.get("eos_token_id").toString());
        StopTokens.put(gen, vocab(List.of("<|return|>", "<|call|>"), 0), List.of());   // an architecture without stops
        assertEquals("0", gen.get("eos_token_id").toString());
        assertFalse(Architecture.LLAMA.spec().hfStopTokens().iterator().hasNext());
    }
}
