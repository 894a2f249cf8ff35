package dev.modelfs.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** model_index.json as Ollama's image importer stored it (x/imagegen/create.go at v0.14.2, x/create/imagegen.go at v0.16.0). */
class DiffusersModelIndexTest {
    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void restoresClassNameAndVersionAndDropsOllamasKeysKeepingComponentsInOrder() throws IOException {
        String stored = """
                {
                    "architecture": "ZImagePipeline",
                    "parameter_count": 6154203200,
                    "quantization": "FP8",
                    "text_encoder": [
                        "transformers",
                        "Qwen3Model"
                    ],
                    "empty": {},
                    "scheduler": [
                        "diffusers",
                        "FlowMatchEulerDiscreteScheduler"
                    ],
                    "vae": [
                        "diffusers",
                        "AutoencoderKL"
                    ]
                }""";
        // as diffusers' ConfigMixin.to_json_string writes it: json.dumps(indent=2, sort_keys=True) + "\n"
        String want = """
                {
                  "_class_name": "ZImagePipeline",
                  "_diffusers_version": "0.36.0",
                  "empty": {},
                  "scheduler": [
                    "diffusers",
                    "FlowMatchEulerDiscreteScheduler"
                  ],
                  "text_encoder": [
                    "transformers",
                    "Qwen3Model"
                  ],
                  "vae": [
                    "diffusers",
                    "AutoencoderKL"
                  ]
                }
                """;
        assertEquals(want, new String(DiffusersModelIndex.restore(b(stored)), StandardCharsets.UTF_8));
    }

    @Test
    void anIndexDiffusersAlreadyReadsOrThatIsNotOllamasIsServedAsStored() throws IOException {
        assertNull(DiffusersModelIndex.restore(b("{\"_class_name\":\"FluxPipeline\",\"architecture\":\"x\"}")));
        assertNull(DiffusersModelIndex.restore(b("{\"transformer\":[\"diffusers\",\"FluxTransformer2DModel\"]}")));
        assertNull(DiffusersModelIndex.restore(b("{\"architecture\":7}")));
        assertNull(DiffusersModelIndex.restore(b("[1,2]")));
        assertThrows(IOException.class, () -> DiffusersModelIndex.restore(b("{\"architecture\":")));
    }
}
