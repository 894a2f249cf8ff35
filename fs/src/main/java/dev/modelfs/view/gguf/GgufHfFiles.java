package dev.modelfs.view.gguf;

import dev.modelfs.arch.ElementMap;
import dev.modelfs.arch.QkPermutation;
import dev.modelfs.arch.VHeadOrder;
import dev.modelfs.bytes.BlobRef;
import dev.modelfs.bytes.ByteSource;
import dev.modelfs.bytes.FileAssembly;
import dev.modelfs.bytes.Segment;
import dev.modelfs.convert.ElementFunction;
import dev.modelfs.convert.Gathered;
import dev.modelfs.convert.OutputType;
import dev.modelfs.convert.RebuiltFile;
import dev.modelfs.convert.UnitConverted;
import dev.modelfs.convert.UnitSource;
import dev.modelfs.format.ElementTypes;
import dev.modelfs.format.gguf.GgmlType;
import dev.modelfs.format.gguf.GgufFile;
import dev.modelfs.format.gguf.GgufReader;
import dev.modelfs.format.gguf.GgufTensorInfo;
import dev.modelfs.format.safetensors.Dtype;
import dev.modelfs.format.safetensors.SafetensorsWriter;
import dev.modelfs.hf.HfFolder;
import dev.modelfs.hf.HfTensor;
import dev.modelfs.hf.HfUnsupported;
import dev.modelfs.quant.ggml.GgmlDequantizers;
import dev.modelfs.store.Layer;
import dev.modelfs.store.OllamaStore;
import dev.modelfs.tree.ModelContext;
import dev.modelfs.tree.TreeBuilder;
import dev.modelfs.tree.ViewFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongUnaryOperator;

/**
 * The files of a GGUF model's Hugging Face folder (docs/SEMANTICS.md "Hugging Face folder of GGUF
 * models"): the JSON files of {@link HfFolder} as literal bytes, and {@code model.safetensors} /
 * {@code {fp32,fp16,bf16}/model.safetensors} holding the {@link HfTensor}s, converted lazily exactly as
 * the GGUF-named files are (docs/FORMATS.md §7.8), rows reordered where the HF order differs, Gemma's
 * norm weights shifted back ({@link UnitSource.Shifted}).
 */
final class GgufHfFiles {
    private GgufHfFiles() {}

    /**
     * Places every file in the folder {@code dir} ({@code ""} or ending in {@code /}), or none (any failure
     * to lay out a safetensors file is thrown before anything is placed).
     */
    static void add(ModelContext ctx, HfFolder hf, GgufFile g, BlobRef blob, TreeBuilder tree, String dir) {
        Map<String, ByteSource> files = new LinkedHashMap<>();
        Map<String, String> what = new HashMap<>();
        String cw = "Hugging Face " + hf.hfArchitecture() + " config rebuilt from GGUF metadata";
        files.put("config.json", ByteSource.literal(hf.config()));
        files.put("generation_config.json", ByteSource.literal(hf.generationConfig()));
        what.put("config.json", cw);
        what.put("generation_config.json", cw);
        if (hf.tokenizerJson() != null) {
            files.put("tokenizer.json", ByteSource.of(new Segment.Converted(new RebuiltFile(blob, hf.tokenizerJson().length,
                    blobBytes -> HfFolder.tokenizerJsonOf(dir.isEmpty() ? GgufModelView.folderHeader(GgufReader.read(blobBytes)).header()
                            : GgufReader.read(blobBytes)),   // a model layer's header as the folder read it (a draft's as stored)
                    "tokenizer.json rebuilt from the GGUF header"))));
            files.put("tokenizer_config.json", ByteSource.literal(hf.tokenizerConfig()));
            files.put("special_tokens_map.json", ByteSource.literal(hf.specialTokensMap()));
            for (String f : List.of("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")) {
                what.put(f, "Hugging Face tokenizer rebuilt from GGUF tokenizer.ggml.*");
            }
        }
        hf.sentenceTransformers().forEach((path, bytes) -> {
            files.put(path, ByteSource.literal(bytes));
            what.put(path, "sentence-transformers module rebuilt from GGUF " + hf.arch().ggufName() + ".pooling_type");
        });
        ByteSource stored = safetensors(hf, g, blob, null, null);
        files.put("model.safetensors", stored);
        what.put("model.safetensors", "GGUF tensors under Hugging Face names; quantized as F32");
        for (OutputType out : OutputType.values()) {
            String name = out.inFolder("model.safetensors");
            files.put(name, safetensors(hf, g, blob, out, stored));
            what.put(name, "GGUF tensors under Hugging Face names as " + out.dtype);
        }
        files.forEach((path, src) -> ViewFiles.put(ctx, tree, dir + path, src, what.get(path)));
    }

    /**
     * The values of the model's small F32 vectors {@link HfFolder#VECTORS} (Llama 3.x {@code rope_freqs}, Phi-3
     * LongRoPE {@code rope_factors_long/short}), read from the blob while the directory is built; a vector that is
     * absent or cannot be read is left out.
     */
    static Map<String, float[]> vectors(OllamaStore store, Layer layer, GgufFile g) {
        Map<String, float[]> out = new HashMap<>();
        for (String name : HfFolder.VECTORS) {
            float[] v = f32Vector(store, layer, g, name);
            if (v != null) {
                out.put(name, v);
            }
        }
        return out;
    }

    /** One small 1-D F32 tensor's values, or null when there is none or it cannot be read. */
    private static float[] f32Vector(OllamaStore store, Layer layer, GgufFile g, String name) {
        GgufTensorInfo t = g.tensor(name);
        if (t == null || t.type() != GgmlType.F32 || t.rank() != 1 || t.ne()[0] > 4096 || layer.digest().isEmpty()) {
            return null;
        }
        Optional<Path> path = store.blobPath(layer.digest().get());
        if (path.isEmpty()) {
            return null;
        }
        try (FileChannel ch = FileChannel.open(path.get())) {
            ByteBuffer b = ByteBuffer.allocate((int) t.byteSize()).order(ByteOrder.LITTLE_ENDIAN);
            long pos = Math.addExact(g.dataStart(), t.offset());
            while (b.hasRemaining()) {
                if (ch.read(b, pos + b.position()) < 0) {
                    return null;
                }
            }
            b.flip();
            float[] out = new float[(int) t.ne()[0]];
            b.asFloatBuffer().get(out);
            return out;
        } catch (IOException | ArithmeticException e) {
            return null;
        }
    }

    /**
     * {@code out == null}: floats as stored, quantized as F32; else every non-integer tensor as {@code out}; the
     * header shared with {@code sameHeader} (or null) when equal ({@link FileAssembly#safetensors}).
     */
    static ByteSource safetensors(HfFolder hf, GgufFile g, BlobRef blob, OutputType out, ByteSource sameHeader) {
        List<SafetensorsWriter.Spec> specs = new ArrayList<>();
        Map<String, List<Segment>> data = new HashMap<>();
        for (HfTensor t : hf.tensors()) {
            GgufTensorInfo src = t.source();
            Dtype stored = ElementTypes.dtype(src.type()).orElse(null);
            long start = Math.addExact(Math.addExact(g.dataStart(), src.offset()), t.byteOffset());
            Dtype dtype;
            Segment seg;
            if (t.fill() != null) {   // a constant the GGUF does not hold (dev.modelfs.arch.HfConstant)
                OutputType o = out != null ? out
                        : stored == Dtype.F16 || stored == Dtype.BF16 ? OutputType.valueOf(stored.name()) : OutputType.F32;
                dtype = o.dtype;
                seg = new Segment.Converted(new UnitConverted(new UnitSource.Filled(t.fill(), o), t.elements(), null,
                        t.name() + " filled with " + t.fill() + " -> " + o.dtype));
            } else if (t.assembled() != null) {
                OutputType o = out != null ? out : OutputType.valueOf((stored == null ? Dtype.F32 : stored).name());
                dtype = o.dtype;
                seg = new Segment.Converted(assembled(t, g, blob, o));
            } else if (t.columnBlocks() != null || t.values() != ElementMap.NONE) {   // Qwen 3.5's gated delta-net (HfLayout)
                OutputType o = out != null ? out
                        : t.values() != ElementMap.NONE || stored == null ? OutputType.F32 : OutputType.valueOf(stored.name());
                dtype = o.dtype;
                seg = new Segment.Converted(laidOut(t, blob, start, o));
            } else if (t.add() != 0) {
                OutputType o = out != null ? out : OutputType.F32;
                dtype = o.dtype;
                var f32 = UnitSource.Blocks.converted(blob, start, 1, GgmlDequantizers.forType(src.type()), OutputType.F32);
                seg = new Segment.Converted(new UnitConverted(new UnitSource.Shifted(f32, t.add(), o), t.sourceElements(), null,
                        t.name() + " " + src.type() + " + " + t.add() + " -> " + o.dtype));
            } else if (src.type().isInteger() || (stored != null && t.sourceRow() == null && (out == null || stored == out.dtype))) {
                if (t.sourceRow() != null) {
                    throw new HfUnsupported(src.name() + ": integer tensor with permuted rows");
                }
                dtype = stored;
                seg = new Segment.BlobSlice(blob, start, t.byteLength());
            } else {
                OutputType o = out != null ? out : stored == null ? OutputType.F32 : OutputType.valueOf(stored.name());
                dtype = o.dtype;
                var deq = GgmlDequantizers.forType(src.type());
                seg = new Segment.Converted(t.sourceRow() == null
                        ? UnitConverted.blocks(blob, start, t.sourceElements() / deq.blockElements(), deq, o, t.name(), src.type().name())
                        : new UnitConverted(UnitSource.Blocks.converted(blob, start, t.sourceElements() / t.rows() / deq.blockElements(), deq, o),
                                t.rows(), t.sourceRow(), orderIdentity(t.sourceRow()),
                                t.name() + " " + src.type() + " rows reordered -> " + o.dtype));
            }
            specs.add(new SafetensorsWriter.Spec(t.name(), dtype, t.shape()));
            data.put(t.name(), t.zeroRows() == 0 ? List.of(seg)
                    : List.of(new Segment.Zeros((t.elements() - t.sourceElements()) * dtype.bits() / 8), seg));
        }
        return FileAssembly.safetensorsOfParts(specs, Map.of("format", "pt"), data, sameHeader);
    }

    /** A complete description of a row order of the Hugging Face view ({@code UnitConverted}'s order identity), or null. */
    private static String orderIdentity(LongUnaryOperator order) {
        return order instanceof QkPermutation.Order || order instanceof VHeadOrder ? order.toString() : null;
    }

    /**
     * A whole GGUF tensor laid out as its architecture says ({@link dev.modelfs.arch.HfLayout}), row by row: rows in the
     * Hugging Face order, the element function applied in f32 ({@link UnitSource.Shifted}), the column blocks permuted
     * ({@link UnitSource.ColumnBlocks}), converted to {@code o} (docs/FORMATS.md §7.3).
     */
    private static UnitConverted laidOut(HfTensor t, BlobRef blob, long start, OutputType o) {
        GgufTensorInfo src = t.source();
        var deq = GgmlDequantizers.forType(src.type());
        long blocksPerRow = t.sourceElements() / t.rows() / deq.blockElements();
        UnitSource s = switch (t.values()) {
            case NONE -> UnitSource.Blocks.converted(blob, start, blocksPerRow, deq, o);
            case LOG_OF_NEG -> new UnitSource.Shifted(UnitSource.Blocks.converted(blob, start, blocksPerRow, deq, OutputType.F32),
                    new ElementFunction.LogOfNeg(), o);
            case NEG_EXP -> new UnitSource.Shifted(UnitSource.Blocks.converted(blob, start, blocksPerRow, deq, OutputType.F32),
                    new ElementFunction.NegExp(), o);
        };
        if (t.columnBlocks() != null) {
            s = new UnitSource.ColumnBlocks(s, t.columnBlocks());
        }
        String fn = t.values() == ElementMap.NONE ? "" : " " + t.values().name().toLowerCase(java.util.Locale.ROOT);
        return new UnitConverted(s, t.rows(), t.sourceRow(), orderIdentity(t.sourceRow()),
                t.name() + " " + src.type() + fn + (t.columnBlocks() == null ? "" : " column blocks permuted") + " -> " + o.dtype);
    }

    /** An assembled tensor ({@link HfTensor.Assembled}) gathered from its GGUF tensors and converted to {@code o}. */
    private static UnitConverted assembled(HfTensor t, GgufFile g, BlobRef blob, OutputType o) {
        List<Gathered.Part> parts = new ArrayList<>();
        for (HfTensor.Assembled.Part p : t.assembled().parts()) {
            List<Gathered.Source> sources = new ArrayList<>();
            for (GgufTensorInfo s : p.sources()) {
                long[] geo = HfTensor.Assembled.geometry(s);
                sources.add(new Gathered.Source(Math.addExact(g.dataStart(), s.offset()), GgmlDequantizers.forType(s.type()), geo[1], geo[2]));
            }
            parts.add(new Gathered.Part(sources, p.transposed()));
        }
        Gathered src = new Gathered(blob, t.assembled().batches(), parts, o);
        return new UnitConverted(src, src.units(), null, t.name() + " gathered from " + t.source().type() + " -> " + o.dtype);
    }
}
