package dev.modelfs.template;

import java.util.List;

/**
 * The syntax tree of a Go {@code text/template} as {@link GoTemplateParser} reads it (docs/FORMATS.md §7.9):
 * the subset Ollama's chat templates use. Trim markers ({@code {{-}}, {@code -}}}) are already applied to
 * the {@link Text} nodes and comments dropped, as Go's lexer does.
 *
 * <p>Invariants: lists are immutable and never null; a {@link Pipe} has at least one command; a
 * {@link Command} at least one operand.
 */
public final class GoTemplate {
    private GoTemplate() {}

    /** A node of a template's body. */
    public sealed interface Node permits Text, Action, If, Range, With, Break, Continue {}

    /** Literal text, printed as is. */
    public record Text(String text) implements Node {}

    /** {@code {{ pipeline }}}: printed unless the pipeline declares or assigns a variable. */
    public record Action(Pipe pipe) implements Node {}

    /** {@code {{ if pipe }} then {{ else }} otherwise {{ end }}}; {@code else if} is an {@link If} alone in {@code otherwise}. */
    public record If(Pipe pipe, List<Node> then, List<Node> otherwise) implements Node {}

    /** {@code {{ range pipe }} body {{ else }} otherwise {{ end }}}; the pipe may declare {@code $e} or {@code $i, $e}. */
    public record Range(Pipe pipe, List<Node> body, List<Node> otherwise) implements Node {}

    /** {@code {{ with pipe }} body {{ else }} otherwise {{ end }}}: the body runs with dot set to a non-empty value. */
    public record With(Pipe pipe, List<Node> body, List<Node> otherwise) implements Node {}

    /** {@code {{ break }}} inside a range. */
    public record Break() implements Node {}

    /** {@code {{ continue }}} inside a range. */
    public record Continue() implements Node {}

    /**
     * A pipeline: optional variables ({@code vars}, declared with {@code :=} or assigned with {@code =} when
     * {@code assign}), then commands joined by {@code |}, each command's value passed as the last argument
     * of the next.
     */
    public record Pipe(List<String> vars, boolean assign, List<Command> commands) {}

    /** A command: a function name with arguments, or one operand. */
    public record Command(List<Operand> args) {}

    /** An operand of a command. */
    public sealed interface Operand permits Dot, Field, Variable, Identifier, StringLit, IntLit, BoolLit, Nil, Parens {}

    /** {@code .} */
    public record Dot() implements Operand {}

    /** {@code .A.B}: fields of dot. */
    public record Field(List<String> names) implements Operand {}

    /** {@code $name.A.B} ({@code name} without the {@code $}; {@code ""} is {@code $}, the data passed to the template). */
    public record Variable(String name, List<String> fields) implements Operand {}

    /** A function name ({@code eq}, {@code len}, {@code printf} ...). */
    public record Identifier(String name) implements Operand {}

    /** A string constant, unquoted. */
    public record StringLit(String value) implements Operand {}

    /** An integer constant. */
    public record IntLit(long value) implements Operand {}

    /** {@code true} or {@code false}. */
    public record BoolLit(boolean value) implements Operand {}

    /** {@code nil}. */
    public record Nil() implements Operand {}

    /** {@code (pipeline).A.B}. */
    public record Parens(Pipe pipe, List<String> fields) implements Operand {}
}
