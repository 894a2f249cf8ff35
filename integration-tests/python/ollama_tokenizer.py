"""The tokenizer KVs Ollama's converter wrote before it adopted llama.cpp's tokenizer code, for the dialect fixtures
(docs/FORMATS.md §12): convert/tokenizer.go's parseTokenizer and convert/convert.go's ModelParameters.KV at commit
73b642e6f of Ollama's repository (the gemma3n and Llama 3 files in Ollama's library were written by converters of
that age). Read from the model folder's own files (tokenizer.json, tokenizer_config.json, generation_config.json);
the vocabulary itself is passed in (parseVocabulary's result). Nothing here uses modelfs code.
"""
from __future__ import annotations

import hashlib
import json
import os

SPECIAL_TOKEN_TYPES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")   # ModelParameters.specialTokenTypes()
KNOWN_PRE = {   # parseTokenizer's switch on the SHA-256 of the Split pre-tokenizers' regexes
    "d98f9631be1e9607a9848c26c1f9eac1aa9fc21ac6ba82a2fc0741af9780a48f": "llama-bpe",
    "03df5c5863ad70781dcfdef491ead25140f895fe8010964be0daefe27be32b02": "deepseek-llm",
    "21cde974d587f0d54dc8d56b183cc1e6239600172035c68fbd6d4b9f8da0576e": "deepseek-coder",
    "1ff7f41064896984db5d1bb6ff64fa4bc29007d08c1b439e505b7392777a319e": "qwen2",
}


def key(st: str) -> str:
    """SpecialVocabulary.Key(): the GGUF name of a special token type."""
    return {"unk": "unknown", "sep": "seperator", "pad": "padding"}.get(st, st)


def _load(hf_dir: str, name: str):
    p = os.path.join(hf_dir, name)
    return json.load(open(p)) if os.path.exists(p) else None


def write(w, hf_dir: str, model: str, tokens, scores, types) -> None:
    """ModelParameters.KV's tokenizer part into the GGUFWriter w: pre, model, tokens, scores, token types, merges
    (when tokenizer.json has any), the chat template of tokenizer_config.json, and per special token type found:
    add_<type>_token and <Key()>_token_id (and <Key()>_token_ids from a list in generation_config.json)."""
    import gguf
    tj = _load(hf_dir, "tokenizer.json") or {}
    added = {t["content"]: t["id"] for t in tj.get("added_tokens", [])}
    pre, merges = "default", []
    if tj:
        m = tj.get("model", {}).get("merges") or []
        merges = [" ".join(x) if isinstance(x, list) else x for x in m]
        h = hashlib.sha256()
        pts = (tj.get("pre_tokenizer") or {}).get("pretokenizers") or []
        for pt in pts:
            if pt.get("type") == "Split" and (pt.get("pattern") or {}).get("Regex"):
                h.update(pt["pattern"]["Regex"].encode())
        pre = KNOWN_PRE.get(h.hexdigest(), "default")
    w.add_string("tokenizer.ggml.pre", pre)
    w.add_string("tokenizer.ggml.model", model)
    w.add_array("tokenizer.ggml.tokens", list(tokens))
    w.add_array("tokenizer.ggml.scores", [float(s) for s in scores])
    w.add_key_value("tokenizer.ggml.token_type", [int(t) for t in types], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    if merges:
        w.add_array("tokenizer.ggml.merges", merges)
    tc = _load(hf_dir, "tokenizer_config.json") or {}
    tmpl = tc.get("chat_template")
    if isinstance(tmpl, list):
        tmpl = next((e["template"] for e in tmpl if e.get("name") == "default"), None)
    if tmpl:
        w.add_string("tokenizer.chat_template", tmpl)
    gc = _load(hf_dir, "generation_config.json") or {}
    for st in SPECIAL_TOKEN_TYPES:
        content = tc.get(st + "_token")
        if isinstance(content, dict):
            content = content.get("content")
        if not isinstance(content, str) or content not in added:
            continue   # only a special token tokenizer.json lists among its added tokens gets an id
        w.add_bool(f"tokenizer.ggml.add_{st}_token", bool(tc.get(f"add_{st}_token", False)))
        w.add_uint32(f"tokenizer.ggml.{key(st)}_token_id", added[content])
        if isinstance(gc.get(st + "_token_id"), list):
            w.add_key_value(f"tokenizer.ggml.{key(st)}_token_ids", [int(i) for i in gc[st + "_token_id"]],
                            gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
