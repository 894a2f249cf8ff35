package dev.modelfs.cli;

import dev.modelfs.store.OllamaStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The shared {@code --store} option: explicit path, else $OLLAMA_MODELS, else ~/.ollama/models. */
final class StoreOption {
    @Option(names = "--store", paramLabel = "DIR", description = "Ollama model store (default: $OLLAMA_MODELS, else ~/.ollama/models)")
    Path store;

    OllamaStore open() {
        return new OllamaStore(OllamaStore.resolveRoot(Optional.ofNullable(store), System.getenv()));
    }

    /** The store, which must be an existing folder (else a one-line error: exit 2). */
    OllamaStore openExisting() throws IOException {
        OllamaStore st = open();
        if (!Files.isDirectory(st.root())) {
            throw new NoSuchFileException(st.root().toString(), null,
                    "no model store there (set --store or $OLLAMA_MODELS)");
        }
        return st;
    }
}
