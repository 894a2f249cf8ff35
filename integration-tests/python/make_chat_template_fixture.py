#!/usr/bin/env python3
"""GGUF models with Ollama template layers, for the chat templates of their Hugging Face folders (issue 34).

    make_chat_template_fixture.py OUT

writes
    OUT/store/           the Ollama store: one tiny llama GGUF (a SentencePiece vocabulary, no
                         tokenizer.chat_template) shared by every model `chat/<name>`, each with its own
                         template layer: every template of chat_templates_corpus.json (the project's own
                         templates, one per chat format of Ollama's library, written from each format's
                         public description, not copied), the templates of OWN below (the legacy
                         .System/.Prompt/.Response form, a prompt layer, Go constructs the library does not
                         use, our own templates with tools in the Llama 3.1 and Qwen 2.5 styles in
                         chat_templates/, refusals), and one
                         GGUF that carries its own tokenizer.chat_template beside a template layer
    OUT/chat_templates.json
                         per model dir: the Go template, whether tokenizer_config.json must carry a
                         chat_template, the GGUF's own template (which must win) or the words the refusal
                         must contain (check_chat_templates.py)

Which templates must be refused is decided here, from what each uses (.Tools definitions, json ...),
never from modelfs.
"""
from __future__ import annotations

import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixture as M  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# corpus templates that use what is not translated, and the words of the reason (none today)
CORPUS_REFUSED: dict[str, str] = {}

# templates written for this test: (name, media type, template, refusal words or None)
OWN = [
    ("legacy-chatml", M.MT_TEMPLATE,
     "{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}{{ if .Prompt }}<|im_start|>user\n"
     "{{ .Prompt }}<|im_end|>\n{{ end }}<|im_start|>assistant\n{{ .Response }}<|im_end|>\n", None),
    ("legacy-no-response", M.MT_TEMPLATE,
     "[INST] {{ if .System }}<<SYS>>{{ .System }}<</SYS>>\n\n{{ end }}{{ .Prompt }} [/INST]", None),
    ("legacy-prompt-layer", M.MT_PROMPT, "{{ .Prompt }}", None),
    ("legacy-values", M.MT_TEMPLATE,
     "{{- if .System }}### System: {{ .System }}{{ end }}\n### User: {{ .Prompt }}\n### Assistant: {{ .Response }}"
     "{{ if .Response }}</s>{{ end }} [{{ .Think }}|{{ .Nope }}|{{ 42 | printf \"%d\" }}]\n", None),
    ("go-constructs", M.MT_TEMPLATE,
     "{{- /* a comment */ -}}\n{{- $n := len .Messages }}\n"
     "{{- range $i, $m := .Messages }}\n{{- if and (eq $i 0) $.System }}<sys>{{ $.System }}</sys>{{ end }}\n"
     "{{- with .Content }}[{{ $i }}/{{ $n }} {{ $m.Role }}] {{ . }}{{ else }}(empty){{ end }}\n"
     "{{- if eq .Role \"tool\" }}{{ break }}{{ end }}\n"
     "{{- if gt (len (slice $.Messages $i)) 1 }} | {{ else }} <end>{{ end }}\n{{- else }}no messages{{ end }}\n"
     "{{- with $x := index .Messages 0 }} first={{ $x.Role }}{{ end }} think={{ .Think }} "
     "{{ printf \"%s-%v-%d%%\" \"a\" true 3 }} {{ not .Tools }} {{ or .System \"no system\" }} {% raw %}{#\r\n", None),
    # our own templates with tools: Llama 3.1 style (ipython results, JSON calls), Qwen 2.5 style (<tool_call>, with a legacy branch)
    ("tools-llama31-form", M.MT_TEMPLATE, open(os.path.join(HERE, "chat_templates", "tools-llama31-form.gotmpl")).read(), None),
    ("tools-qwen25-form", M.MT_TEMPLATE, open(os.path.join(HERE, "chat_templates", "tools-qwen25-form.gotmpl")).read(), None),
    ("refused-json", M.MT_TEMPLATE, "{{ range .Messages }}{{ .Role }}: {{ json .Content }}\n{{ end }}", "the function json"),
    ("refused-define", M.MT_TEMPLATE, "{{ define \"turn\" }}{{ .Content }}{{ end }}{{ range .Messages }}{{ template \"turn\" . }}{{ end }}",
     "named templates"),
]

GGUF_OWN_TEMPLATE = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"


def tiny_gguf(fx, extra_kvs=()):
    rng = np.random.default_rng(3434)
    types = dict.fromkeys(["token_embd", "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm",
                           "ffn_gate", "ffn_up", "ffn_down", "output_norm", "output"], "F32")
    return M.llama_gguf(fx, rng, "chat-template-test", 64, 64, 300, 2, 2, types, file_type=0, extra_kvs=extra_kvs)


def main(argv):
    if len(argv) != 2:
        print("usage: make_chat_template_fixture.py OUT", file=sys.stderr)
        return 2
    out = argv[1]
    with open(os.path.join(HERE, "chat_templates_corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)["templates"]
    fx = M.Fixture(out)
    model = tiny_gguf(fx)
    cases = {}

    def add(name, media_type, template, refused, gguf=model, gguf_template=None):
        m = fx.model("registry.ollama.ai", "chat", name, "latest", f"chat template {name}")
        m.set_config(M.gguf_config("llama", "100K", "F32"))
        m.layer(M.MT_MODEL, gguf)
        m.layer(media_type, template.encode("utf-8"))
        m.finish()
        cases[m.dir] = {"template": template, "translated": refused is None and gguf_template is None,
                        "refusal": refused, "gguf_chat_template": gguf_template,
                        # a template that reads tool definitions or tool calls must refuse them (they are not translated)
                        "reads_tools": bool(re.search(r"\.Tools\b", template)),
                        "reads_tool_calls": bool(re.search(r"\.ToolCalls\b", template))}

    for name, template in sorted(corpus.items()):
        add(name, M.MT_TEMPLATE, template, CORPUS_REFUSED.get(name))
    for name, media_type, template, refused in OWN:
        add(name, media_type, template, refused)
    own = tiny_gguf(fx, [("tokenizer.chat_template", "STRING", GGUF_OWN_TEMPLATE)])
    add("gguf-template", M.MT_TEMPLATE, corpus["chatml"], None, gguf=own, gguf_template=GGUF_OWN_TEMPLATE)
    with open(os.path.join(out, "chat_templates.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, indent=1, ensure_ascii=False)
    print(f"chat template fixture written to {out}: {len(cases)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
