package dev.modelfs.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.modelfs.template.GoTemplate.Action;
import dev.modelfs.template.GoTemplate.Command;
import dev.modelfs.template.GoTemplate.Field;
import dev.modelfs.template.GoTemplate.Identifier;
import dev.modelfs.template.GoTemplate.If;
import dev.modelfs.template.GoTemplate.IntLit;
import dev.modelfs.template.GoTemplate.Node;
import dev.modelfs.template.GoTemplate.Parens;
import dev.modelfs.template.GoTemplate.Pipe;
import dev.modelfs.template.GoTemplate.Range;
import dev.modelfs.template.GoTemplate.StringLit;
import dev.modelfs.template.GoTemplate.Text;
import dev.modelfs.template.GoTemplate.Variable;
import dev.modelfs.template.GoTemplate.With;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link GoTemplateParser}: the subset of Go's text/template of docs/FORMATS.md §7.9, and what it refuses. */
class GoTemplateParserTest {

    private static Pipe field(String... names) {
        return new Pipe(List.of(), false, List.of(new Command(List.of(new Field(List.of(names))))));
    }

    @Test
    void textActionsAndTrimMarkersAsGoLexesThem() {
        List<Node> t = GoTemplateParser.parse("a \n {{- .System -}} \n b{{ .Prompt }} c\n{{/* note */}}d {{- /* trimmed */ -}}\n e");
        assertEquals(List.of(new Text("a"), new Action(field("System")), new Text("b"), new Action(field("Prompt")),
                new Text(" c\n"), new Text("d"), new Text("e")), t);
        // "{{-3}}" is the number -3, not a trim marker; a dash without a space before "}}" is not one either
        assertEquals(List.of(new Text("x "), new Action(new Pipe(List.of(), false, List.of(new Command(List.of(new IntLit(-3))))))),
                GoTemplateParser.parse("x {{-3}}"));
    }

    @Test
    void elseIfChainsShareOneEnd() {
        List<Node> t = GoTemplateParser.parse("{{ if eq .Role \"a\" }}A{{ else if eq .Role \"b\" }}B{{ else }}C{{ end }}!");
        If outer = (If) t.getFirst();
        assertEquals(List.of(new Text("A")), outer.then());
        If inner = (If) outer.otherwise().getFirst();
        assertEquals(List.of(new Text("B")), inner.then());
        assertEquals(List.of(new Text("C")), inner.otherwise());
        assertEquals(new Text("!"), t.get(1));
        assertEquals(new Command(List.of(new Identifier("eq"), new Field(List.of("Role")), new StringLit("b"))),
                inner.pipe().commands().getFirst());
    }

    @Test
    void rangeWithTwoVariablesVariablesWithFieldsParensAndPipes() {
        List<Node> t = GoTemplateParser.parse("{{ range $i, $m := .Messages }}{{ $m.Role }}{{ else }}none{{ end }}"
                + "{{ with $x := (index $.Messages 0).Content | printf \"%s\" }}{{ . }}{{ end }}{{ $y = `raw\\n` }}");
        Range r = (Range) t.get(0);
        assertEquals(List.of("i", "m"), r.pipe().vars());
        assertEquals(new Action(new Pipe(List.of(), false, List.of(new Command(List.of(new Variable("m", List.of("Role"))))))), r.body().getFirst());
        assertEquals(List.of(new Text("none")), r.otherwise());
        With w = (With) t.get(1);
        assertEquals(List.of("x"), w.pipe().vars());
        assertEquals(2, w.pipe().commands().size());
        Parens p = (Parens) w.pipe().commands().getFirst().args().getFirst();
        assertEquals(List.of("Content"), p.fields());
        assertEquals(new Variable("", List.of("Messages")), p.pipe().commands().getFirst().args().get(1));
        Action assign = (Action) t.get(2);
        assertTrue(assign.pipe().assign());
        assertEquals(new StringLit("raw\\n"), assign.pipe().commands().getFirst().args().getFirst());
    }

    @Test
    void quotedStringEscapes() {
        Action a = (Action) GoTemplateParser.parse("{{ \"a\\n\\t\\\"\\\\\\u00e9\" }}").getFirst();
        assertEquals(new StringLit("a\n\t\"\\\u00e9"), a.pipe().commands().getFirst().args().getFirst());
    }

    @Test
    void refusesWhatTheSubsetLacksAndWhatGoWouldNotParse() {
        for (String[] c : new String[][] {
                {"{{ define \"x\" }}a{{ end }}", "named templates"},
                {"{{ template \"x\" }}", "named templates"},
                {"{{ 1.5 }}", "number 1.5"},
                {"{{ 'a' }}", "character constants"},
                {"{{ if .X }}a", "without end"},
                {"{{ .X }", "unexpected }"},
                {"{{ .X ", "unclosed action"},
                {"a {{/* x ", "unclosed comment"},
                {"{{ end }}", "unexpected {{end}}"},
                {"{{ with .X }}a{{ else with .Y }}b{{ end }}", "{{else with}}"},
                {"{{ \"abc }}", "unterminated quoted string"},
                {"{{ }}", "missing value"},
                {"{{ .X ! }}", "unexpected !"},
        }) {
            TemplateRefusal e = assertThrows(TemplateRefusal.class, () -> GoTemplateParser.parse(c[0]), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + " -> " + e.getMessage());
        }
    }

    @Test
    void deepNestingIsRefusedNotAStackOverflow() {
        String deep = "{{ if .X }}".repeat(100) + "{{ end }}".repeat(100);
        assertTrue(assertThrows(TemplateRefusal.class, () -> GoTemplateParser.parse(deep)).getMessage().contains("deeper"));
    }
}
