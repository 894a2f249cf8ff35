package dev.modelfs.template;

import dev.modelfs.template.GoTemplate.Operand;
import dev.modelfs.template.GoTemplate.StringLit;
import dev.modelfs.template.JinjaTranslator.Type;
import dev.modelfs.template.JinjaTranslator.Val;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Go {@code text/template}'s functions as Jinja expressions (docs/FORMATS.md §7.9): {@code eq ne lt le
 * gt ge and or not len slice index printf print}. Each is translated only for the argument types whose
 * Go and Jinja results agree: comparisons of strings, numbers and booleans, {@code len}/{@code slice}/
 * {@code index} of lists (Go counts a string's bytes, Jinja its characters), {@code printf} with a
 * constant format of {@code %s %v %d %%}. Everything else is a {@link TemplateRefusal}.
 */
final class Functions {
    private static final Set<Type> BASIC = Set.of(Type.STR, Type.INT, Type.BOOL);
    private static final Set<Type> LISTS = Set.of(Type.MSGS, Type.TOOLS, Type.TOOLCALLS);

    private Functions() {}

    /** {@code name args...}; {@code firstOperand} is the command's first argument as written (for printf's format), or null. */
    static Val call(String name, List<Val> args, Operand firstOperand) {
        return switch (name) {
            case "eq" -> {
                atLeast(name, args, 2);
                List<String> ors = new ArrayList<>();
                for (Val b : args.subList(1, args.size())) {
                    ors.add(compare(name, args.getFirst(), "==", b));
                }
                yield new Val("(" + String.join(" or ", ors) + ")", Type.BOOL);
            }
            case "ne", "lt", "le", "gt", "ge" -> {
                exactly(name, args, 2);
                String op = switch (name) {
                    case "ne" -> "!=";
                    case "lt" -> "<";
                    case "le" -> "<=";
                    case "gt" -> ">";
                    default -> ">=";
                };
                if (!name.equals("ne") && (args.get(0).type() == Type.BOOL || args.get(1).type() == Type.BOOL)) {
                    throw new TemplateRefusal(name + " of booleans does not parse in Go");
                }
                yield new Val("(" + compare(name, args.get(0), op, args.get(1)) + ")", Type.BOOL);
            }
            case "and", "or" -> {
                atLeast(name, args, 1);
                List<String> parts = new ArrayList<>();
                Type t = args.getFirst().type();
                for (Val a : args) {
                    parts.add(truth(a));
                    if (a.type() != t) {
                        t = Type.ANY;
                    }
                }
                // Go's and/or return the deciding operand, as Python's do
                yield new Val("(" + String.join(" " + name + " ", parts) + ")", t);
            }
            case "not" -> {
                exactly(name, args, 1);
                yield new Val("(not " + truth(args.getFirst()) + ")", Type.BOOL);
            }
            case "len" -> {
                exactly(name, args, 1);
                Val a = args.getFirst();
                if (!LISTS.contains(a.type())) {
                    throw new TemplateRefusal("len of a " + JinjaTranslator.describe(a) + " is not translated (len of a list is)");
                }
                yield new Val("(" + a.expr() + "|length)", Type.INT);
            }
            case "slice" -> {
                if (args.size() < 2 || args.size() > 3) {
                    throw new TemplateRefusal("slice with " + args.size() + " arguments is not translated");
                }
                Val a = args.getFirst();
                if (!LISTS.contains(a.type())) {
                    throw new TemplateRefusal("slice of a " + JinjaTranslator.describe(a) + " is not translated (slice of a list is)");
                }
                integer(name, args.get(1));
                String to = "";
                if (args.size() == 3) {
                    integer(name, args.get(2));
                    to = args.get(2).expr();
                }
                yield new Val(a.expr() + "[" + args.get(1).expr() + ":" + to + "]", a.type());
            }
            case "index" -> {
                exactly(name, args, 2);
                Val a = args.getFirst();
                if (a.type() != Type.MSGS) {
                    throw new TemplateRefusal("index of a " + JinjaTranslator.describe(a) + " is not translated (index of .Messages is)");
                }
                integer(name, args.get(1));
                yield new Val(a.expr() + "[" + args.get(1).expr() + "]", Type.MSG);
            }
            case "printf" -> printf(args, firstOperand);
            case "print" -> {
                List<String> parts = new ArrayList<>();
                for (Val a : args) {
                    if (a.type() != Type.STR) {
                        throw new TemplateRefusal("print of a " + JinjaTranslator.describe(a) + " is not translated (of strings it is)");
                    }
                    parts.add(a.expr());
                }
                yield new Val(parts.isEmpty() ? "''" : "(" + String.join(" ~ ", parts) + ")", Type.STR);
            }
            case "json" -> throw new TemplateRefusal("the function json is not translated (Go's JSON encoding differs from Jinja's tojson)");
            case "currentDate", "yesterdayDate" -> throw new TemplateRefusal("the function " + name + " is not translated (the date the template renders at)");
            case "toTypeScriptType" -> throw new TemplateRefusal("the function toTypeScriptType (tool definitions) is not translated");
            case "html", "js", "urlquery", "call", "println" -> throw new TemplateRefusal("the function " + name + " is not translated");
            default -> throw new TemplateRefusal("does not parse: function \"" + name + "\" not defined");
        };
    }

    private static String compare(String fn, Val a, String op, Val b) {
        if (!BASIC.contains(a.type()) || !BASIC.contains(b.type())) {
            throw new TemplateRefusal(fn + " of a " + JinjaTranslator.describe(a) + " and a " + JinjaTranslator.describe(b)
                    + " is not translated (of strings, numbers and booleans it is)");
        }
        if (a.type() != b.type()) {
            throw new TemplateRefusal(fn + " of a " + JinjaTranslator.describe(a) + " and a " + JinjaTranslator.describe(b)
                    + " fails in Go (incompatible types for comparison)");
        }
        return a.expr() + " " + op + " " + b.expr();
    }

    /** A value as a Jinja truth test (Go's: empty strings and lists, zero, false and missing values are false). */
    private static String truth(Val v) {
        return switch (v.type()) {
            case ROOT -> throw new TemplateRefusal("the template's data (.) as an operand is not translated");
            case MSG -> v.expr();          // a non-empty dict: true, as Go's non-nil message pointer
            case NOVALUE -> "none";
            default -> v.expr();
        };
    }

    private static void integer(String fn, Val v) {
        if (v.type() != Type.INT) {
            throw new TemplateRefusal(fn + " with a " + JinjaTranslator.describe(v) + " index is not translated");
        }
    }

    private static Val printf(List<Val> args, Operand format) {
        if (!(format instanceof StringLit f)) {
            throw new TemplateRefusal("printf without a constant format is not translated");
        }
        String s = f.value();
        List<String> parts = new ArrayList<>();
        StringBuilder lit = new StringBuilder();
        int arg = 1;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '%') {
                lit.append(c);
                continue;
            }
            if (i + 1 >= s.length()) {
                throw new TemplateRefusal("printf format ending in % is not translated");
            }
            char verb = s.charAt(++i);
            if (verb == '%') {
                lit.append('%');
                continue;
            }
            if (verb != 's' && verb != 'v' && verb != 'd') {
                throw new TemplateRefusal("printf verb %" + verb + " is not translated (%s, %v, %d are)");
            }
            if (arg >= args.size()) {
                throw new TemplateRefusal("printf with fewer arguments than verbs is not translated");
            }
            Val a = args.get(arg++);
            if (!lit.isEmpty()) {
                parts.add(JinjaTranslator.str(lit.toString()));
                lit.setLength(0);
            }
            parts.add(switch (a.type()) {
                case STR -> verb == 'd' ? badVerb(verb, a) : a.expr();
                case INT -> verb == 's' ? badVerb(verb, a) : "(" + a.expr() + "|string)";
                case BOOL -> verb == 'v' ? "('true' if " + a.expr() + " else 'false')" : badVerb(verb, a);
                default -> badVerb(verb, a);
            });
        }
        if (arg != args.size()) {
            throw new TemplateRefusal("printf with more arguments than verbs is not translated");
        }
        if (!lit.isEmpty() || parts.isEmpty()) {
            parts.add(JinjaTranslator.str(lit.toString()));
        }
        return new Val("(" + String.join(" ~ ", parts) + ")", Type.STR);
    }

    private static String badVerb(char verb, Val a) {
        throw new TemplateRefusal("printf %" + verb + " of a " + JinjaTranslator.describe(a) + " is not translated");
    }

    private static void atLeast(String fn, List<Val> args, int n) {
        if (args.size() < n) {
            throw new TemplateRefusal("does not parse: wrong number of args for " + fn);
        }
    }

    private static void exactly(String fn, List<Val> args, int n) {
        if (args.size() != n) {
            throw new TemplateRefusal("does not parse: wrong number of args for " + fn);
        }
    }
}
