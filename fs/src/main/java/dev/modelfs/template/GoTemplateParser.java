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
import java.util.ArrayList;
import java.util.List;

/**
 * Parses a Go {@code text/template} (the default delimiters {@code {{ }}}) into a {@link GoTemplate}
 * tree, as Go's {@code text/template/parse} does for the subset of docs/FORMATS.md §7.9: text, comments,
 * trim markers, actions, pipelines, variables, {@code if}/{@code else if}/{@code else}/{@code range}/
 * {@code with}/{@code end}, {@code break}/{@code continue}, string, integer, boolean and nil constants.
 * Anything else ({@code define}, {@code template}, {@code block}, floats, characters, {@code else with})
 * is refused with a {@link TemplateRefusal} naming it, and so is a template Go itself would not parse.
 */
public final class GoTemplateParser {
    private static final int MAX_LENGTH = 1 << 20;
    private static final int MAX_DEPTH = 64;

    private final List<Item> items;
    private int next;
    private int depth;

    private GoTemplateParser(List<Item> items) {
        this.items = items;
    }

    /** The template's body. @throws TemplateRefusal when it uses what the subset lacks or does not parse */
    public static List<Node> parse(String template) {
        if (template.length() > MAX_LENGTH) {
            throw new TemplateRefusal("the template is longer than " + MAX_LENGTH + " characters");
        }
        GoTemplateParser p = new GoTemplateParser(lex(template));
        List<Node> body = p.list();
        if (p.stop != null) {
            throw new TemplateRefusal("does not parse: unexpected {{" + p.stop.keyword() + "}}");
        }
        return body;
    }

    // ---- lexing: text and actions, trim markers applied ----

    /** A text item (tokens null) or an action's tokens. */
    private record Item(String text, List<Tok> tokens) {
        String keyword() {
            return tokens.isEmpty() || tokens.getFirst().kind != Kind.IDENT ? "" : tokens.getFirst().text;
        }
    }

    private enum Kind { IDENT, FIELD, VARIABLE, STRING, INT, LPAREN, RPAREN, PIPE, DECLARE, ASSIGN, COMMA, DOT }

    /** A token; {@code adjacent}: no space before it (a field after a term chains onto it). */
    private record Tok(Kind kind, String text, boolean adjacent) {}

    private static boolean space(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\n';
    }

    private static List<Item> lex(String s) {
        List<Item> out = new ArrayList<>();
        int pos = 0;
        boolean trimNext = false;
        while (true) {
            int open = s.indexOf("{{", pos);
            String text = s.substring(pos, open < 0 ? s.length() : open);
            if (trimNext) {
                text = stripLeading(text);
            }
            if (open < 0) {
                addText(out, text);
                return out;
            }
            int i = open + 2;
            if (i + 1 < s.length() && s.charAt(i) == '-' && space(s.charAt(i + 1))) {
                text = stripTrailing(text);
                i += 2;
            }
            addText(out, text);
            if (s.startsWith("/*", i)) {
                int close = s.indexOf("*/", i + 2);
                if (close < 0) {
                    throw new TemplateRefusal("does not parse: unclosed comment");
                }
                int j = close + 2;
                trimNext = false;
                if (j + 1 < s.length() && space(s.charAt(j)) && s.charAt(j + 1) == '-' && s.startsWith("}}", j + 2)) {
                    trimNext = true;
                    j += 2;
                }
                if (!s.startsWith("}}", j)) {
                    throw new TemplateRefusal("does not parse: comment ends in the middle of an action");
                }
                pos = j + 2;
                continue;
            }
            List<Tok> toks = new ArrayList<>();
            boolean adjacent = false;
            while (true) {
                if (i >= s.length()) {
                    throw new TemplateRefusal("does not parse: unclosed action");
                }
                char c = s.charAt(i);
                if (space(c) && i + 1 < s.length() && s.charAt(i + 1) == '-' && s.startsWith("}}", i + 2)) {
                    trimNext = true;
                    pos = i + 4;
                    break;
                }
                if (s.startsWith("}}", i)) {
                    trimNext = false;
                    pos = i + 2;
                    break;
                }
                if (space(c)) {
                    i++;
                    adjacent = false;
                    continue;
                }
                int start = i;
                Kind kind;
                String val;
                if (c == '"') {
                    StringBuilder b = new StringBuilder();
                    i = quoted(s, i + 1, b);
                    kind = Kind.STRING;
                    val = b.toString();
                } else if (c == '`') {
                    int end = s.indexOf('`', i + 1);
                    if (end < 0) {
                        throw new TemplateRefusal("does not parse: unterminated raw string");
                    }
                    kind = Kind.STRING;
                    val = s.substring(i + 1, end).replace("\r", "");
                    i = end + 1;
                } else if (c == '\'') {
                    throw new TemplateRefusal("character constants are not translated");
                } else if (Character.isDigit(c) || ((c == '-' || c == '+') && i + 1 < s.length() && Character.isDigit(s.charAt(i + 1)))) {
                    i++;
                    while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '.' || s.charAt(i) == '_')) {
                        i++;
                    }
                    val = s.substring(start, i);
                    if (!val.matches("[-+]?[0-9]{1,18}")) {
                        throw new TemplateRefusal("the number " + val + " is not translated (decimal integers are)");
                    }
                    kind = Kind.INT;
                } else if (c == '.' || c == '$') {
                    i++;
                    while (i < s.length() && ident(s.charAt(i))) {
                        i++;
                    }
                    val = s.substring(start + 1, i);
                    kind = c == '$' ? Kind.VARIABLE : val.isEmpty() ? Kind.DOT : Kind.FIELD;
                } else if (ident(c)) {
                    while (i < s.length() && ident(s.charAt(i))) {
                        i++;
                    }
                    val = s.substring(start, i);
                    kind = Kind.IDENT;
                } else if (s.startsWith(":=", i)) {
                    i += 2;
                    kind = Kind.DECLARE;
                    val = ":=";
                } else {
                    i++;
                    val = String.valueOf(c);
                    kind = switch (c) {
                        case '(' -> Kind.LPAREN;
                        case ')' -> Kind.RPAREN;
                        case '|' -> Kind.PIPE;
                        case '=' -> Kind.ASSIGN;
                        case ',' -> Kind.COMMA;
                        default -> throw new TemplateRefusal("does not parse: unexpected " + c + " in an action");
                    };
                }
                toks.add(new Tok(kind, val, adjacent));
                adjacent = kind != Kind.PIPE && kind != Kind.LPAREN && kind != Kind.COMMA && kind != Kind.DECLARE && kind != Kind.ASSIGN;
            }
            if (toks.isEmpty()) {
                throw new TemplateRefusal("does not parse: missing value for command");
            }
            out.add(new Item(null, List.copyOf(toks)));
        }
    }

    private static void addText(List<Item> out, String text) {
        if (!text.isEmpty()) {
            out.add(new Item(text, null));
        }
    }

    private static boolean ident(char c) {
        return c == '_' || Character.isLetterOrDigit(c);
    }

    private static String stripLeading(String t) {
        int i = 0;
        while (i < t.length() && space(t.charAt(i))) {
            i++;
        }
        return t.substring(i);
    }

    private static String stripTrailing(String t) {
        int i = t.length();
        while (i > 0 && space(t.charAt(i - 1))) {
            i--;
        }
        return t.substring(0, i);
    }

    /** Reads a Go interpreted string literal's body from {@code i} into {@code b}; returns the index after its closing quote. */
    private static int quoted(String s, int i, StringBuilder b) {
        while (true) {
            if (i >= s.length() || s.charAt(i) == '\n') {
                throw new TemplateRefusal("does not parse: unterminated quoted string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return i;
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (i >= s.length()) {
                throw new TemplateRefusal("does not parse: unterminated quoted string");
            }
            char e = s.charAt(i++);
            switch (e) {
                case 'n' -> b.append('\n');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'a' -> b.append('\u0007');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'v' -> b.append('\u000b');
                case '\\' -> b.append('\\');
                case '"' -> b.append('"');
                case 'u', 'U' -> {
                    int n = e == 'u' ? 4 : 8;
                    if (i + n > s.length()) {
                        throw new TemplateRefusal("does not parse: bad escape in a quoted string");
                    }
                    try {
                        b.appendCodePoint(Integer.parseInt(s.substring(i, i + n), 16));
                    } catch (IllegalArgumentException ex) {
                        throw new TemplateRefusal("does not parse: bad escape in a quoted string");
                    }
                    i += n;
                }
                default -> throw new TemplateRefusal("the escape \\" + e + " in a quoted string is not translated");
            }
        }
    }

    // ---- parsing ----

    /** Where a list stopped: at {@code {{end}}}, at {@code {{else}}} (elseIf null) or {@code {{else if pipe}}}, or at the end of input. */
    private record Stop(String keyword, Pipe elseIf) {}

    private Stop stop;

    private List<Node> list() {
        if (++depth > MAX_DEPTH) {
            throw new TemplateRefusal("the template nests deeper than " + MAX_DEPTH + " blocks");
        }
        List<Node> out = new ArrayList<>();
        stop = null;
        while (next < items.size()) {
            Item it = items.get(next++);
            if (it.text() != null) {
                out.add(new Text(it.text()));
                continue;
            }
            List<Tok> t = it.tokens();
            String kw = it.keyword();
            switch (kw) {
                case "end" -> {
                    only(t, "end");
                    stop = new Stop("end", null);
                    depth--;
                    return List.copyOf(out);
                }
                case "else" -> {
                    if (t.size() == 1) {
                        stop = new Stop("else", null);
                    } else if (t.get(1).kind == Kind.IDENT && t.get(1).text.equals("if")) {
                        stop = new Stop("else", pipe(t.subList(2, t.size()), false));
                    } else {
                        throw new TemplateRefusal("{{else " + t.get(1).text + "}} is not translated");
                    }
                    depth--;
                    return List.copyOf(out);
                }
                case "if" -> out.add(ifTail(pipe(t.subList(1, t.size()), false)));
                case "range" -> {
                    Pipe p = pipe(t.subList(1, t.size()), true);
                    List<Node> body = list();
                    List<Node> otherwise = elseOf("range");
                    out.add(new Range(p, body, otherwise));
                }
                case "with" -> {
                    Pipe p = pipe(t.subList(1, t.size()), false);
                    List<Node> body = list();
                    List<Node> otherwise = elseOf("with");
                    out.add(new With(p, body, otherwise));
                }
                case "break" -> {
                    only(t, "break");
                    out.add(new Break());
                }
                case "continue" -> {
                    only(t, "continue");
                    out.add(new Continue());
                }
                case "define", "template", "block" -> throw new TemplateRefusal("{{" + kw + "}} (named templates) is not translated");
                default -> out.add(new Action(pipe(t, false)));
            }
        }
        stop = null;   // the end of the input
        depth--;
        return List.copyOf(out);
    }

    private static void only(List<Tok> t, String kw) {
        if (t.size() != 1) {
            throw new TemplateRefusal("does not parse: unexpected arguments to " + kw);
        }
    }

    /** The rest of an if whose pipe is read: then, else / else if chain, end. */
    private If ifTail(Pipe p) {
        List<Node> then = list();
        Stop s = stop;
        if (s == null) {
            throw new TemplateRefusal("does not parse: unexpected EOF (an if without end)");
        }
        if (s.keyword().equals("end")) {
            return new If(p, then, List.of());
        }
        if (s.elseIf() != null) {
            return new If(p, then, List.of(ifTail(s.elseIf())));   // shares the chain's {{end}}
        }
        List<Node> otherwise = list();
        if (stop == null || !stop.keyword().equals("end")) {
            throw new TemplateRefusal("does not parse: an if's else without end");
        }
        return new If(p, then, otherwise);
    }

    /** After a range's or with's body: its else list (or none), then its end. */
    private List<Node> elseOf(String what) {
        Stop s = stop;
        if (s == null) {
            throw new TemplateRefusal("does not parse: unexpected EOF (a " + what + " without end)");
        }
        if (s.keyword().equals("end")) {
            return List.of();
        }
        if (s.elseIf() != null) {
            throw new TemplateRefusal("{{else if}} after a " + what + " is not translated");
        }
        List<Node> otherwise = list();
        if (stop == null || !stop.keyword().equals("end")) {
            throw new TemplateRefusal("does not parse: a " + what + "'s else without end");
        }
        return otherwise;
    }

    /** A pipeline from an action's tokens; {@code range} admits two declared variables. */
    private static Pipe pipe(List<Tok> t, boolean range) {
        int i = 0;
        List<String> vars = new ArrayList<>();
        boolean assign = false;
        // declarations: $x := / $x = / $i, $e :=
        int j = 0;
        List<String> names = new ArrayList<>();
        while (j < t.size() && t.get(j).kind == Kind.VARIABLE) {
            names.add(t.get(j).text);
            j++;
            if (j < t.size() && t.get(j).kind == Kind.COMMA && range && names.size() == 1) {
                j++;
                continue;
            }
            break;
        }
        if (!names.isEmpty() && j < t.size() && (t.get(j).kind == Kind.DECLARE || t.get(j).kind == Kind.ASSIGN)) {
            vars.addAll(names);
            assign = t.get(j).kind == Kind.ASSIGN;
            i = j + 1;
            if (names.size() > 1 && assign) {
                throw new TemplateRefusal("does not parse: two variables assigned with =");
            }
        }
        int[] at = {i};
        Pipe p = commands(t, at, vars, assign);
        if (at[0] != t.size()) {
            throw new TemplateRefusal("does not parse: unexpected " + t.get(at[0]).text);
        }
        return p;
    }

    private static Pipe commands(List<Tok> t, int[] at, List<String> vars, boolean assign) {
        List<Command> cmds = new ArrayList<>();
        while (true) {
            List<Operand> args = new ArrayList<>();
            while (at[0] < t.size() && t.get(at[0]).kind != Kind.PIPE && t.get(at[0]).kind != Kind.RPAREN) {
                args.add(operand(t, at));
            }
            if (args.isEmpty()) {
                throw new TemplateRefusal("does not parse: missing value for command");
            }
            cmds.add(new Command(List.copyOf(args)));
            if (at[0] < t.size() && t.get(at[0]).kind == Kind.PIPE) {
                at[0]++;
                continue;
            }
            return new Pipe(List.copyOf(vars), assign, List.copyOf(cmds));
        }
    }

    private static Operand operand(List<Tok> t, int[] at) {
        Tok k = t.get(at[0]++);
        Operand o = switch (k.kind) {
            case DOT -> new Dot();
            case FIELD -> new Field(List.of(k.text));
            case VARIABLE -> new Variable(k.text, List.of());
            case STRING -> new StringLit(k.text);
            case INT -> new IntLit(Long.parseLong(k.text.startsWith("+") ? k.text.substring(1) : k.text));
            case IDENT -> switch (k.text) {
                case "true" -> new BoolLit(true);
                case "false" -> new BoolLit(false);
                case "nil" -> new Nil();
                default -> new Identifier(k.text);
            };
            case LPAREN -> {
                Pipe inner = commands(t, at, List.of(), false);
                if (at[0] >= t.size() || t.get(at[0]).kind != Kind.RPAREN) {
                    throw new TemplateRefusal("does not parse: unclosed left paren");
                }
                at[0]++;
                yield new Parens(inner, List.of());
            }
            default -> throw new TemplateRefusal("does not parse: unexpected " + k.text + " in an operand");
        };
        List<String> chain = new ArrayList<>();
        while (at[0] < t.size() && t.get(at[0]).kind == Kind.FIELD && t.get(at[0]).adjacent) {
            chain.add(t.get(at[0]++).text);
        }
        if (chain.isEmpty()) {
            return o;
        }
        return switch (o) {
            case Field f -> new Field(concat(f.names(), chain));
            case Variable v -> new Variable(v.name(), concat(v.fields(), chain));
            case Parens p -> new Parens(p.pipe(), chain);
            case Dot _ -> throw new TemplateRefusal("does not parse: unexpected . after term");
            default -> throw new TemplateRefusal("fields of " + k.text + " are not translated");
        };
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return List.copyOf(out);
    }
}
