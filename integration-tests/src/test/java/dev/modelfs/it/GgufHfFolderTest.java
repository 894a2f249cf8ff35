package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Hugging Face folder of GGUF models (docs/SEMANTICS.md) on a real FUSE mount of the fixture:
 * transformers, tokenizers, safetensors and gguf-py read it and compare with the HF models the GGUFs
 * were converted from by llama.cpp's converter.
 */
class GgufHfFolderTest {
    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-it-hf", work -> Fixture.store());

    @Test
    void transformersLoadsGgufModelFoldersLikeTheirHuggingFaceSources() throws Exception {
        mounted.cli().requireChecker(900, "check_hf_gguf.py", Fixture.dir().toString());
    }

    @Test
    void unsupportedArchitecturesKeepGgufNamedFilesAndShowSaysWhy() throws Exception {
        Path mp = mounted.cli().mountpoint;
        assertTrue(Files.isRegularFile(mp.resolve("ggml-zoo:all/model.safetensors")), "zoo keeps model.safetensors");
        assertTrue(!Files.exists(mp.resolve("ggml-zoo:all/config.json")) && !Files.exists(mp.resolve("ggml-zoo:all/gguf")),
                "zoo has no HF folder");
        assertTrue(Files.isRegularFile(mp.resolve("tinyllama/gguf/model.safetensors")), "tinyllama's GGUF names moved");
        Env.Run show = Env.run(120, CliMount.command("show", "--store", Fixture.store().toString(), "ggml-zoo:all"));
        assertEquals(0, show.exit(), show.output());
        assertTrue(show.output().contains("general.architecture zoo is not supported"), show.output());
        Env.Run ok = Env.run(120, CliMount.command("show", "--store", Fixture.store().toString(), "hf-qwen3:q4_k"));
        assertTrue(ok.output().matches("(?s).*hf_folder\\s+Qwen3ForCausalLM.*"), ok.output());
    }
}
