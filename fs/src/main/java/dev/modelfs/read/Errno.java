package dev.modelfs.read;

/**
 * The POSIX errors a failed open or read of the mounted tree reports (docs/SEMANTICS.md), independent
 * of the protocol that carries them (the FUSE adapter maps each to its number).
 */
public enum Errno {
    /** The file's blob is missing from the store. */
    ENOENT,
    /** The blob is a symbolic or hard link to a file the store's owner does not own (docs/SEMANTICS.md, "Trust and integrity"). */
    EACCES,
    /** The blob is unreadable, shorter or longer than its manifest says, or the bytes could not be produced. */
    EIO
}
