package dev.modelfs.model;

import dev.modelfs.format.safetensors.SafetensorsHeader;
import dev.modelfs.store.Digest;
import java.io.IOException;

/** Reads and validates the safetensors header of a tensor blob (only its header bytes). */
@FunctionalInterface
public interface HeaderSource {
    SafetensorsHeader header(Digest blob, long manifestSize) throws IOException;
}
