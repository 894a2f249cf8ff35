// render_template runs Ollama chat templates with Go's own text/template, on the data Ollama's
// template.Execute passes them (docs/FORMATS.md §7.9), as the oracle of the Jinja translation.
// Standard library only. Reads a JSON list of cases from stdin:
//
//	[{"template": "...", "messages": [{"role": "user", "content": "Hi"}, ...], "think": null|true|false}, ...]
//
// and writes a JSON list of {"text": "..."} or {"error": "..."}, one per case. The messages are Hugging
// Face's (role, content, thinking or reasoning_content, tool_name or name, tool_call_id), read into
// Ollama's api.Message fields.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"
	"text/template/parse"
)

type hfMessage struct {
	Role             string  `json:"role"`
	Content          *string `json:"content"`
	Thinking         string  `json:"thinking"`
	ReasoningContent string  `json:"reasoning_content"`
	ToolName         string  `json:"tool_name"`
	Name             string  `json:"name"`
	ToolCallID       string  `json:"tool_call_id"`
}

type testCase struct {
	Template string      `json:"template"`
	Messages []hfMessage `json:"messages"`
	Think    *bool       `json:"think"`
}

type result struct {
	Text  *string `json:"text,omitempty"`
	Error string  `json:"error,omitempty"`
}

// The message as Ollama's template sees it (template.templateMessage).
type message struct {
	Role       string
	Content    string
	Thinking   string
	Images     []string
	ToolCalls  []toolCall
	ToolName   string
	ToolCallID string
}

type toolCall struct {
	ID       string
	Function toolCallFunction
}

type toolCallFunction struct {
	Index     int
	Name      string
	Arguments map[string]any
}

// Ollama's extra template functions; the translation refuses them, the oracle only needs them to parse.
var funcs = template.FuncMap{
	"json":             func(v any) string { b, _ := json.Marshal(v); return string(b) },
	"currentDate":      func(args ...string) string { return "" },
	"yesterdayDate":    func(args ...string) string { return "" },
	"toTypeScriptType": func(v any) string { return "any" },
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "render_template: bad input:", err)
		os.Exit(2)
	}
	out := make([]result, len(cases))
	for i, c := range cases {
		s, err := render(c)
		if err != nil {
			out[i].Error = err.Error()
		} else {
			out[i].Text = &s
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		os.Exit(2)
	}
}

// render parses like Ollama's template.Parse and executes like template.Execute.
func render(c testCase) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	t, err := template.New("").Option("missingkey=zero").Funcs(funcs).Parse(c.Template)
	if err != nil {
		return "", err
	}
	vars := map[string]bool{}
	for _, n := range t.Tree.Root.Nodes {
		identifiers(n, vars)
	}
	if !vars["messages"] && !vars["response"] {
		// Ollama appends {{ .Response }} to a template that names neither
		t.Tree.Root.Nodes = append(t.Tree.Root.Nodes, &parse.ActionNode{NodeType: parse.NodeAction,
			Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{{NodeType: parse.NodeCommand,
				Args: []parse.Node{&parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}}}}}})
	}
	think := c.Think != nil && *c.Think
	isThinkSet := c.Think != nil
	system, msgs := collate(c.Messages)
	var b bytes.Buffer
	if vars["messages"] {
		var tools []any // no tool definitions: a nil list, as Ollama passes for a request without tools
		err = t.Execute(&b, map[string]any{"System": system, "Messages": msgs, "Tools": tools, "Response": "",
			"Think": think, "ThinkLevel": "", "IsThinkSet": isThinkSet})
		return b.String(), err
	}
	data := func(system, prompt, response string) map[string]any {
		return map[string]any{"System": system, "Prompt": prompt, "Response": response,
			"Think": think, "ThinkLevel": "", "IsThinkSet": isThinkSet}
	}
	var sys, prompt, response string
	run := func() error {
		err := t.Execute(&b, data(sys, prompt, response))
		sys, prompt, response = "", "", ""
		return err
	}
	for _, m := range msgs {
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				if err := run(); err != nil {
					return "", err
				}
			}
			sys = m.Content
		case "user":
			if response != "" {
				if err := run(); err != nil {
					return "", err
				}
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}
	// the last group runs with the template cut after its first .Response
	cut := false
	root := prune(t.Tree.Root.Copy(), &cut).(*parse.ListNode)
	last := template.Must(template.New("").AddParseTree("", &parse.Tree{Root: root}))
	err = last.Execute(&b, data(sys, prompt, response))
	return b.String(), err
}

// collate merges consecutive messages of one role (but tool results) after a blank line and joins the
// system messages' contents.
func collate(in []hfMessage) (string, []*message) {
	var system []string
	var out []*message
	for _, h := range in {
		content := ""
		if h.Content != nil {
			content = *h.Content
		}
		if h.Role == "system" {
			system = append(system, content)
		}
		if len(out) > 0 && out[len(out)-1].Role == h.Role && h.Role != "tool" {
			out[len(out)-1].Content += "\n\n" + content
			continue
		}
		m := &message{Role: h.Role, Content: content, Thinking: h.Thinking, ToolName: h.ToolName, ToolCallID: h.ToolCallID}
		if m.Thinking == "" {
			m.Thinking = h.ReasoningContent
		}
		if m.ToolName == "" {
			m.ToolName = h.Name
		}
		out = append(out, m)
	}
	return strings.Join(system, "\n\n"), out
}

// identifiers collects the lower-cased names of fields and variables, as Ollama's Template.Vars.
func identifiers(n parse.Node, into map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			identifiers(c, into)
		}
	case *parse.ActionNode:
		identifiers(n.Pipe, into)
	case *parse.IfNode:
		identifiers(&n.BranchNode, into)
	case *parse.RangeNode:
		identifiers(&n.BranchNode, into)
	case *parse.WithNode:
		identifiers(&n.BranchNode, into)
	case *parse.BranchNode:
		identifiers(n.Pipe, into)
		identifiers(n.List, into)
		if n.ElseList != nil {
			identifiers(n.ElseList, into)
		}
	case *parse.PipeNode:
		for _, c := range n.Cmds {
			for _, a := range c.Args {
				identifiers(a, into)
			}
		}
	case *parse.FieldNode:
		for _, s := range n.Ident {
			into[strings.ToLower(s)] = true
		}
	case *parse.VariableNode:
		for _, s := range n.Ident {
			into[strings.ToLower(s)] = true
		}
	}
}

// prune removes every node after the first field naming Response, walking as Ollama's deleteNode:
// lists, branch bodies and else lists, action pipelines and their arguments (not branch conditions).
func prune(n parse.Node, cut *bool) parse.Node {
	if f, ok := n.(*parse.FieldNode); ok {
		for _, s := range f.Ident {
			if s == "Response" {
				*cut = true // a Response field is kept, even after the cut
				return n
			}
		}
	}
	if *cut {
		return nil
	}
	switch t := n.(type) {
	case *parse.ListNode:
		var kept []parse.Node
		for _, c := range t.Nodes {
			if k := prune(c, cut); k != nil {
				kept = append(kept, k)
			}
		}
		t.Nodes = kept
	case *parse.IfNode:
		pruneBranch(&t.BranchNode, cut)
	case *parse.WithNode:
		pruneBranch(&t.BranchNode, cut)
	case *parse.RangeNode:
		pruneBranch(&t.BranchNode, cut)
	case *parse.ActionNode:
		p := prune(t.Pipe, cut)
		if p == nil {
			return nil
		}
		t.Pipe = p.(*parse.PipeNode)
	case *parse.PipeNode:
		var cmds []*parse.CommandNode
		for _, c := range t.Cmds {
			var args []parse.Node
			for _, a := range c.Args {
				if k := prune(a, cut); k != nil {
					args = append(args, k)
				}
			}
			if len(args) == 0 {
				return nil
			}
			c.Args = args
			cmds = append(cmds, c)
		}
		if len(cmds) == 0 {
			return nil
		}
		t.Cmds = cmds
	}
	return n
}

func pruneBranch(b *parse.BranchNode, cut *bool) {
	b.List = prune(b.List, cut).(*parse.ListNode)
	if b.ElseList != nil {
		b.ElseList = prune(b.ElseList, cut).(*parse.ListNode) // panics when cut, as Ollama's walk does
	}
}
