package dev.modelfs.template;

import dev.modelfs.template.GoTemplate.Action;
import dev.modelfs.template.GoTemplate.BoolLit;
import dev.modelfs.template.GoTemplate.Break;
import dev.modelfs.template.GoTemplate.Command;
import dev.modelfs.template.GoTemplate.Continue;
import dev.modelfs.template.GoTemplate.Dot;
import dev.modelfs.template.GoTemplate.Field;
import dev.modelfs.template.GoTemplate.Identifier;
import dev.modelfs.template.GoTemplate.If;
import dev.modelfs.template.GoTemplate.IntLit;
import dev.modelfs.template.GoTemplate.Nil;
import dev.modelfs.template.GoTemplate.Node;
import dev.modelfs.template.GoTemplate.Operand;
import dev.modelfs.template.GoTemplate.Parens;
import dev.modelfs.template.GoTemplate.Pipe;
import dev.modelfs.template.GoTemplate.Range;
import dev.modelfs.template.GoTemplate.StringLit;
import dev.modelfs.template.GoTemplate.Text;
import dev.modelfs.template.GoTemplate.Variable;
import dev.modelfs.template.GoTemplate.With;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Translates an Ollama chat template (a Go {@code text/template}) into a Jinja chat template that
 * transformers' {@code apply_chat_template} renders to the same text Ollama renders for the same
 * messages (docs/FORMATS.md §7.9, docs/SEMANTICS.md "Chat template").
 *
 * <p>The Jinja first rebuilds the data Ollama passes its template from Hugging Face's {@code messages}
 * (Ollama's {@code template.Execute}: consecutive messages of one role merged with a blank line, the
 * system messages joined into {@code .System}), then runs the translated body: once over
 * {@code .Messages} for a template that names {@code Messages}, else once per system/prompt/response
 * group of the conversation with {@code .System}, {@code .Prompt}, {@code .Response}, the last run cut
 * after {@code .Response} (Ollama's legacy form). Values are typed while translating so that what Go
 * prints differently from Jinja (booleans, missing keys, lists) is printed as Go prints it or refused.
 * Tool definitions and tool calls are not translated: a template that reads {@code .Tools} or a
 * message's {@code .ToolCalls} gets guards that raise an error when {@code tools} or a message's
 * {@code tool_calls} are passed, so those lists are always empty where the body reads them.
 *
 * <p>Invariants: the output uses no trim markers and no whitespace between statements, every
 * statement tag is {@code {%+ ... +%}} and literal text that Jinja would read as markup (or whose
 * newlines it would rewrite) is a string expression, so the result renders identically with or without
 * {@code trim_blocks}/{@code lstrip_blocks}/{@code keep_trailing_newline}. A construct outside the
 * subset raises {@link TemplateRefusal} naming it; the translator never guesses.
 */
public final class JinjaTranslator {
    /** The Jinja namespace every translated variable lives in. */
    static final String NS = "ollama";

    /** Static types of translated values: what Go would print and which fields exist. */
    enum Type { STR, INT, BOOL, NOVALUE, ROOT, MSG, MSGS, TOOLS, TOOLCALLS, ANY }

    /** A translated value: a Jinja expression and its type ({@code expr} unused for {@link Type#ROOT}). */
    record Val(String expr, Type type) {}

    private final StringBuilder out = new StringBuilder();
    private final Map<String, Val> root;
    private final Deque<Map<String, Val>> scopes = new ArrayDeque<>();
    private Val dot;
    private int counter;
    private int rangeDepth;
    /** The template reads .Tools / a message's .ToolCalls: the Jinja refuses messages that carry them (guards). */
    private boolean tools, toolCalls;

    private JinjaTranslator(Map<String, Val> root, int counter) {
        this.root = root;
        this.counter = counter;
    }

    /**
     * The Jinja chat template of an Ollama template.
     *
     * @throws TemplateRefusal with the reason when the template uses what is not translated
     */
    public static String translate(String goTemplate) {
        List<Node> body = GoTemplateParser.parse(goTemplate);
        List<String> vars = OllamaForm.identifiers(body);
        boolean messages = vars.contains("messages");
        if (!messages && !vars.contains("response")) {
            body = new ArrayList<>(body);
            body.add(new Action(new Pipe(List.of(), false, List.of(new Command(List.of(new Field(List.of("Response"))))))));
            body = List.copyOf(body);
        }
        StringBuilder j = new StringBuilder();
        j.append("{#- Translated by modelfs from Ollama's Go template (docs/FORMATS.md 7.9) -#}");
        String translated;
        boolean usesTools, usesToolCalls;
        if (messages) {
            JinjaTranslator t = body(body, OllamaForm.messagesRoot(), 0);
            translated = t.out.toString();
            usesTools = t.tools;
            usesToolCalls = t.toolCalls;
        } else {
            List<Node> cut = OllamaForm.cutAfterResponse(body);
            JinjaTranslator pair = body(body, OllamaForm.legacyRoot(), 0);
            JinjaTranslator last = body(cut, OllamaForm.legacyRoot(), 1_000_000);
            translated = OllamaForm.legacy(pair.out.toString(), last.out.toString());
            usesTools = pair.tools || last.tools;
            usesToolCalls = pair.toolCalls || last.toolCalls;
        }
        if (usesTools) {
            j.append(OllamaForm.NO_TOOLS);
        }
        if (usesToolCalls) {
            j.append(OllamaForm.NO_TOOL_CALLS);
        }
        j.append(OllamaForm.PREAMBLE).append(translated);
        // Jinja drops one newline at the very end of a template (keep_trailing_newline=False)
        if (j.charAt(j.length() - 1) == '\n') {
            j.setLength(j.length() - 1);
            j.append("{{ '\\n' }}");
        }
        return j.toString();
    }

    private static JinjaTranslator body(List<Node> nodes, Map<String, Val> root, int counterStart) {
        JinjaTranslator t = new JinjaTranslator(root, counterStart);
        t.dot = new Val(null, Type.ROOT);
        t.scopes.push(new HashMap<>());
        t.list(nodes);
        return t;
    }

    // ---- output ----

    private void stmt(String s) {
        out.append("{%+ ").append(s).append(" +%}");
    }

    private void text(String s) {
        if (s.isEmpty()) {
            return;
        }
        boolean markup = s.contains("{{") || s.contains("{%") || s.contains("{#") || s.contains("\r") || s.endsWith("{")
                || s.startsWith("}");
        if (markup) {
            out.append("{{ ").append(str(s)).append(" }}");
        } else {
            out.append(s);
        }
    }

    /** A Jinja string literal with value {@code s}. */
    static String str(String s) {
        StringBuilder b = new StringBuilder("'");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\' -> b.append("\\\\");
                case '\'' -> b.append("\\'");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        b.append(String.format("\\x%02x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('\'').toString();
    }

    // ---- nodes ----

    private void list(List<Node> nodes) {
        scopes.push(new HashMap<>());
        for (Node n : nodes) {
            node(n);
        }
        scopes.pop();
    }

    private void node(Node n) {
        switch (n) {
            case Text t -> text(t.text());
            case Action a -> {
                Val v = pipe(a.pipe());
                if (a.pipe().vars().isEmpty()) {
                    print(v);
                }
            }
            case If i -> {
                Val c = pipe(i.pipe());
                stmt("if " + cond(c));
                list(i.then());
                if (!i.otherwise().isEmpty()) {
                    stmt("else");
                    list(i.otherwise());
                }
                stmt("endif");
            }
            case With w -> {
                Val c = pipe(w.pipe());
                String slot = NS + ".w" + (++counter);
                stmt("set " + slot + " = " + expr(c));
                stmt("if " + cond(new Val(slot, c.type())));
                Val outer = dot;
                dot = new Val(slot, c.type());
                list(w.body());
                dot = outer;
                if (!w.otherwise().isEmpty()) {
                    stmt("else");
                    list(w.otherwise());
                }
                stmt("endif");
            }
            case Range r -> range(r);
            case Break _ -> {
                if (rangeDepth == 0) {
                    throw new TemplateRefusal("does not parse: {{break}} outside {{range}}");
                }
                stmt("break");
            }
            case Continue _ -> {
                if (rangeDepth == 0) {
                    throw new TemplateRefusal("does not parse: {{continue}} outside {{range}}");
                }
                stmt("continue");
            }
        }
    }

    private void range(Range r) {
        Pipe p = r.pipe();
        Val over = pipe(new Pipe(List.of(), false, p.commands()));
        if (over.type() == Type.TOOLS || over.type() == Type.TOOLCALLS) {
            // the guards (OllamaForm.NO_TOOLS, NO_TOOL_CALLS) keep these lists empty: only the else part runs
            list(r.otherwise());
            return;
        }
        Type elem = switch (over.type()) {
            case MSGS -> Type.MSG;
            default -> throw new TemplateRefusal("ranging over a " + describe(over) + " is not translated (over .Messages it is)");
        };
        String it = "o" + (++counter);
        stmt("for " + it + " in " + over.expr());
        rangeDepth++;
        scopes.push(new HashMap<>());
        if (p.vars().size() == 2) {
            declare(p.vars().get(0), new Val("loop.index0", Type.INT));
            declare(p.vars().get(1), new Val(it, elem));
        } else if (p.vars().size() == 1) {
            declare(p.vars().getFirst(), new Val(it, elem));
        }
        Val outer = dot;
        dot = new Val(it, elem);
        list(r.body());
        dot = outer;
        scopes.pop();
        rangeDepth--;
        if (!r.otherwise().isEmpty()) {
            stmt("else");
            list(r.otherwise());
        }
        stmt("endfor");
    }

    private void print(Val v) {
        switch (v.type()) {
            case STR, INT -> out.append("{{ ").append(v.expr()).append(" }}");
            case BOOL -> out.append("{{ 'true' if ").append(v.expr()).append(" else 'false' }}");
            case NOVALUE -> text("<no value>");
            default -> throw new TemplateRefusal("printing a " + describe(v) + " is not translated (Go and Jinja format it differently)");
        }
    }

    static String describe(Val v) {
        return switch (v.type()) {
            case STR -> "string";
            case INT -> "number";
            case BOOL -> "boolean";
            case NOVALUE -> "missing value";
            case ROOT -> "template's data (.)";
            case MSG -> "message";
            case MSGS -> "list of messages";
            case TOOLS -> "list of tools (.Tools)";
            case TOOLCALLS -> "list of tool calls (.ToolCalls)";
            case ANY -> "value of mixed type";
        };
    }

    private static String cond(Val v) {
        return switch (v.type()) {
            case ROOT, MSG -> "true";
            case NOVALUE -> "false";
            default -> v.expr();
        };
    }

    private static String expr(Val v) {
        if (v.type() == Type.ROOT) {
            throw new TemplateRefusal("using the template's data (.) as a value is not translated");
        }
        return v.expr();
    }

    // ---- variables ----

    private void declare(String name, Val v) {
        String slot = NS + ".v" + (++counter);
        stmt("set " + slot + " = " + expr(v));
        scopes.peek().put(name, new Val(slot, v.type()));
    }

    private Val lookup(String name) {
        if (name.isEmpty()) {
            return new Val(null, Type.ROOT);
        }
        for (Map<String, Val> s : scopes) {
            Val v = s.get(name);
            if (v != null) {
                return v;
            }
        }
        throw new TemplateRefusal("does not parse: undefined variable $" + name);
    }

    private void assign(String name, Val v) {
        for (Map<String, Val> s : scopes) {
            Val old = s.get(name);
            if (old != null) {
                if (old.type() != v.type() && !(printable(old.type()) && printable(v.type()) && old.type() != Type.BOOL && v.type() != Type.BOOL)) {
                    throw new TemplateRefusal("$" + name + " is assigned a " + describe(v) + " after a " + describe(old) + " (not translated)");
                }
                stmt("set " + old.expr() + " = " + expr(v));
                return;
            }
        }
        throw new TemplateRefusal("does not parse: undefined variable $" + name);
    }

    private static boolean printable(Type t) {
        return t == Type.STR || t == Type.INT || t == Type.BOOL;
    }

    // ---- pipelines ----

    private Val pipe(Pipe p) {
        Val v = null;
        for (Command c : p.commands()) {
            v = command(c, v);
        }
        if (!p.vars().isEmpty()) {
            if (p.vars().size() != 1) {
                throw new TemplateRefusal("does not parse: too many declarations");
            }
            if (p.assign()) {
                assign(p.vars().getFirst(), v);
            } else {
                declare(p.vars().getFirst(), v);
            }
            return lookup(p.vars().getFirst());
        }
        return v;
    }

    private Val command(Command c, Val piped) {
        Operand first = c.args().getFirst();
        if (first instanceof Identifier f) {
            List<Val> args = new ArrayList<>();
            for (Operand o : c.args().subList(1, c.args().size())) {
                args.add(operand(o));
            }
            if (piped != null) {
                args.add(piped);
            }
            return Functions.call(f.name(), args, c.args().size() > 1 ? c.args().get(1) : null);
        }
        if (c.args().size() > 1) {
            throw new TemplateRefusal("arguments to a non-function (" + c.args().size() + " operands in one command) are not translated");
        }
        if (piped != null) {
            throw new TemplateRefusal("does not parse: a pipeline into a non-function");
        }
        return operand(first);
    }

    private Val operand(Operand o) {
        return switch (o) {
            case Dot _ -> dot;
            case Field f -> fields(dot, f.names());
            case Variable v -> fields(lookup(v.name()), v.fields());
            case StringLit s -> new Val(str(s.value()), Type.STR);
            case IntLit i -> new Val(Long.toString(i.value()), Type.INT);
            case BoolLit b -> new Val(b.value() ? "true" : "false", Type.BOOL);
            case Nil _ -> throw new TemplateRefusal("does not parse: nil is not a command");
            case Identifier f -> Functions.call(f.name(), List.of(), null);
            case Parens p -> fields(pipe(p.pipe()), p.fields());
        };
    }

    private Val fields(Val v, List<String> names) {
        for (String n : names) {
            v = field(v, n);
        }
        return v;
    }

    private Val field(Val v, String name) {
        return switch (v.type()) {
            case ROOT -> {
                Val f = root.getOrDefault(name, new Val("none", Type.NOVALUE));
                tools |= f.type() == Type.TOOLS;
                yield f;
            }
            case MSG -> switch (name) {
                case "Role" -> new Val(v.expr() + "['role']", Type.STR);
                case "Content" -> new Val(v.expr() + "['content']", Type.STR);
                case "Thinking" -> new Val(v.expr() + "['thinking']", Type.STR);
                case "ToolName" -> new Val(v.expr() + "['tool_name']", Type.STR);
                case "ToolCallID" -> new Val(v.expr() + "['tool_call_id']", Type.STR);
                case "ToolCalls" -> {
                    toolCalls = true;
                    yield new Val(v.expr() + "['tool_calls']", Type.TOOLCALLS);
                }
                case "Images" -> throw new TemplateRefusal("a message's .Images is not translated");
                default -> throw new TemplateRefusal("a message has no field ." + name + " (Ollama's execution would fail)");
            };
            case NOVALUE -> throw new TemplateRefusal("." + name + " of a missing value is not translated (Ollama's execution would fail)");
            case TOOLS, TOOLCALLS -> throw new TemplateRefusal("fields of " + describe(v) + " are not translated");
            default -> throw new TemplateRefusal("." + name + " of a " + describe(v) + " is not translated");
        };
    }
}
