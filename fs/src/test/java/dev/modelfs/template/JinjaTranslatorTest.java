package dev.modelfs.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.template.GoTemplate.Action;
import dev.modelfs.template.GoTemplate.If;
import dev.modelfs.template.GoTemplate.Node;
import dev.modelfs.template.GoTemplate.Text;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link JinjaTranslator}: the shape of the Jinja it writes and every refusal. That the Jinja renders what
 * Go renders is checked against Go's own text/template by {@code OllamaChatTemplatesTest} (integration-tests).
 */
class JinjaTranslatorTest {
    private static final String CHATML = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n";

    /** The body after the preamble that rebuilds Ollama's data. */
    private static String body(String jinja) {
        int i = jinja.indexOf(OllamaForm.PREAMBLE);
        assertTrue(i >= 0, jinja);
        return jinja.substring(i + OllamaForm.PREAMBLE.length());
    }

    @Test
    void messagesFormRangesOverTheCollatedMessages() {
        String j = JinjaTranslator.translate(CHATML);
        assertTrue(j.startsWith("{#-"), j);
        assertEquals("{%+ for o1 in ollama.msgs +%}<|im_start|>{{ o1['role'] }}\n{{ o1['content'] }}<|im_end|>\n{%+ endfor +%}"
                + "<|im_start|>assistant{{ '\\n' }}", body(j));
    }

    @Test
    void statementsNeverUseTrimMarkersAndMarkupInTextIsQuoted() {
        String j = JinjaTranslator.translate("{{ range .Messages }}{% raw %} {{ .Content }} {#x#}\r\n{{ end }}");
        assertFalse(j.contains("{%-") || j.contains("-%}"), j);
        assertTrue(body(j).contains("{{ '{% raw %} ' }}"), j);
        assertTrue(body(j).contains("{{ ' {#x#}\\r\\n' }}"), j);
    }

    @Test
    void variablesLiveInTheNamespaceAndPrintfIsConcatenation() {
        String j = body(JinjaTranslator.translate("{{- $s := \"\" }}{{ range .Messages }}{{ $s = printf \"%s\\n\\n%s\" $s .Content }}{{ end }}{{ $s }}"));
        assertEquals("{%+ set ollama.v1 = '' +%}{%+ for o2 in ollama.msgs +%}{%+ set ollama.v1 = (ollama.v1 ~ '\\n\\n' ~ o2['content']) +%}"
                + "{%+ endfor +%}{{ ollama.v1 }}", j);
    }

    @Test
    void rangeIndexLenSliceAndComparisons() {
        String j = body(JinjaTranslator.translate("{{ range $i, $_ := .Messages }}{{ if and (eq (len (slice $.Messages $i)) 1) "
                + "(ne .Role \"assistant\") }}last{{ end }}{{ end }}"));
        assertTrue(j.contains("{%+ set ollama.v2 = loop.index0 +%}{%+ set ollama.v3 = o1 +%}"), j);
        assertTrue(j.contains("{%+ if (((ollama.msgs[ollama.v2:]|length) == 1) and (o1['role'] != 'assistant')) +%}last{%+ endif +%}"), j);
    }

    @Test
    void goValuesPrintAsGoPrintsThem() {
        String j = body(JinjaTranslator.translate("{{ if .Messages }}{{ end }}{{ .Think }}|{{ .Nope }}|{{ 7 }}|{{ true }}"));
        assertEquals("{%+ if ollama.msgs +%}{%+ endif +%}{{ 'true' if (enable_thinking is defined and enable_thinking is true) else 'false' }}|<no value>|{{ 7 }}|"
                + "{{ 'true' if true else 'false' }}", j);
    }

    @Test
    void legacyFormRunsPerGroupAndCutsTheLastAfterResponse() {
        String j = JinjaTranslator.translate("{{ if .System }}S:{{ .System }}\n{{ end }}U:{{ .Prompt }}\nA:{{ .Response }}</s>\n");
        String b = body(j);
        // the whole template, per group: system then prompt then response, then reset
        assertTrue(b.contains("{%+ for om in ollama.msgs +%}"), b);
        assertTrue(b.contains("A:{{ ollama.response }}</s>\n{%+ set ollama.system = '' +%}"), b);
        // the last run stops at .Response
        assertTrue(b.endsWith("A:{{ ollama.response }}"), b);
    }

    @Test
    void aTemplateWithoutMessagesOrResponseGetsResponseAppended() {
        String b = body(JinjaTranslator.translate("{{ .Prompt }}"));
        assertTrue(b.endsWith("{%+ endfor +%}{{ ollama.prompt }}{{ ollama.response }}"), b);
    }

    @Test
    void theCutFollowsOllamasWalk() {
        List<Node> t = GoTemplateParser.parse("a{{ if .X }}b{{ .Response }}c{{ end }}d");
        List<Node> cut = OllamaForm.cutAfterResponse(t);
        assertEquals(2, cut.size());
        If i = (If) cut.get(1);
        assertEquals(2, i.then().size());
        assertEquals(new Text("b"), i.then().getFirst());
        assertTrue(i.then().get(1) instanceof Action);
        // Ollama's walk fails on a cut inside a block with an else: refused
        assertTrue(assertThrows(TemplateRefusal.class, () -> JinjaTranslator.translate("{{ if .X }}{{ .Response }}{{ else }}b{{ end }}"))
                .getMessage().contains("else"));
        // branch conditions are not walked: {{ if .Response }} does not cut
        assertEquals(3, OllamaForm.cutAfterResponse(GoTemplateParser.parse("{{ if .Response }}x{{ end }}y{{ .Prompt }}")).size());
    }

    @Test
    void toolsAndToolCallsAreGuardedAndTheirRangesKeepOnlyTheElse() {
        String j = JinjaTranslator.translate("{{ if .Tools }}T{{ end }}{{ range .Messages }}{{ range .ToolCalls }}{{ json .Function }}"
                + "{{ else }}none{{ end }}{{ end }}{{ range $.Tools }}{{ .Function.Name }}{{ end }}");
        assertTrue(j.contains(OllamaForm.NO_TOOLS) && j.contains(OllamaForm.NO_TOOL_CALLS), j);
        assertEquals("{%+ if (tools or []) +%}T{%+ endif +%}{%+ for o1 in ollama.msgs +%}none{%+ endfor +%}", body(j));
        String plain = JinjaTranslator.translate(CHATML);
        assertFalse(plain.contains(OllamaForm.NO_TOOLS) || plain.contains(OllamaForm.NO_TOOL_CALLS), plain);
    }

    @Test
    void identifiersAreOllamasVars() {
        assertEquals(List.of("$", "$m", "content", "messages", "role"),
                OllamaForm.identifiers(GoTemplateParser.parse("{{ range $m := $.Messages }}{{ $m.Role }}{{ .Content }}{{ end }}")));
        // a parenthesized pipeline with fields is not looked into, as in Ollama
        assertEquals(List.of(), OllamaForm.identifiers(GoTemplateParser.parse("{{ (index .Messages 0).Role }}")));
    }

    @Test
    void refusals() {
        for (String[] c : new String[][] {
                {"{{ range .Messages }}{{ .ToolCalls }}{{ end }}", "printing a list of tool calls"},
                {"{{ range .Messages }}{{ end }}{{ .Tools }}", "printing a list of tools"},
                {"{{ range .Messages }}{{ .Images }}{{ end }}", ".Images"},
                {"{{ range .Messages }}{{ .Nope }}{{ end }}", "no field .Nope"},
                {"{{ range .Messages }}{{ . }}{{ end }}", "printing a message"},
                {"{{ if .Messages }}{{ end }}{{ json .System }}", "json"},
                {"{{ if .Messages }}{{ end }}{{ currentDate }}", "currentDate"},
                {"{{ if .Messages }}{{ end }}{{ len .System }}", "len of a string"},
                {"{{ if .Messages }}{{ end }}{{ printf \"%q\" .System }}", "%q"},
                {"{{ if .Messages }}{{ end }}{{ printf .System }}", "constant format"},
                {"{{ if .Messages }}{{ end }}{{ eq .System 1 }}", "incompatible types"},
                {"{{ if .Messages }}{{ end }}{{ $x }}", "undefined variable"},
                {"{{ if .Messages }}{{ end }}{{ $x := \"\" }}{{ $x = true }}", "is assigned a boolean after a string"},
                {"{{ if .Messages }}{{ end }}{{ break }}", "outside {{range}}"},
                {"{{ if .Messages }}{{ end }}{{ nosuch .System }}", "not defined"},
                {"{{ if .Messages }}{{ end }}{{ .Nope.Deeper }}", "of a missing value"},
                {"{{ if .Messages }}{{ end }}{{ or .Nope \"x\" }}", "mixed type"},
                {"{{ if .Messages }}{{ end }}{{ . }}", "template's data"},
                {"{{ if .Messages }}{{ end }}{{ range .System }}{{ end }}", "ranging over a string"},
        }) {
            TemplateRefusal e = assertThrows(TemplateRefusal.class, () -> JinjaTranslator.translate(c[0]), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + " -> " + e.getMessage());
        }
    }
}
