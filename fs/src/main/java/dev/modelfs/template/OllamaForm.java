package dev.modelfs.template;

import dev.modelfs.template.GoTemplate.Action;
import dev.modelfs.template.GoTemplate.Break;
import dev.modelfs.template.GoTemplate.Command;
import dev.modelfs.template.GoTemplate.Continue;
import dev.modelfs.template.GoTemplate.Field;
import dev.modelfs.template.GoTemplate.If;
import dev.modelfs.template.GoTemplate.Node;
import dev.modelfs.template.GoTemplate.Operand;
import dev.modelfs.template.GoTemplate.Parens;
import dev.modelfs.template.GoTemplate.Pipe;
import dev.modelfs.template.GoTemplate.Range;
import dev.modelfs.template.GoTemplate.Text;
import dev.modelfs.template.GoTemplate.Variable;
import dev.modelfs.template.GoTemplate.With;
import dev.modelfs.template.JinjaTranslator.Type;
import dev.modelfs.template.JinjaTranslator.Val;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * What Ollama's {@code template.Execute} passes a chat template, in Jinja over Hugging Face's
 * {@code messages} (docs/FORMATS.md §7.9): the collated message list and the joined system prompt, the
 * data of the two forms ({@code .Messages} and the legacy {@code .System}/{@code .Prompt}/
 * {@code .Response}), the legacy form's loop over system/prompt/response groups, and the cut of its last
 * run after {@code .Response}. Mirrors Ollama's {@code template/template.go} (Execute, collate, Vars,
 * deleteNode).
 */
final class OllamaForm {
    private OllamaForm() {}

    private static final String NS = JinjaTranslator.NS;

    /**
     * Builds {@code ollama.msgs} (Ollama's collate: a message of the same role as the one before it, other
     * than a tool result, is appended to it after a blank line) of normalized dicts, and
     * {@code ollama.system} (every system message's content joined by a blank line). Content must be a
     * string (or none); Ollama's messages carry no content parts.
     */
    static final String PREAMBLE = s("set " + NS + " = namespace(msgs=[], system='', nsys=0, prompt='', response='')")
            + s("for om in messages")
            + s("if om['content'] is defined and om['content'] is not none and om['content'] is not string")
            + "{{ raise_exception('this chat template was translated from an Ollama template: message content must be a string') }}"
            + s("endif")
            + s("set oc = om['content'] if om['content'] is string else ''")
            + s("if om['role'] == 'system'")
            + s("set " + NS + ".system = oc if " + NS + ".nsys == 0 else " + NS + ".system ~ '\\n\\n' ~ oc")
            + s("set " + NS + ".nsys = " + NS + ".nsys + 1")
            + s("endif")
            + s("if " + NS + ".msgs and " + NS + ".msgs[-1]['role'] == om['role'] and om['role'] != 'tool'")
            + s("set ol = " + NS + ".msgs[-1]")
            + s("set " + NS + ".msgs = " + NS + ".msgs[:-1] + [{'role': ol['role'], 'content': ol['content'] ~ '\\n\\n' ~ oc, "
                + "'thinking': ol['thinking'], 'tool_calls': ol['tool_calls'], 'tool_name': ol['tool_name'], 'tool_call_id': ol['tool_call_id']}]")
            + s("else")
            + s("set " + NS + ".msgs = " + NS + ".msgs + [{'role': om['role'], 'content': oc, "
                + "'thinking': om['thinking'] or om['reasoning_content'] or '', 'tool_calls': om['tool_calls'] or [], "
                + "'tool_name': om['tool_name'] or om['name'] or '', 'tool_call_id': om['tool_call_id'] or ''}]")
            + s("endif")
            + s("endfor");

    /** Raises when tool definitions are passed: a template that reads .Tools is translated for none (§7.9). */
    static final String NO_TOOLS = s("if tools is defined and tools")
            + "{{ raise_exception('this chat template was translated from an Ollama template without its tool definitions: pass no tools') }}"
            + s("endif");

    /** Raises when a message carries tool calls: a template that reads .ToolCalls is translated for none (§7.9). */
    static final String NO_TOOL_CALLS = s("for om in messages") + s("if om['tool_calls'] is defined and om['tool_calls']")
            + "{{ raise_exception('this chat template was translated from an Ollama template without its tool calls: pass messages without tool_calls') }}"
            + s("endif") + s("endfor");

    private static String s(String stmt) {
        return "{%+ " + stmt + " +%}";
    }

    private static final Val THINK = new Val("(enable_thinking is defined and enable_thinking is true)", Type.BOOL);
    private static final Val THINK_SET = new Val("(enable_thinking is defined and enable_thinking is not none)", Type.BOOL);

    /** The data of a template that names Messages: System, Messages, Tools, Response "", Think, ThinkLevel, IsThinkSet. */
    static Map<String, Val> messagesRoot() {
        return Map.of("System", new Val(NS + ".system", Type.STR), "Messages", new Val(NS + ".msgs", Type.MSGS),
                "Tools", new Val("(tools or [])", Type.TOOLS), "Response", new Val("''", Type.STR),
                "Think", THINK, "ThinkLevel", new Val("''", Type.STR), "IsThinkSet", THINK_SET);
    }

    /** The data of one run of a legacy template: System, Prompt, Response, Think, ThinkLevel, IsThinkSet. */
    static Map<String, Val> legacyRoot() {
        return Map.of("System", new Val(NS + ".system", Type.STR), "Prompt", new Val(NS + ".prompt", Type.STR),
                "Response", new Val(NS + ".response", Type.STR),
                "Think", THINK, "ThinkLevel", new Val("''", Type.STR), "IsThinkSet", THINK_SET);
    }

    /**
     * Ollama's legacy loop: a run of the whole template ({@code pair}) for every system/prompt/response
     * group but the last, started when a system message follows a prompt or response, or a user message
     * follows a response; then the last group with the template cut after {@code .Response} ({@code last}).
     */
    static String legacy(String pair, String last) {
        String run = pair + s("set " + NS + ".system = ''") + s("set " + NS + ".prompt = ''") + s("set " + NS + ".response = ''");
        return s("set " + NS + ".system = ''")
                + s("for om in " + NS + ".msgs")
                + s("if om['role'] == 'system'")
                + s("if " + NS + ".prompt != '' or " + NS + ".response != ''") + run + s("endif")
                + s("set " + NS + ".system = om['content']")
                + s("elif om['role'] == 'user'")
                + s("if " + NS + ".response != ''") + run + s("endif")
                + s("set " + NS + ".prompt = om['content']")
                + s("elif om['role'] == 'assistant'")
                + s("set " + NS + ".response = om['content']")
                + s("endif")
                + s("endfor")
                + last;
    }

    /**
     * Ollama's {@code Template.Vars}: the identifiers of fields and variables ({@code $x.Y} gives {@code $x}
     * and {@code y}), lower-cased, sorted. Like Ollama's, it does not look into a parenthesized pipeline
     * followed by fields.
     */
    static List<String> identifiers(List<Node> nodes) {
        TreeSet<String> out = new TreeSet<>();
        nodes.forEach(n -> identifiers(n, out));
        return List.copyOf(out);
    }

    private static void identifiers(Node n, TreeSet<String> out) {
        switch (n) {
            case Action a -> identifiers(a.pipe(), out);
            case If i -> {
                identifiers(i.pipe(), out);
                i.then().forEach(c -> identifiers(c, out));
                i.otherwise().forEach(c -> identifiers(c, out));
            }
            case Range r -> {
                identifiers(r.pipe(), out);
                r.body().forEach(c -> identifiers(c, out));
                r.otherwise().forEach(c -> identifiers(c, out));
            }
            case With w -> {
                identifiers(w.pipe(), out);
                w.body().forEach(c -> identifiers(c, out));
                w.otherwise().forEach(c -> identifiers(c, out));
            }
            case Text _, Break _, Continue _ -> { }
        }
    }

    private static void identifiers(Pipe p, TreeSet<String> out) {
        // Go's Identifiers walks a PipeNode's commands only; the declared variables are not in Cmds
        for (Command c : p.commands()) {
            for (Operand o : c.args()) {
                switch (o) {
                    case Field f -> f.names().forEach(x -> out.add(x.toLowerCase(Locale.ROOT)));
                    case Variable v -> {
                        out.add(("$" + v.name()).toLowerCase(Locale.ROOT));
                        v.fields().forEach(x -> out.add(x.toLowerCase(Locale.ROOT)));
                    }
                    case Parens pa -> {
                        if (pa.fields().isEmpty()) {
                            identifiers(pa.pipe(), out);
                        }
                    }
                    default -> { }
                }
            }
        }
    }

    /**
     * Ollama's {@code deleteNode} for the last run of a legacy template: every node after the first field
     * whose names include {@code Response} (in the order Ollama walks: lists, branch bodies and else lists,
     * actions' arguments, not branch conditions) is removed.
     *
     * @throws TemplateRefusal where Ollama's walk would fail (the cut inside a block with an else)
     */
    static List<Node> cutAfterResponse(List<Node> nodes) {
        boolean[] cut = {false};
        return cutList(nodes, cut);
    }

    private static List<Node> cutList(List<Node> nodes, boolean[] cut) {
        List<Node> out = new ArrayList<>();
        for (Node n : nodes) {
            if (cut[0]) {
                continue;
            }
            Node kept = cutNode(n, cut);
            if (kept != null) {
                out.add(kept);
            }
        }
        return List.copyOf(out);
    }

    private static Node cutNode(Node n, boolean[] cut) {
        return switch (n) {
            case Text _, Break _, Continue _ -> n;
            case Action a -> {
                Pipe p = cutPipe(a.pipe(), cut);
                yield p == null ? null : new Action(p);
            }
            case If i -> {
                List<Node> then = cutList(i.then(), cut);
                yield new If(i.pipe(), then, cutElse(i.otherwise(), cut));
            }
            case Range r -> {
                List<Node> body = cutList(r.body(), cut);
                yield new Range(r.pipe(), body, cutElse(r.otherwise(), cut));
            }
            case With w -> {
                List<Node> body = cutList(w.body(), cut);
                yield new With(w.pipe(), body, cutElse(w.otherwise(), cut));
            }
        };
    }

    private static List<Node> cutElse(List<Node> otherwise, boolean[] cut) {
        if (otherwise.isEmpty()) {
            return otherwise;
        }
        if (cut[0]) {
            throw new TemplateRefusal("the legacy template has .Response inside a block with an else (Ollama fails on it)");
        }
        return cutList(otherwise, cut);
    }

    private static Pipe cutPipe(Pipe p, boolean[] cut) {
        List<Command> cmds = new ArrayList<>();
        for (Command c : p.commands()) {
            List<Operand> args = new ArrayList<>();
            for (Operand o : c.args()) {
                if (o instanceof Field f && f.names().contains("Response")) {
                    cut[0] = true;   // Ollama's predicate keeps every Response field, even after the cut
                    args.add(o);
                } else if (cut[0]) {
                    continue;
                } else if (o instanceof Parens pa && pa.fields().isEmpty()) {
                    Pipe inner = cutPipe(pa.pipe(), cut);
                    if (inner != null) {
                        args.add(new Parens(inner, List.of()));
                    }
                } else {
                    args.add(o);
                }
            }
            if (args.isEmpty()) {
                return null;
            }
            cmds.add(new Command(List.copyOf(args)));
        }
        return cmds.isEmpty() ? null : new Pipe(p.vars(), p.assign(), List.copyOf(cmds));
    }
}
