package dev.modelfs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The docs name code that exists: every {@code `Class`}, {@code `pkg.Class`} and {@code `Class.member`} /
 * {@code `Class#member`} in backticks in README.md, CONTRIBUTING.md, BENCHMARKS.md and docs/*.md is a class declared in
 * the repository's Java sources (main, test or fuzz, every module) with that member, or a name the docs quote from
 * elsewhere: the JDK, a Hugging Face / diffusers class, or one of the {@link #EXTERNAL} names (Ollama's Go code,
 * safetensors' errors, the other libraries modelfs talks to). A renamed or removed class or member fails here.
 */
class DocReferencesTest {
    /** Backticked {@code [pkg.]Class[.member|#member][(...)]}. */
    private static final Pattern REFERENCE = Pattern.compile(
            "`((?:[a-z][a-z0-9]*\\.)*)([A-Z][A-Za-z0-9]*)(?:[.#]([a-z_][A-Za-z0-9_]*|[A-Z][A-Z0-9_]+))?(?:\\([^`]*\\))?`");
    private static final Pattern DECLARATION = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z]\\w*)");
    /** Hugging Face transformers / diffusers / tokenizers class names. */
    private static final Pattern HUGGING_FACE = Pattern.compile(
            "\\w*(?:For[A-Z]\\w*|Model|Tokenizer\\w*|Pipeline|Config\\w*|Mixin|Embeddings?)");
    /** JDK packages a doc may quote a class of. */
    private static final List<String> JDK = List.of("java.lang.", "java.util.", "java.util.concurrent.", "java.util.concurrent.atomic.",
            "java.util.function.", "java.nio.", "java.nio.file.", "java.nio.channels.", "java.io.", "java.lang.foreign.",
            "java.lang.invoke.", "java.lang.management.", "java.net.", "java.time.");
    /**
     * Names the docs quote from other code: Ollama's Go functions and types (FORMATS.md cites the source of each
     * layout), safetensors' Rust error variants, gguf-py, libfuse, jnr-fuse, oncrpc4j and Grizzly, systemd.
     */
    static final Set<String> EXTERNAL = Set.of(
            // Ollama (Go)
            "BlobsPath", "Canonical", "ConfigV2", "CreateDraftLayers", "Decode", "Dequantize", "DisplayShortest", "ExpertGroupPrefix",
            "FileChunk", "Filepath", "FromFP8", "GetModel", "GetTensorLayers", "GetTensorQuantization", "LlamaFileType",
            "MakeLinearLayer", "Manifests", "MediaTypeImageDraft", "MinOllamaVersion", "Models", "NewLayer", "NewLayerFromLayer",
            "PackFactor", "Params", "ParseName", "ParseNameBare", "ParseNameFromFilepath", "ParseNamedManifest", "PullModel",
            "QuantizedLinear", "ReadConfigJSON", "Replacements", "SaveSafetensorsWithMetadata", "Serve", "ShouldQuantize", "Split",
            "TensorType", "template.Execute", "Vars", "Response", "TransformRepackFP4", "Var", "WriteGGUF", "WriteManifest", "Bits", "format.HumanNumber", "quant.PackFactor",
            // safetensors (Rust) errors
            "HeaderTooLarge", "HeaderTooSmall", "InternalError", "InvalidHeader", "InvalidHeaderDeserialization", "InvalidHeaderLength",
            "InvalidOffset", "MetadataIncompleteBuffer", "MisalignedSlice", "TensorInvalidInfo", "ValidationOverflow",
            // Jinja2 and Python
            "ImmutableSandboxedEnvironment", "None",
            // sentence-transformers modules
            "SentenceTransformer", "Transformer", "Pooling", "Normalize",
            // gguf-py, llama.cpp's converter, Python, the Prometheus client, JUnit's surefire naming
            "GGUFReader", "LlamaHfVocab", "HTTPServer", "Test", "Tests", "TestCase",
            // libfuse, jnr-fuse, oncrpc4j, Grizzly, the JVM, systemd
            "FuseFS", "Pointer", "OncRpcSvc", "RpcDispatcher", "RpcProtocolFilter", "SameThreadIOStrategy", "WorkerThreadIOStrategy",
            "LambdaForm", "Compiler", "ExecStart", "Option", "Error");

    @Test
    void everyClassAndMemberTheDocsNameExists() throws IOException {
        Path root = repositoryRoot();
        Map<String, List<Path>> declared = declaredTypes(root);
        List<String> wrong = new ArrayList<>();
        for (Path doc : docs(root)) {
            wrong.addAll(check(root.relativize(doc).toString(), Files.readString(doc), declared));
        }
        assertTrue(declared.size() > 300, "the sources of every module were read: " + declared.size());
        assertTrue(wrong.isEmpty(), "docs name code that does not exist:\n" + String.join("\n", wrong));
    }

    /** The check can fail: a made-up class, a made-up member of a real class and a made-up package class are caught. */
    @Test
    void aRenamedClassOrMemberIsCaught() throws IOException {
        Map<String, List<Path>> declared = declaredTypes(repositoryRoot());
        List<String> wrong = check("x.md", "`ServedTree` `ServedTree.tree` `NoSuchThingAnywhere` `ServedTree.noSuchMember` "
                + "`serve.NoSuchView` `GgmlDequantizers.forTypeId` `LlamaForCausalLM` `CompletableFuture`", declared);
        assertEquals(List.of("x.md: `NoSuchThingAnywhere`", "x.md: `ServedTree.noSuchMember`", "x.md: `serve.NoSuchView`",
                "x.md: `GgmlDequantizers.forTypeId`"), wrong);
    }

    static List<String> check(String name, String text, Map<String, List<Path>> declared) {
        Set<String> packages = new HashSet<>();
        declared.values().forEach(ps -> ps.forEach(p -> packages.add(packageOf(p))));
        List<String> wrong = new ArrayList<>();
        Matcher m = REFERENCE.matcher(text);
        while (m.find()) {
            String prefix = m.group(1);
            String cls = m.group(2);
            String member = m.group(3);
            boolean ours = declared.containsKey(cls);
            if (!prefix.isEmpty()) {
                String first = prefix.substring(0, prefix.indexOf('.'));
                boolean modelfsPackage = prefix.startsWith("dev.modelfs.") || packages.contains(first);
                if (modelfsPackage && !ours && !EXTERNAL.contains(prefix + cls) && !cls.matches("[A-Z]")) {
                    wrong.add(name + ": " + m.group());
                }
                continue;
            }
            if (ours && member != null && declared.get(cls).stream().noneMatch(p -> mentions(p, member))) {
                wrong.add(name + ": " + m.group());
            } else if (!ours && cls.length() > 1 && cls.chars().anyMatch(Character::isLowerCase) && !external(cls)) {
                wrong.add(name + ": " + m.group());
            }
        }
        return wrong;
    }

    private static boolean external(String cls) {
        if (EXTERNAL.contains(cls) || HUGGING_FACE.matcher(cls).matches()) {
            return true;
        }
        for (String p : JDK) {
            try {
                Class.forName(p + cls, false, DocReferencesTest.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException e) {
                // not in this package
            }
        }
        return false;
    }

    private static boolean mentions(Path source, String member) {
        try {
            return Pattern.compile("\\b" + Pattern.quote(member) + "\\b").matcher(Files.readString(source)).find();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first directory of a source path's package below {@code dev/modelfs/} ({@code serve}, {@code view} ...). */
    private static String packageOf(Path source) {
        String s = source.toString().replace('\\', '/');
        int i = s.indexOf("/dev/modelfs/");
        String rest = i < 0 ? "" : s.substring(i + "/dev/modelfs/".length());
        return rest.contains("/") ? rest.substring(0, rest.indexOf('/')) : "";
    }

    /** Type name → the source files declaring a type of that name, over every module's main, test and fuzz sources. */
    static Map<String, List<Path>> declaredTypes(Path root) throws IOException {
        Map<String, List<Path>> out = new HashMap<>();
        try (Stream<Path> files = Files.walk(root, 12)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/")
                    && !p.toString().contains("/target/") && !p.toString().contains("/node_modules/")).toList()) {
                Matcher d = DECLARATION.matcher(Files.readString(f));
                while (d.find()) {
                    out.computeIfAbsent(d.group(1), k -> new ArrayList<>()).add(f);
                }
            }
        }
        return out;
    }

    private static List<Path> docs(Path root) throws IOException {
        List<Path> out = new ArrayList<>(List.of(root.resolve("README.md"), root.resolve("CONTRIBUTING.md"), root.resolve("BENCHMARKS.md")));
        try (Stream<Path> s = Files.list(root.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(out::add);
        }
        return out;
    }

    static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("docs/DESIGN.md")) && Files.isRegularFile(p.resolve("pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException("no repository root (docs/DESIGN.md) above " + Path.of("").toAbsolutePath());
    }
}
