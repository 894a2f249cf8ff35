package dev.modelfs.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Embedding models (issue 34) on a real mount of a store made by {@code make_embed_fixture.py}: tiny BertModel,
 * NomicBertModel, XLMRobertaModel and Qwen3 sources made by transformers and saved as SentenceTransformers (mean,
 * CLS and last-token pooling), converted by llama.cpp's converter and stored as Ollama stores a GGUF model.
 * {@code check_embed.py} loads every folder with transformers' {@code AutoModel}/{@code AutoTokenizer} and with
 * {@code SentenceTransformer} and compares hidden states, token ids and embeddings with the sources.
 */
class EmbeddingFolderTest {
    static final Path out = Path.of("target", "embed-fixture").toAbsolutePath();

    @RegisterExtension
    static final MountedStore mounted = MountedStore.of("modelfs-embed-it",
            work -> Fixture.generate(out.getFileName().toString(), "make_embed_fixture.py", 600).resolve("store"));

    @Test
    void transformersAndSentenceTransformersReproduceTheSources() throws Exception {
        mounted.cli().requireChecker(900, "check_embed.py", out.toString());
    }

    @Test
    void everyFolderHoldsOneWeightSet() throws Exception {
        mounted.cli().requireChecker(300, "check_one_weight_set.py");
    }

    /** {@code modelfs show} names the Hugging Face architecture; a causal LM gets no sentence-transformers files. */
    @Test
    void showNamesTheEncoderArchitecture() throws Exception {
        for (String[] m : new String[][] {{"all-minilm-tiny:f32", "BertModel"}, {"nomic-embed-tiny:f32", "NomicBertModel"},
                {"bge-m3-tiny:f32", "XLMRobertaModel"}, {"qwen3-embedding-tiny:f32", "Qwen3ForCausalLM"}}) {
            Env.Run show = Env.run(120, CliMount.command("show", "--store", out.resolve("store").toString(), m[0]));
            assertEquals(0, show.exit(), show.output());
            assertTrue(show.output().matches("(?s).*hf_folder\\s+" + m[1] + ".*"), show.output());
            assertTrue(Files.isRegularFile(mounted.cli().mountpoint.resolve(m[0]).resolve("1_Pooling/config.json")), m[0]);
        }
    }
}
