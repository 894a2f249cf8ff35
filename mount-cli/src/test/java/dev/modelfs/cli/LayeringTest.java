package dev.modelfs.cli;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.modelfs.store.UpwardImport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The layering of docs/DESIGN.md §2.3, enforced on the compiled main classes of every module (cache, fs,
 * nfs, this CLI): each package may import only the packages its row allows. Data flows
 * store → model → tree → views → serve → fuse/nfs → cli; nothing imports the CLI, and the CLI reaches the
 * views only through {@code serve} ({@code StandardViews}, {@code ModelPlans}).
 */
class LayeringTest {
    /** Package (with its subpackages) → the other dev.modelfs packages it may import. The table of DESIGN.md §2.3. */
    static final Map<String, List<String>> MAY_IMPORT = new LinkedHashMap<>();

    static {
        MAY_IMPORT.put("cache", List.of());
        MAY_IMPORT.put("format", List.of());
        MAY_IMPORT.put("telemetry", List.of());
        MAY_IMPORT.put("store", List.of("cache", "format"));
        MAY_IMPORT.put("arch", List.of("format"));
        MAY_IMPORT.put("quant", List.of("format"));
        MAY_IMPORT.put("model", List.of("cache", "format", "quant", "store"));
        MAY_IMPORT.put("template", List.of());
        MAY_IMPORT.put("hf", List.of("arch", "format", "template"));
        MAY_IMPORT.put("synth", List.of("arch", "format", "model", "quant"));
        MAY_IMPORT.put("bytes", List.of("cache", "format", "store", "telemetry"));
        MAY_IMPORT.put("convert", List.of("bytes", "cache", "format", "model", "quant"));
        MAY_IMPORT.put("dialect", List.of("arch", "bytes", "convert", "format", "quant"));
        MAY_IMPORT.put("tree", List.of("bytes", "format", "model", "store"));
        MAY_IMPORT.put("read", List.of("bytes", "cache", "store", "telemetry"));
        MAY_IMPORT.put("serve", List.of("bytes", "cache", "dialect", "hf", "model", "read", "store", "synth", "telemetry", "tree", "view"));
        MAY_IMPORT.put("view", List.of("arch", "bytes", "cache", "convert", "dialect", "format", "hf", "model", "quant", "store", "synth", "tree"));
        MAY_IMPORT.put("warmup", List.of("bytes", "cache", "read", "store", "tree"));
        MAY_IMPORT.put("fuse", List.of("cache", "read", "serve", "store", "telemetry", "tree", "warmup"));
        MAY_IMPORT.put("nfs", List.of("bytes", "cache", "read", "serve", "store", "telemetry", "tree", "warmup"));
        MAY_IMPORT.put("cli", List.of("arch", "bytes", "cache", "convert", "dialect", "format", "fuse", "hf", "model", "nfs", "quant", "read", "serve",
                "store", "synth", "telemetry", "template", "tree", "warmup"));
    }

    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.modelfs");

    /** The rule for package {@code p}: its classes depend only on themselves, their allowed packages and non-modelfs code. */
    static ArchRule rule(String p) {
        String[] allowed = new String[MAY_IMPORT.get(p).size() + 1];
        allowed[0] = "dev.modelfs." + p + "..";
        for (int i = 0; i < MAY_IMPORT.get(p).size(); i++) {
            allowed[i + 1] = "dev.modelfs." + MAY_IMPORT.get(p).get(i) + "..";
        }
        return classes().that().resideInAPackage("dev.modelfs." + p + "..")
                .should().onlyDependOnClassesThat(resideOutsideOfPackage("dev.modelfs..").or(resideInAnyPackage(allowed)))
                .as("dev.modelfs." + p + " imports only " + MAY_IMPORT.get(p));
    }

    @Test
    void everyPackageImportsOnlyWhatItsRowAllows() {
        List<String> violations = new ArrayList<>();
        for (String p : MAY_IMPORT.keySet()) {
            EvaluationResult r = rule(p).evaluate(MAIN);
            if (r.hasViolation()) {
                violations.add(r.getFailureReport().toString());
            }
        }
        assertTrue(violations.isEmpty(), String.join("\n", violations));
    }

    @Test
    void theTableNamesEveryPackageAndNothingImportsTheCli() {
        Set<String> packages = new TreeSet<>();
        MAIN.forEach(c -> packages.add(c.getPackageName().replaceFirst("^dev\\.modelfs\\.", "").replaceFirst("\\..*", "")));
        assertTrue(MAY_IMPORT.keySet().containsAll(packages), "packages without a row: " + packages);
        assertTrue(packages.size() >= 16, "the import saw the main classes of every module: " + packages);
        classes().that().resideOutsideOfPackage("dev.modelfs.cli..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("dev.modelfs.cli..")))
                .check(MAIN);
    }

    @Test
    void viewFamiliesDoNotImportEachOther() {
        slices().matching("dev.modelfs.view.(*)..").should().notDependOnEachOther().check(MAIN);
        classes().that().resideInAnyPackage("dev.modelfs.view.*..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("dev.modelfs.view")))
                .check(MAIN);
    }

    @Test
    void onlyTheirAdaptersUseJnrFuseOncrpc4jGrizzlyPicocliAndThePrometheusClient() {
        classes().that().resideOutsideOfPackage("dev.modelfs.fuse..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("jnr..", "ru.serce.jnrfuse..")))
                .check(MAIN);
        classes().that().resideOutsideOfPackage("dev.modelfs.nfs..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("org.dcache..", "org.glassfish.grizzly..")))
                .check(MAIN);
        classes().that().resideOutsideOfPackage("dev.modelfs.cli..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("picocli..")))
                .check(MAIN);
        classes().that().resideOutsideOfPackage("dev.modelfs.cli.metrics..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("io.prometheus..")))
                .check(MAIN);
    }

    /**
     * Module → the modelfs modules its classes may use (DESIGN.md §2.1): the core ({@code fs}) knows no front end,
     * and the front ends ({@code fuse}, {@code nfs}) do not know each other.
     */
    static final Map<String, List<String>> MODULE_MAY_USE = new LinkedHashMap<>();

    static {
        MODULE_MAY_USE.put("cache", List.of());
        MODULE_MAY_USE.put("fs", List.of("cache"));
        MODULE_MAY_USE.put("fuse", List.of("cache", "fs"));
        MODULE_MAY_USE.put("nfs", List.of("cache", "fs"));
        MODULE_MAY_USE.put("mount-cli", List.of("cache", "fs", "fuse", "nfs"));
    }

    /** The module a class was compiled into: {@code <module>/target/classes} or the jar {@code modelfs-<module>-*.jar}. */
    static String moduleOf(com.tngtech.archunit.core.domain.JavaClass c) {
        String uri = c.getSource().map(s -> s.getUri().toString()).orElse("");
        for (String m : MODULE_MAY_USE.keySet()) {
            if (uri.contains("/" + m + "/target/classes/") || uri.contains("/modelfs-" + m + "-")) {
                return m;
            }
        }
        return "";
    }

    @Test
    void everyModuleUsesOnlyTheModulesBelowIt() {
        Map<String, Set<String>> used = new LinkedHashMap<>();
        MAIN.forEach(c -> {
            String from = moduleOf(c);
            c.getDirectDependenciesFromSelf().forEach(d -> {
                String to = moduleOf(d.getTargetClass());
                if (!from.isEmpty() && !to.isEmpty() && !to.equals(from)) {
                    used.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
                }
            });
        });
        assertTrue(used.keySet().containsAll(List.of("fs", "fuse", "nfs", "mount-cli")), "every module's classes were seen: " + used);
        List<String> wrong = new ArrayList<>();
        used.forEach((from, tos) -> tos.stream().filter(t -> !MODULE_MAY_USE.get(from).contains(t))
                .forEach(t -> wrong.add(from + " -> " + t)));
        assertTrue(wrong.isEmpty(), "module dependencies not in DESIGN.md §2.1: " + wrong);
    }

    /** The core and the cache use no front end's library: jnr-fuse, oncrpc4j, Grizzly, picocli, Prometheus. */
    @Test
    void theCoreUsesNoFrontEndLibrary() {
        List<String> wrong = new ArrayList<>();
        MAIN.forEach(c -> {
            if (Set.of("fs", "cache").contains(moduleOf(c))) {
                c.getDirectDependenciesFromSelf().stream().map(d -> d.getTargetClass().getPackageName())
                        .filter(pk -> pk.startsWith("jnr") || pk.startsWith("ru.serce") || pk.startsWith("org.dcache")
                                || pk.startsWith("org.glassfish") || pk.startsWith("picocli") || pk.startsWith("io.prometheus"))
                        .forEach(pk -> wrong.add(c.getName() + " -> " + pk));
            }
        });
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /**
     * Every main package has a {@code package-info.java} that states its job and, in a "May import:" sentence, exactly
     * the packages of its row.
     */
    @Test
    void everyPackageInfoStatesItsJobAndItsRow() throws java.io.IOException {
        java.nio.file.Path root = DocReferencesTest.repositoryRoot();
        List<String> wrong = new ArrayList<>();
        int seen = 0;
        try (var files = java.nio.file.Files.walk(root, 12)) {
            for (java.nio.file.Path dir : files.filter(p -> p.toString().replace('\\', '/').matches(".*/src/main/java/dev/modelfs/.+")
                    && java.nio.file.Files.isDirectory(p) && !p.toString().contains("/target/")).toList()) {
                boolean hasJava;
                try (var in = java.nio.file.Files.list(dir)) {
                    hasJava = in.anyMatch(f -> f.toString().endsWith(".java"));
                }
                if (!hasJava) {
                    continue;
                }
                seen++;
                String pkg = dir.toString().replace('\\', '/').replaceFirst(".*/src/main/java/dev/modelfs/", "").replace('/', '.');
                java.nio.file.Path info = dir.resolve("package-info.java");
                if (!java.nio.file.Files.isRegularFile(info)) {
                    wrong.add(pkg + ": no package-info.java");
                    continue;
                }
                String text = java.nio.file.Files.readString(info);
                int at = text.indexOf("May import:");
                if (at < 0 || text.indexOf("/**") + 10 > at) {
                    wrong.add(pkg + ": package-info.java states no job and no \"May import:\" sentence");
                    continue;
                }
                List<String> row = MAY_IMPORT.get(pkg.replaceFirst("\\..*", ""));
                if (row != null) {
                    String sentence = text.substring(at, text.indexOf('\n', at));
                    sentence = sentence.contains(" (") ? sentence.substring(0, sentence.indexOf(" (")) : sentence;
                    Set<String> named = new TreeSet<>();
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\{@code (\\w+)}").matcher(sentence);
                    while (m.find()) {
                        named.add(m.group(1));
                    }
                    if (!named.equals(new TreeSet<>(row))) {
                        wrong.add(pkg + ": package-info.java says it may import " + named + ", DESIGN.md §2.3 says " + row);
                    }
                }
            }
        }
        assertTrue(seen >= 25, "the main packages of every module were seen: " + seen);
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /** The rule can fail: a class of {@code store} (in test sources) that imports {@code tree} breaks it. */
    @Test
    void anUpwardImportBreaksTheRule() {
        JavaClasses withBad = new ClassFileImporter().importClasses(UpwardImport.class, dev.modelfs.tree.StoreTree.class);
        EvaluationResult r = rule("store").evaluate(withBad);
        assertTrue(r.hasViolation(), "store -> tree must be a violation");
        assertTrue(r.getFailureReport().toString().contains("UpwardImport"), r.getFailureReport().toString());
        assertFalse(rule("store").evaluate(new ClassFileImporter().importClasses(dev.modelfs.store.OllamaStore.class)).hasViolation());
    }

    /** The CLI's row leaves out {@code view}: a CLI class (in test sources) that imports a view breaks it. */
    @Test
    void theCliImportingAViewBreaksItsRule() {
        EvaluationResult r = rule("cli").evaluate(new ClassFileImporter().importClasses(ViewImport.class,
                dev.modelfs.view.gguf.GgufModelView.class));
        assertTrue(r.hasViolation(), "cli -> view must be a violation");
        assertTrue(r.getFailureReport().toString().contains("ViewImport"), r.getFailureReport().toString());
        assertFalse(rule("cli").evaluate(new ClassFileImporter().importClasses(ShowCommand.class)).hasViolation(),
                "show reaches the views' plans through serve.ModelPlans");
    }
}
