package dev.modelfs.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.dialect.Dialects;
import dev.modelfs.dialect.Outcome;
import dev.modelfs.dialect.TranslatedGguf;
import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.safetensors.SafetensorsParser;
import dev.modelfs.model.TensorTable;
import dev.modelfs.model.TensorTableBuilder;
import dev.modelfs.store.Digest;
import dev.modelfs.store.Manifest;
import dev.modelfs.store.ManifestParser;
import dev.modelfs.store.ModelName;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Jazzer fuzz targets for everything that parses untrusted bytes. The contract under test: hostile
 * input is a {@link FormatException} (or an empty result), never another exception, a hang or an
 * out-of-memory. Under {@code ./test} these run in regression mode over the committed seeds in
 * {@code src/fuzz/resources/dev/modelfs/fuzz/ParserFuzzTestInputs/}; set {@code JAZZER_FUZZ=1} to fuzz.
 */
class ParserFuzzTest {

    @FuzzTest(maxDuration = "60s")
    void safetensorsHeader(byte[] data) {
        try {
            SafetensorsParser.parse(MemorySegment.ofArray(data));
        } catch (FormatException expected) {
            // hostile input is rejected with a clear error
        }
    }

    @FuzzTest(maxDuration = "60s")
    void ggufHeader(byte[] data) {
        GgufFile g;
        try {
            g = GgufReader.read(MemorySegment.ofArray(data));
        } catch (FormatException expected) {
            return;   // hostile input is rejected with a clear error
        }
        // a parsed header is translated whole or refused (docs/FORMATS.md §12), and a translation always assembles
        BlobRef blob = new BlobRef(Digest.parse("sha256:" + "a".repeat(64)).orElseThrow(), data.length);
        for (Outcome o : List.of(Dialects.text(g), Dialects.clip(g))) {
            if (o instanceof Outcome.Translated t) {
                TranslatedGguf.assemble(t.translation(), blob);
            }
        }
    }

    /** An Ollama template layer (Go text/template) through the parser and the Jinja translation (FORMATS.md §7.9). */
    @FuzzTest(maxDuration = "60s")
    void ollamaChatTemplate(byte[] data) {
        try {
            dev.modelfs.template.JinjaTranslator.translate(new String(data, StandardCharsets.UTF_8));
        } catch (dev.modelfs.template.TemplateRefusal expected) {
            // what is not translated (or does not parse) is refused with its reason
        }
    }

    /** A manifest with one tensor layer whose blob is the fuzzer's bytes, through the whole table builder. */
    @FuzzTest(maxDuration = "60s")
    void manifestAndTensorTable(FuzzedDataProvider in) {
        String name = in.consumeString(40);
        byte[] blob = in.consumeRemainingAsBytes();
        String manifest = "{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:"
                + "a".repeat(64) + "\",\"size\":" + blob.length + ",\"name\":" + jsonString(name) + "}]}";
        Manifest m;
        try {
            m = ManifestParser.parse(ModelName.parse("fuzz").orElseThrow(), manifest.getBytes(StandardCharsets.UTF_8));
        } catch (FormatException expected) {
            return;
        }
        // with a draft layout, keys (and the layer name) starting with "d." take the draft's path (FORMATS.md §4.3 H)
        TensorTable t = new TensorTableBuilder((Digest d, long size) -> SafetensorsParser.parse(MemorySegment.ofArray(blob)),
                c -> null, "", null, new dev.modelfs.model.DraftLayout("d.", "draft")).build(m);
        t.byComponent();   // a built table is always usable; problems are reported, not thrown
    }

    private static String jsonString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\' || c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
