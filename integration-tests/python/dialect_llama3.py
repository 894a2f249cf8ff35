"""Llama 3 with Ollama's incomplete tokenizer metadata (GGUF architecture llama) for make_dialect_fixture.py
(docs/FORMATS.md §12.4).

The source model is transformers' own LlamaForCausalLM (hidden 32, 2 layers, tied embeddings, saved in BF16 as
Meta's checkpoints are) with a Llama-3-style tokenizer: a byte-level BPE trained here with Llama 3's pre-tokenizer
regex, its vocabulary filled to 128000 entries with tokens no merge reaches, then Llama 3's 256 special tokens at
128000-128255 (<|begin_of_text|>, <|end_of_text|>, <|start_header_id|> 128006, <|end_header_id|>, <|eot_id|> 128009,
the reserved ones). config.json has eos_token_id 128001 and tokenizer_config.json eos_token <|eot_id|>, as
Meta-Llama-3-8B-Instruct first shipped them.

The dialect is written as Ollama's converter wrote Llama 3 files in May 2024: convert/llama.go, convert/safetensors.go,
convert/tokenizer.go and convert/mistral.go at commit 2d315ba9a of Ollama's repository: LlamaModel.WriteGGUF's keys
(no tokenizer.ggml.pre, eos_token_id from config.json: 128001, no chat template), LlamaModel.LoadVocab's vocabulary
(newTokenizer: the vocabulary and the added tokens by id; types special 3, added 4, else 1; the merges, no scores),
SafetensorFormat.GetLayerName's names, safetensorWriterTo's BF16 -> F32 (1-D) / F16 (2-D), and mistralLayerHandler's
repack of attn_q / attn_k. Upstream llama.cpp loads it with its default pre-tokenizer (and stops at <|end_of_text|>
only): it tokenizes digit runs otherwise than Llama 3's regex. Ollama's compatibility layer (handle_llama3_metadata in
llama/compat/llama-ollama-compat.cpp) names the pre-tokenizer llama-bpe and the end-of-turn ids.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

REF_PRE = "llama-bpe"
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
FIRST_SPECIAL = 128000
# Meta Llama 3's special tokens 128000-128255
SPECIALS = (["<|begin_of_text|>", "<|end_of_text|>"] + [f"<|reserved_special_token_{i}|>" for i in range(4)]
            + ["<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>"]
            + [f"<|reserved_special_token_{i}|>" for i in range(5, 251)])
CHAT_TEMPLATE = ("{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' "
                 "+ message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
                 "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}"
                 "{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")


def llama3_tokenizer():
    """The Llama-3-style tokenizer (a PreTrainedTokenizerFast)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, Regex
    from transformers import PreTrainedTokenizerFast
    learned = json.loads(H.train_byte_level_bpe(LLAMA3_REGEX, [], vocab_size=400).backend_tokenizer.to_str())["model"]
    vocab = dict(learned["vocab"])
    i = 0
    while len(vocab) < FIRST_SPECIAL:   # unreachable fillers: Llama 3's 128000 BPE ids, without training that many
        vocab.setdefault(f"~f{i}~", len(vocab))
        i += 1
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token=None, byte_fallback=False, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                                       special_tokens=[("<|begin_of_text|>", FIRST_SPECIAL)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                                   chat_template=CHAT_TEMPLATE, model_max_length=8192)


def make_llama3(out_dir: str) -> None:
    """The tiny source model (BF16), its tokenizer, config.json with eos 128001."""
    import torch
    import transformers as T
    import make_dialect_fixture as M
    tok = llama3_tokenizer()
    assert len(tok) == FIRST_SPECIAL + len(SPECIALS) and tok.convert_tokens_to_ids("<|eot_id|>") == 128009
    cfg = T.LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-5, tie_word_embeddings=True,
                        rope_theta=500000.0, bos_token_id=FIRST_SPECIAL, eos_token_id=FIRST_SPECIAL + 1)
    torch.manual_seed(128)
    model = T.LlamaForCausalLM(cfg)
    M.randomize(model)
    model = model.to(torch.bfloat16)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["rope_theta"] = 500000.0        # top level, as Meta's config.json has it (convert.go's Params reads it there)
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


# --- (b) Ollama's dialect: convert/llama.go and friends at 2d315ba9a -----------------------------------------

DIRECT = {"model.embed_tokens.weight": "token_embd.weight", "lm_head.weight": "output.weight",
          "model.norm.weight": "output_norm.weight"}   # SafetensorFormat.GetLayerName's directMap
LAYER = {"input_layernorm": "attn_norm", "mlp.down_proj": "ffn_down", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
         "post_attention_layernorm": "ffn_norm", "self_attn.k_proj": "attn_k", "self_attn.o_proj": "attn_output",
         "self_attn.q_proj": "attn_q", "self_attn.v_proj": "attn_v"}   # its tMap (model.layers.N.<x>.weight)


def layer_name(key: str) -> str:
    if key in DIRECT:
        return DIRECT[key]
    parts = key.split(".")
    return f"blk.{parts[2]}.{LAYER['.'.join(parts[3:-1])]}.weight"


def repack(t: np.ndarray, heads: int) -> np.ndarray:
    """mistral.go's repack: rows viewed as (heads, 2, rows/heads/2), the middle axes swapped."""
    return t.reshape(heads, 2, t.shape[0] // heads // 2, t.shape[1]).swapaxes(1, 2).reshape(t.shape)


def llama3_dialect(hf_dir: str, out_path: str) -> dict:
    import gguf
    import torch
    from safetensors.torch import load_file
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tj = json.load(open(os.path.join(hf_dir, "tokenizer.json")))
    # LoadVocab / newTokenizer: tokens by id up to the largest id of the vocabulary and the added tokens
    n = max(max(tj["model"]["vocab"].values()), max(t["id"] for t in tj["added_tokens"])) + 1
    tokens, types = [""] * n, [1] * n
    for k, i in tj["model"]["vocab"].items():
        tokens[i] = k
    for t in tj["added_tokens"]:
        tokens[t["id"]], types[t["id"]] = t["content"], 3 if t["special"] else 4
    merges = [" ".join(m) if isinstance(m, list) else m for m in tj["model"]["merges"]]
    w = gguf.GGUFWriter(out_path, "llama")
    # LlamaModel.WriteGGUF's KVs (the GGUF encoder writes them in its own order; none depends on it)
    w.add_string("general.name", os.path.basename(hf_dir))
    w.add_uint32("llama.vocab_size", len(tokens))
    w.add_uint32("llama.context_length", c["max_position_embeddings"])
    w.add_uint32("llama.embedding_length", c["hidden_size"])
    w.add_uint32("llama.block_count", c["num_hidden_layers"])
    w.add_uint32("llama.feed_forward_length", c["intermediate_size"])
    w.add_float32("llama.rope.freq_base", c["rope_theta"])
    w.add_uint32("llama.rope.dimension_count", c["hidden_size"] // c["num_attention_heads"])
    w.add_uint32("llama.attention.head_count", c["num_attention_heads"])
    w.add_uint32("llama.attention.head_count_kv", c["num_key_value_heads"])
    w.add_float32("llama.attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_uint32("general.file_type", 2)
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_key_value("tokenizer.ggml.token_type", types, gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    w.add_uint32("tokenizer.ggml.bos_token_id", c["bos_token_id"])
    w.add_uint32("tokenizer.ggml.eos_token_id", c["eos_token_id"])   # config.json's: <|end_of_text|>
    w.add_uint32("tokenizer.ggml.unknown_token_id", 0)
    w.add_array("tokenizer.ggml.merges", merges)
    sd = load_file(os.path.join(hf_dir, "model.safetensors"))
    written = []
    for key in sorted(sd):                               # readTensors: sorted keys
        name = layer_name(key)
        t = sd[key].to(torch.float32).numpy()           # bfloat16.DecodeFloat32
        if name.endswith(("attn_q.weight", "attn_k.weight")):   # GetTensors: mistralLayerHandler on attn_q / attn_k
            t = repack(t, c["num_attention_heads"] if "attn_q" in name else c["num_key_value_heads"])
        w.add_tensor(name, np.ascontiguousarray(t.astype(np.float32 if t.ndim == 1 else np.float16)))
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case llama3: the source model, llama.cpp's conversion (OUT/ref/llama3.gguf) and the dialect blob."""
    import make_dialect_fixture as M
    hf, ref, dialect = os.path.join(work, "llama3"), os.path.join(out, "ref", "llama3.gguf"), os.path.join(out, "ref", "llama3-dialect.gguf")
    make_llama3(hf)
    M.convert_reference(src, [(REF_PRE, hf, ref, False)])
    llama3_dialect(hf, dialect)
    with open(dialect, "rb") as f:
        blob = f.read()
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-llama3"] = {
        "handler": "llama3 tokenizer", "ref_gguf": ref, "dialect_file": dialect, "texts": H.SAMPLE_TEXTS, "mmproj": False,
        "blob": M.put_model(store, "dialect-llama3", blob, "llama"),
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        # upstream llama.cpp loads the raw file (default pre-tokenizer): it must tokenize some sample text otherwise
        "raw_loads": "mis-tokenizes",
        # KVs handle_llama3_metadata leaves as Ollama's converter wrote them, which llama.cpp reads alike: file type 2
        # (the tensors are F16; llama.cpp reads the tensors' own types), no quantization version, key/value lengths
        # (llama.cpp's default n_embd / n_head is the same), add_bos_token and add_sep_token (llama.cpp's llama-bpe
        # vocabulary adds BOS and no SEP by itself)
        "ref_differences": ["general.file_type", "general.quantization_version", "llama.attention.key_length",
                            "llama.attention.value_length", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_sep_token"]}


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-llama3-"))
