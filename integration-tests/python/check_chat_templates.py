#!/usr/bin/env python3
"""Chat templates of Hugging Face folders on a mount, against Go's own text/template (issue 34).

    check_chat_templates.py MOUNT OUT RENDERER

For every model of OUT/chat_templates.json (make_chat_template_fixture.py): reads tokenizer_config.json
through the mount; a template the fixture says must be translated is loaded with
AutoTokenizer.from_pretrained(model dir) and rendered with tokenizer.apply_chat_template(messages,
tokenize=False, add_generation_prompt=False and True) on the conversations below, and must equal
what RENDERER (integration-tests/go/render_template.go, built once by the test: Go's text/template on
the data Ollama's template.Execute passes) renders from the model's ollama/template for the same
messages. A GGUF with its own tokenizer.chat_template keeps it; a template the fixture says cannot be
translated has no chat_template. Tools and tool calls are not translated: a template that reads them
must raise when they are passed, one that does not must render as without them. enable_thinking=True
must render as Go with .Think and .IsThinkSet true. Nothing here uses modelfs code.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

S, U, A, T = "system", "user", "assistant", "tool"


def msg(role, content):
    return {"role": role, "content": content}


CONVERSATIONS = [
    # one turn with a system prompt
    [msg(S, "You are terse."), msg(U, "Hi <b>there</b> & 42")],
    # several turns with a system prompt
    [msg(S, "Be kind.\nAlways."), msg(U, "Hello"), msg(A, "Hi! How can I help?"), msg(U, "Tell me a joke\n")],
    # several turns without one
    [msg(U, "one"), msg(A, "two"), msg(U, "three")],
    # ending with the assistant (Ollama continues its message)
    [msg(S, "S"), msg(U, "Q"), msg(A, "A")],
    # two system messages, consecutive user messages (Ollama merges them), Jinja-looking text, accents, emoji
    [msg(S, "first rule"), msg(S, "second rule"), msg(U, "part 1"), msg(U, "part 2 café 🦙"), msg(A, "ok"),
     msg(U, "{{ not jinja }} {% raw %} {# x #}\ttab")],
    # a tool result between turns
    [msg(U, "what is 6*7?"), msg(A, "Let me compute."), msg(T, "42"), msg(U, "thanks")],
    # a single user message
    [msg(U, "only")],
]

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
                                         "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                        "required": ["city"]}}}
# an assistant message with a tool call (Hugging Face's form)
WITH_TOOL_CALL = [msg(U, "weather in Paris?"),
                  {"role": A, "content": "", "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                                                         "arguments": {"city": "Paris"}}}]},
                  msg(T, "sunny"), msg(U, "thanks")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mount")
    ap.add_argument("out")
    ap.add_argument("renderer")
    a = ap.parse_args()
    from transformers import AutoTokenizer
    r = L.Report("check_chat_templates")
    with open(os.path.join(a.out, "chat_templates.json"), encoding="utf-8") as f:
        cases = json.load(f)
    translated = [d for d, c in cases.items() if c["translated"]]
    r.ok(len(translated) >= 30, f"{len(translated)} translated templates in the fixture, expected at least 30")

    go_cases, where = [], []
    rendered = {}
    for d, c in sorted(cases.items()):
        mdir = os.path.join(a.mount, d)
        with open(os.path.join(mdir, "tokenizer_config.json"), encoding="utf-8") as f:
            tc = json.load(f)
        with open(os.path.join(mdir, "ollama", "template"), encoding="utf-8", newline="") as f:
            r.ok(f.read() == c["template"], f"{d}: ollama/template is not the template layer")
        if c["gguf_chat_template"] is not None:
            r.ok(tc.get("chat_template") == c["gguf_chat_template"], f"{d}: the GGUF's own chat template is not kept")
            continue
        if c["refusal"] is not None:
            r.ok("chat_template" not in tc, f"{d}: a template that cannot be translated has a chat_template")
            continue
        if not r.ok(isinstance(tc.get("chat_template"), str), f"{d}: tokenizer_config.json has no chat_template"):
            continue
        try:
            tok = AutoTokenizer.from_pretrained(mdir)
        except Exception as e:  # noqa: BLE001
            r.fail(f"{d}: AutoTokenizer.from_pretrained failed: {type(e).__name__}: {e}")
            continue
        for i, conv in enumerate(CONVERSATIONS):
            for agp in (False, True):
                try:
                    rendered[(d, i, agp)] = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=agp)
                except Exception as e:  # noqa: BLE001
                    r.fail(f"{d}: apply_chat_template on conversation {i} failed: {type(e).__name__}: {e}")
            go_cases.append({"template": c["template"], "messages": conv})
            where.append((d, i))
        # tools and tool calls are not translated: a template that reads them refuses them, one that does
        # not renders as without them (Go's renderer gets neither)
        extra = {"tools": lambda: tok.apply_chat_template(CONVERSATIONS[1], tools=[TOOL], tokenize=False,
                                                          add_generation_prompt=True),
                 "tool_calls": lambda: tok.apply_chat_template(WITH_TOOL_CALL, tokenize=False, add_generation_prompt=True),
                 # Ollama's .Think and .IsThinkSet from the enable_thinking argument
                 "think": lambda: tok.apply_chat_template(CONVERSATIONS[1], tokenize=False, add_generation_prompt=True,
                                                          enable_thinking=True)}
        for what, call in extra.items():
            refuses = {"tools": c["reads_tools"], "tool_calls": c["reads_tool_calls"], "think": False}[what]
            try:
                got = call()
            except Exception as e:  # noqa: BLE001
                r.ok(refuses and "translated from an Ollama template" in str(e),
                     f"{d}: apply_chat_template with {what} failed: {type(e).__name__}: {e}")
                continue
            if r.ok(not refuses, f"{d}: the template reads {what} but rendered them: {got!r}"):
                rendered[(d, what, True)] = got
                go_cases.append({"template": c["template"], "think": True if what == "think" else None,
                                 "messages": WITH_TOOL_CALL if what == "tool_calls" else CONVERSATIONS[1]})
                where.append((d, what))

    # one run of Go's renderer for every case
    p = subprocess.run([a.renderer], input=json.dumps(go_cases), capture_output=True, text=True, timeout=300)
    if not r.ok(p.returncode == 0, f"the Go renderer failed: {p.stderr}"):
        return r.finish()
    go = json.loads(p.stdout)
    r.ok(len(go) == len(go_cases), f"the Go renderer answered {len(go)} of {len(go_cases)} cases")
    for (d, i), g in zip(where, go):
        if not r.ok("text" in g, f"{d}: Go's text/template failed on conversation {i}: {g.get('error')}"):
            continue
        # the oracle is not vacuous: every prompt reaches Go's output (a template drops none)
        # (a legacy template loses a prompt answered by an empty response: the last one only for the tool call)
        for m in (CONVERSATIONS[1] if i in ("tools", "think") else WITH_TOOL_CALL[-1:] if i == "tool_calls" else CONVERSATIONS[i]):
            if m["role"] == U:
                r.ok(m["content"].strip() in g["text"] or d.endswith("go-constructs"),
                     f"{d}: Go's rendering of conversation {i} lacks {m['content']!r}")
        for agp in ((True,) if isinstance(i, str) else (False, True)):
            got = rendered.get((d, i, agp))
            if got is not None:
                r.ok(got == g["text"], f"{d}: conversation {i}, add_generation_prompt={agp}: apply_chat_template gives\n"
                                       f"  {got!r}\nGo gives\n  {g['text']!r}")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
