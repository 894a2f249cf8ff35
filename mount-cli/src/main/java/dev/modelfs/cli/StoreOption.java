package dev.modelfs.cli;

import dev.modelfs.store.OllamaStore;
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
}
