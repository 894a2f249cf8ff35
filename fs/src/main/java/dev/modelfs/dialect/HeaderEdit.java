package dev.modelfs.dialect;

import dev.modelfs.format.FormatException;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufArray;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufKv;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.gguf.GgufValueType;
import dev.modelfs.format.gguf.GgufWriter;
import dev.modelfs.format.Shapes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A working copy of one GGUF header that a handler edits the way Ollama's {@code llama-ollama-compat-util.cpp}
 * edits its in-memory {@code gguf_context} (docs/FORMATS.md §12.1): KV copies, injections, replacements and
 * array truncations; tensor renames, drops and computed tensors. {@link #build} checks the result as a whole
 * (unique names, names short enough for GGUF, valid infos), so a handler never yields half a translation.
 *
 * <p>Invariants: edits never touch the source {@link GgufFile}; a changed or new KV carries raw range
 * {@code (-1, -1)}; a tensor keeps its blob offset through renames.
 */
final class HeaderEdit {
    private final GgufFile source;
    private final LinkedHashMap<String, GgufKv> kvs = new LinkedHashMap<>();
    private final List<Slot> tensors = new ArrayList<>();
    private final List<String> keyEdits = new ArrayList<>();
    private final Map<String, TensorOp> ops = new HashMap<>();

    /** One tensor of the working copy: its blob name, current name, dimensions, type, blob offset, and whether dropped. */
    private static final class Slot {
        final String from;
        final long offset;
        String name;
        long[] ne;
        GgmlType type;
        String dropped;
        /** For a tensor derived from part of another ({@link #deriveRow}): what it is, for {@code modelfs show}; else null. */
        String derived;

        Slot(GgufTensorInfo t) {
            this(t.name(), t.offset(), t.name(), t.ne(), t.type());
        }

        Slot(String from, long offset, String name, long[] ne, GgmlType type) {
            this.from = from;
            this.offset = offset;
            this.name = name;
            this.ne = ne;
            this.type = type;
        }

        Slot(String from, String name, long[] ne, GgmlType type, long offset, String derived) {
            this.from = from;
            this.name = name;
            this.ne = ne;
            this.type = type;
            this.offset = offset;
            this.derived = derived;
        }
    }

    HeaderEdit(GgufFile source) {
        this.source = source;
        for (GgufKv kv : source.kvs()) {
            kvs.put(kv.key(), kv);
        }
        for (GgufTensorInfo t : source.tensors()) {
            tensors.add(new Slot(t));
        }
    }

    GgufKv kv(String key) {
        return kvs.get(key);
    }

    boolean has(String key) {
        return kvs.containsKey(key);
    }

    /** Sets {@code key} (replacing its value in place, or appended), as {@code gguf_set_val_*} does. */
    void set(String key, GgufValueType type, Object value) {
        GgufKv old = kvs.get(key);
        GgufKv kv = new GgufKv(key, type, value, -1, -1);
        if (old != null && old.type() == type && old.value().equals(value)) {
            return;
        }
        kvs.put(key, kv);
        noteKeyEdit(old == null ? '+' : '~', key);
    }

    /**
     * Records one edit of {@code key} for {@code modelfs show}: a key edited twice (copied, then set) is listed once,
     * as what happened to it relative to the source: {@code +} added, {@code ~} changed, {@code -} removed.
     */
    private void noteKeyEdit(char marker, String key) {
        for (var it = keyEdits.listIterator(); it.hasNext(); ) {
            String line = it.next();
            if (line.length() == key.length() + 1 && line.endsWith(key) && "+~-".indexOf(line.charAt(0)) >= 0) {
                char earlier = line.charAt(0);
                if (earlier == '+' && marker == '-') {
                    it.remove();                                  // added, then removed again: no edit
                } else {
                    it.set((earlier == '+' ? '+' : earlier == '-' && marker == '+' ? '~' : marker) + key);
                }
                return;
            }
        }
        keyEdits.add(marker + key);
    }

    /** {@code inject_*_if_missing}. */
    void inject(String key, GgufValueType type, Object value) {
        if (!has(key)) {
            set(key, type, value);
        }
    }

    /** {@code copy_kv}: {@code to} gets {@code from}'s type and value unless {@code to} exists or {@code from} does not. */
    void copy(String from, String to) {
        GgufKv src = kvs.get(from);
        if (src != null && !has(to)) {
            set(to, src.type(), src.value());
        }
    }

    /** {@code copy_u32_kv} / {@code copy_f32_kv}: as {@link #copy}, the source required to be of {@code type}. */
    void copy(String from, String to, GgufValueType type) {
        GgufKv src = kvs.get(from);
        if (src != null && src.type() != type) {
            throw new FormatException(from + " is " + src.type() + ", not " + type);
        }
        copy(from, to);
    }

    /**
     * The architecture renamed as most handlers rename it: {@code general.architecture} set to {@code to}, then every
     * {@code from.*} key copied to {@code to.*} ({@link #copyPrefix}: the old keys stay).
     */
    void renameArchitecture(String from, String to) {
        set("general.architecture", GgufValueType.STRING, to);
        copyPrefix(from + ".", to + ".");
    }

    /** {@code rename_kv_prefix}: every {@code from*} key copied to {@code to*} (the old keys stay, as Ollama leaves them). */
    void copyPrefix(String from, String to) {
        for (GgufKv kv : new ArrayList<>(kvs.values())) {
            if (kv.key().startsWith(from)) {
                copy(kv.key(), to + kv.key().substring(from.length()));
            }
        }
    }

    void remove(String key) {
        if (kvs.remove(key) != null) {
            noteKeyEdit('-', key);
        }
    }

    /** Removes every KV whose key starts with one of {@code prefixes} (a face's foreign metadata), as one edit line. */
    void removeWithPrefix(String... prefixes) {
        int n = 0;
        for (var it = kvs.keySet().iterator(); it.hasNext(); ) {
            String k = it.next();
            for (String p : prefixes) {
                if (k.startsWith(p)) {
                    it.remove();
                    n++;
                    break;
                }
            }
        }
        if (n > 0) {
            keyEdits.add("-" + String.join("*, -", prefixes) + "* (" + n + " keys)");
        }
    }

    /** {@code truncate_str_arr} / {@code truncate_data_arr}: the array KV cut to its first {@code n} elements (no-op when shorter). */
    void truncateArray(String key, long n) {
        GgufKv kv = kvs.get(key);
        if (kv == null) {
            return;
        }
        if (!(kv.value() instanceof GgufArray a)) {
            throw new FormatException(key + " is " + kv.type() + ", not an array");
        }
        if (n < a.size()) {
            set(key, GgufValueType.ARRAY, new GgufArray(a.elementType(), a.values().subList(0, (int) n)));
        }
    }

    boolean anyTensorWithPrefix(String prefix) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** The current info of a kept tensor, or null. */
    GgufTensorInfo tensor(String name) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name)) {
                return new GgufTensorInfo(s.name, s.ne, s.type, s.offset);
            }
        }
        return null;
    }

    /** {@code add_skip_prefix}: tensors whose name starts with {@code prefix} are left out. */
    void dropWithPrefix(String prefix, String why) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.startsWith(prefix)) {
                s.dropped = why;
            }
        }
    }

    /** Leaves out every tensor whose name starts with none of {@code prefixes}. */
    void keepOnlyPrefixes(String why, String... prefixes) {
        for (Slot s : tensors) {
            boolean keep = false;
            for (String p : prefixes) {
                keep |= s.name.startsWith(p);
            }
            if (!keep && s.dropped == null) {
                s.dropped = why;
            }
        }
    }

    /** {@code rename_tensors_containing}: the first occurrence of {@code needle} in each kept name replaced. */
    void renameContaining(String needle, String replacement) {
        for (Slot s : tensors) {
            int at = s.name.indexOf(needle);
            if (s.dropped == null && at >= 0) {
                s.name = s.name.substring(0, at) + replacement + s.name.substring(at + needle.length());
            }
        }
    }

    /** {@code rename_tensor}: the kept tensor named {@code from}, if any, renamed. */
    void rename(String from, String to) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(from)) {
                s.name = to;
            }
        }
    }

    /** Every kept tensor whose name ends with {@code suffix} gets {@code replacement} in its place. */
    void renameSuffix(String suffix, String replacement) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.endsWith(suffix)) {
                s.name = s.name.substring(0, s.name.length() - suffix.length()) + replacement;
            }
        }
    }

    /** {@code promote_tensor_to_f32}: an F16 tensor becomes F32, computed on read; any other type is left alone. */
    void promoteToF32(String name) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name) && s.type == GgmlType.F16) {
                s.type = GgmlType.F32;
                ops.put(name, new TensorOp.PromoteToF32(GgmlType.F16));
            }
        }
    }

    /**
     * {@code register_qwen35_norm_shift_load}: the kept tensor {@code name} becomes F32, computed on read as its
     * stored values plus {@code shift}.
     *
     * @throws FormatException when its type has no dequantizer (nothing llama.cpp could widen either)
     */
    void shiftToF32(String name, float shift) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name)) {
                try {
                    dev.modelfs.quant.ggml.GgmlDequantizers.forType(s.type);
                } catch (RuntimeException e) {
                    throw new FormatException(name + " is " + s.type + ", which cannot be widened to F32");
                }
                if (s.ne[0] % s.type.blockElements() != 0) {
                    throw new FormatException(name + " has rows of " + s.ne[0] + ", not whole " + s.type + " blocks");
                }
                ops.put(name, new TensorOp.ShiftToF32(s.type, shift));
                s.type = GgmlType.F32;
            }
        }
    }

    /**
     * {@code register_concat_load} + {@code rename_tensor} + {@code set_tensor_shape}: the kept 2-D (or 1-D)
     * tensors {@code names}, of one type and shape, stacked in that order into {@code dest} of
     * {@code ne = [ne0, ne1, names.size()]}; the first source carries the new name, the others are left out.
     *
     * @throws FormatException when a source is missing, of rank above 2, or differs from the first in type or shape
     */
    void concat(List<String> names, String dest) {
        List<Slot> parts = stackable(names, dest);
        Slot first = parts.getFirst();
        long[] ne = {first.ne[0], first.ne.length > 1 ? first.ne[1] : 1, parts.size()};
        stack(parts, names, dest, ne);
    }

    /**
     * {@code register_concat_load} + {@code rename_tensor} + {@code set_tensor_shape} along the slowest axis (the
     * QKV merge of {@code register_qwen35moe_qkv_merge}): the kept tensors {@code names}, of one type and shape
     * ({@code [ne0, ne1]} or {@code [ne0]}), stored one after another as {@code dest} of {@code [ne0, ne1 * n]} (or
     * {@code [ne0 * n]}); the first source carries the new name, the others are left out.
     *
     * @throws FormatException as {@link #concat}
     */
    void concatSlowest(List<String> names, String dest) {
        List<Slot> parts = stackable(names, dest);
        Slot first = parts.getFirst();
        long n = parts.size();
        long[] ne = first.ne.length == 1 ? new long[] {Math.multiplyExact(first.ne[0], n)}
                : new long[] {first.ne[0], Math.multiplyExact(first.ne[1], n)};
        stack(parts, names, dest, ne);
    }

    /**
     * {@code register_qwen35moe_patch_embed_split}: the kept F16 tensor {@code from} of {@code [w, h, 2, cout * cin]}
     * (a Conv3D kernel with the HF {@code [out, in]} pair flattened) becomes two F32 tensors of {@code [w, h, cin,
     * cout]}, one per temporal slice: {@code dest0} (the source renamed) and {@code dest1} (new), computed on read.
     *
     * @throws FormatException when the source is missing, not F16, or not of that shape
     */
    void splitTemporal(String from, String dest0, String dest1, long cin) {
        Slot src = null;
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(from)) {
                src = s;
            }
        }
        if (src == null) {
            throw new FormatException("no " + from + " to split");
        }
        if (src.type != GgmlType.F16) {
            throw new FormatException(from + " is " + src.type + ", not F16");
        }
        if (src.ne.length != 4 || cin <= 0 || src.ne[2] != 2 || src.ne[3] % cin != 0) {
            throw new FormatException(from + " has shape " + java.util.Arrays.toString(src.ne) + ", not [w, h, 2, out * " + cin + "]");
        }
        long hw = Math.multiplyExact(src.ne[0], src.ne[1]);
        long cout = src.ne[3] / cin;
        long[] ne = {src.ne[0], src.ne[1], cin, cout};
        src.name = dest0;
        src.ne = ne;
        src.type = GgmlType.F32;
        tensors.add(tensors.indexOf(src) + 1, new Slot(src.from, src.offset, dest1, ne.clone(), GgmlType.F32));
        ops.put(dest0, new TensorOp.TemporalSlice(0, hw, 2, cin * cout));
        ops.put(dest1, new TensorOp.TemporalSlice(1, hw, 2, cin * cout));
    }

    /** The kept tensors {@code names}, checked to be stackable: present, of rank at most 2, one type and shape. */
    private List<Slot> stackable(List<String> names, String dest) {
        List<Slot> parts = new ArrayList<>();
        for (String n : names) {
            Slot found = null;
            for (Slot s : tensors) {
                if (s.dropped == null && s.name.equals(n)) {
                    found = s;
                }
            }
            if (found == null || found.ne.length > 2) {
                throw new FormatException(n + (found == null ? " is missing" : " has rank " + found.ne.length) + ", cannot stack it into " + dest);
            }
            Slot first = parts.isEmpty() ? found : parts.getFirst();
            if (found.type != first.type || found.ne[0] != first.ne[0] || (found.ne.length > 1 ? found.ne[1] : 1) != (first.ne.length > 1 ? first.ne[1] : 1)) {
                throw new FormatException("inconsistent expert tensor shape/type for " + n + " (stacking into " + dest + ")");
            }
            parts.add(found);
        }
        return parts;
    }

    /** The first of {@code parts} renamed {@code dest} with shape {@code ne}, the others left out, the bytes concatenated. */
    private void stack(List<Slot> parts, List<String> names, String dest, long[] ne) {
        Slot first = parts.getFirst();
        long bytes = first.type.rowBytes(first.ne[0]) * (first.ne.length > 1 ? first.ne[1] : 1);
        first.name = dest;
        first.ne = ne;
        for (Slot s : parts.subList(1, parts.size())) {
            s.dropped = "stacked into " + dest;
        }
        ops.put(dest, new TensorOp.Concat(names, parts.stream().map(s -> s.offset).toList(), bytes));
    }

    /**
     * Ollama's {@code register_mistral3_vision_qk_permute}: the kept tensor {@code name}'s rows reordered by llama.cpp's
     * q/k permutation over {@code heads} heads, computed on read.
     *
     * @throws FormatException when the tensor is missing, not of a float type, or its rows do not split into
     *                         {@code heads} heads of an even dimension
     */
    void permuteQkRows(String name, int heads) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name)) {
                if (s.type != GgmlType.F32 && s.type != GgmlType.F16 && s.type != GgmlType.BF16) {
                    throw new FormatException(name + " is " + s.type + ": only float rows are permuted");
                }
                long rows = Shapes.product(s.ne, 1);
                if (heads <= 0 || rows % (2L * heads) != 0) {
                    throw new FormatException(name + ": " + rows + " rows do not split into " + heads + " heads of an even dimension");
                }
                ops.put(name, new TensorOp.QkRowPermute(heads));
                return;
            }
        }
        throw new FormatException("no " + name);
    }

    /**
     * {@code set_tensor_shape} to fewer rows: the kept 2-D tensor {@code name} keeps its first {@code rows} rows, a
     * prefix of its bytes at the same blob offset (no data is computed).
     *
     * @throws FormatException when the tensor is missing, not 2-D, or has fewer than {@code rows} rows
     */
    void keepFirstRows(String name, long rows) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name)) {
                if (s.ne.length != 2 || rows <= 0 || rows > s.ne[1]) {
                    throw new FormatException(name + " of dimensions " + java.util.Arrays.toString(s.ne) + " has no first " + rows + " rows");
                }
                if (rows < s.ne[1]) {
                    s.derived = "first " + rows + " of " + s.ne[1] + " rows (a prefix of the stored bytes)";
                    s.ne = new long[] {s.ne[0], rows};
                }
                return;
            }
        }
        throw new FormatException("no " + name);
    }

    /**
     * A new 1-D F32 tensor {@code to}: row {@code row} of the blob's 2-D tensor {@code from} (kept or dropped),
     * widened to F32 on read unless stored as F32 (then the blob's bytes). {@code what} says which row it is.
     *
     * @throws FormatException when {@code from} is missing, not 2-D, or has no row {@code row}
     */
    void deriveRow(String from, long row, String to, String what) {
        for (Slot s : tensors) {
            if (s.from.equals(from) && s.derived == null) {
                if (s.ne.length != 2 || row < 0 || row >= s.ne[1]) {
                    throw new FormatException(from + " has no row " + row + " (dimensions " + java.util.Arrays.toString(s.ne) + ")");
                }
                long offset = Math.addExact(s.offset, Math.multiplyExact(row, s.type.rowBytes(s.ne[0])));
                tensors.add(new Slot(from, to, new long[] {s.ne[0]}, GgmlType.F32, offset,
                        what + (s.type == GgmlType.F32 ? "" : ", " + s.type + " -> F32")));
                if (s.type != GgmlType.F32) {
                    ops.put(to, new TensorOp.PromoteToF32(s.type));
                }
                return;
            }
        }
        throw new FormatException("no " + from);
    }

    /**
     * {@code set_tensor_shape} + {@code set_tensor_type(F32)} with the element order kept
     * ({@code register_nemotron3_patch_embedding}): the kept F16, BF16 or F32 tensor {@code name} gets dimensions
     * {@code ne} (the same element count) and type F32, widened on read.
     *
     * @throws FormatException when the tensor is missing, of another type, or {@code ne} holds another element count
     */
    void reshapeToF32(String name, long[] ne) {
        Slot s = kept(name);
        if (!NemotronHOmniClip.floatType(s.type) || Shapes.product(s.ne, 0) != Shapes.product(ne, 0)) {
            throw new FormatException(name + " (" + s.type + " " + java.util.Arrays.toString(s.ne) + ") cannot be read as F32 "
                    + java.util.Arrays.toString(ne));
        }
        s.ne = ne.clone();
        if (s.type == GgmlType.F32) {
            s.derived = "dimensions " + java.util.Arrays.toString(ne) + " (the stored bytes)";
        } else {
            ops.put(name, new TensorOp.PromoteToF32(s.type));
            s.type = GgmlType.F32;
        }
    }

    /**
     * {@code register_nemotron3_position_embedding}: the kept F16, BF16 or F32 table {@code from} of
     * {@code [embedding, side²]} becomes {@code to} of {@code [embedding, targetSide²]} in F32, resampled bilinearly
     * with aligned corners on read ({@link TensorOp.BilinearSquare}); a table already of the target side is only widened.
     *
     * @throws FormatException when the table is missing, of another type or layout
     */
    void downsampleSquare(String from, String to, long side, long targetSide) {
        Slot s = kept(from);
        if (!NemotronHOmniClip.floatType(s.type) || s.ne.length != 2 || s.ne[1] != Math.multiplyExact(side, side) || targetSide <= 0) {
            throw new FormatException(from + " (" + s.type + " " + java.util.Arrays.toString(s.ne) + ") is not a square position table of side " + side);
        }
        long embedding = s.ne[0];
        s.name = to;
        s.ne = new long[] {embedding, Math.multiplyExact(targetSide, targetSide)};
        if (side != targetSide) {
            ops.put(to, new TensorOp.BilinearSquare(s.type, embedding, side, targetSide));
        } else if (s.type != GgmlType.F32) {
            ops.put(to, new TensorOp.PromoteToF32(s.type));
        }
        s.type = GgmlType.F32;
    }

    /** The kept tensor named {@code name}. */
    private Slot kept(String name) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name)) {
                return s;
            }
        }
        throw new FormatException("no " + name);
    }

    /**
     * {@code set_tensor_shape} with the same element count: the kept tensor {@code name} gets dimensions {@code ne}
     * (the same bytes at the same blob offset; nothing is computed).
     *
     * @throws FormatException when the tensor is missing or {@code ne} holds another number of elements
     */
    void reshape(String name, long[] ne) {
        for (Slot s : tensors) {
            if (s.dropped == null && s.name.equals(name)) {
                if (ne.length == 0 || Shapes.product(ne, 0) != Shapes.product(s.ne, 0) || ne[0] != s.ne[0]) {
                    throw new FormatException(name + " of dimensions " + java.util.Arrays.toString(s.ne) + " cannot be "
                            + java.util.Arrays.toString(ne));
                }
                s.ne = ne.clone();
                return;
            }
        }
        throw new FormatException("no " + name);
    }

    /**
     * The translation, checked as a whole.
     *
     * @throws FormatException when the edited header is not a valid GGUF header (duplicate names, a name of
     *                         {@value GgufWriter#MAX_TENSOR_NAME_BYTES} bytes or more, a bad KV)
     */
    Translation build(String handler, Face face) {
        List<GgufTensorInfo> infos = new ArrayList<>();
        List<TensorChange> changes = new ArrayList<>();
        Map<String, TensorOp> kept = new HashMap<>();
        for (Slot s : tensors) {
            if (s.dropped != null) {
                changes.add(new TensorChange(TensorChange.Kind.DROPPED, s.from, "", s.dropped));
                continue;
            }
            if (s.name.getBytes(StandardCharsets.UTF_8).length >= GgufWriter.MAX_TENSOR_NAME_BYTES) {
                throw new FormatException("translated tensor name " + s.name + " is too long for GGUF");
            }
            infos.add(new GgufTensorInfo(s.name, s.ne, s.type, s.offset));
            TensorOp op = ops.get(s.name);
            if (op != null) {
                kept.put(s.name, op);
            }
            if (s.derived != null) {
                changes.add(new TensorChange(TensorChange.Kind.COMPUTED, s.from, s.name, s.derived));
            } else if (op != null) {
                changes.add(new TensorChange(TensorChange.Kind.COMPUTED, s.from, s.name, describe(op)));
            } else if (!s.name.equals(s.from)) {
                changes.add(new TensorChange(TensorChange.Kind.RENAMED, s.from, s.name, "same bytes"));
            }
        }
        for (GgufKv kv : kvs.values()) {
            if (kv.rawLength() < 0) {
                GgufWriter.encodeKv(kv.key(), kv.type(), kv.value());   // a value GGUF cannot hold fails here, not on read
            }
        }
        GgufFile header = new GgufFile(source.version(), source.alignment(), new ArrayList<>(kvs.values()), infos, source.dataStart());
        return new Translation(handler, face, header, kept, changes, keyEdits);
    }

    private static String describe(TensorOp op) {
        return switch (op) {
            case TensorOp.PromoteToF32 p -> p.source() + " -> F32";
            case TensorOp.ShiftToF32 p -> p.source() + " + " + p.shift() + " -> F32";
            case TensorOp.Concat c -> "stacked from " + c.from().size() + " tensors";
            case TensorOp.QkRowPermute q -> "rows in llama.cpp's q/k order (" + q.heads() + " heads)";
            case TensorOp.TemporalSlice t -> "temporal slice " + t.slice() + " of F16 -> F32";
            case TensorOp.BilinearSquare b -> "bilinear " + b.sourceSide() + "² -> " + b.targetSide() + "² positions, " + b.source() + " -> F32";
        };
    }
}
