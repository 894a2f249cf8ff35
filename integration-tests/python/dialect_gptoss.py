"""gpt-oss (GGUF architecture gptoss) for make_dialect_fixture.py (docs/FORMATS.md §12).

The source model is transformers' own GptOssForCausalLM: hidden 64, 2 layers (one sliding-window, one full
attention layer, window 8, shorter than the checks' prompt plus continuation), 4 experts with 2 used, attention
biases and sinks, YaRN rope as gpt-oss ships it, and a tokenizer in gpt-oss's form: a byte-level BPE trained here with
the o200k pre-tokenizer regex of gpt-oss's tokenizer.json (llama.cpp's gpt-4o), no normalizer, gpt-oss's special
tokens after the BPE tokens (<|startoftext|>, <|endoftext|>, <|return|>, ...), no BOS added. Its ids are those of a
tiny vocabulary, so the ids Ollama's converter hard-codes (gpt-oss's own 199998, 199999, ...) fall outside it: llama.cpp
and the Hugging Face folder ignore them. config.json gets the fields
the published openai/gpt-oss config.json carries beside transformers' own (rope_theta, rope_scaling,
initial_context_length, experts_per_token), which Ollama's converter reads.

The dialect is written as Ollama's converter wrote the published gpt-oss files: convert/convert_gptoss.go before
commit 9db4bdbad of Ollama's repository (its parent, 9db4bdbad^), whose gptossModel.KV named the architecture
"gptoss" and whose Replacements() wrote attn_out, attn_sinks (no ".weight") and ffn_norm; Ollama's compatibility
layer (handle_gptoss in llama/compat/llama-ollama-compat.cpp) translates exactly that. Each step names the Go
function it follows. One deliberate difference: the published files hold the expert weights as MXFP4 (the
checkpoint's *_blocks / *_scales, repacked by mxfp4.WriteTo); the fixture's source is the unquantized model, so the
expert weights are written with the names and shapes of that MXFP4 branch but as F16 (no handler touches their
data). Nothing here uses modelfs code.
"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np

import hf_models as H

EXPERTS, USED, HEAD_DIM, WINDOW = 4, 2, 16, 8
ROPE_THETA, YARN_FACTOR, INITIAL_CONTEXT = 150000.0, 32.0, 4096
REF_PRE = "gpt-4o"   # the pre-tokenizer llama.cpp's converter names for gpt-oss's tokenizer


# the Split regex of gpt-oss's tokenizer.json (o200k), as llama.cpp's llama-vocab.cpp quotes it for gpt-4o
GPT4O_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
               r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
               r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|startoftext|>", "<|endoftext|>", "<|return|>", "<|constrain|>", "<|channel|>", "<|start|>", "<|end|>",
            "<|message|>", "<|call|>"]   # gpt-oss's (199998, 199999, 200002, 200003, 200005-200008, 200012 there)
# the stops of the published generation_config.json's eos_token_id, in its order ([200002, 199999, 200012] there)
STOPS = ["<|return|>", "<|endoftext|>", "<|call|>"]


def stop_ids(tok) -> list:
    """The generation_config.json eos_token_id a folder of gpt-oss must have for transformers' generate to stop where
    the harmony format ends a turn: STOPS looked up by text in the source tokenizer `tok` (those it has), then its eos
    when not among them."""
    ids = [tok.convert_tokens_to_ids(t) for t in STOPS if t in tok.get_vocab()]
    return ids + ([tok.eos_token_id] if tok.eos_token_id is not None and tok.eos_token_id not in ids else [])


def gptoss_tokenizer():
    """The gpt-oss-style tokenizer (a PreTrainedTokenizerFast): o200k's pre-tokenizer, no normalizer, no BOS added."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, Regex
    from transformers import PreTrainedTokenizerFast
    learned = json.loads(H.train_byte_level_bpe(GPT4O_REGEX, [], vocab_size=400).backend_tokenizer.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tok = Tokenizer(models.BPE(vocab=dict(learned["vocab"]), merges=merges, unk_token=None, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GPT4O_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|startoftext|>", eos_token="<|return|>",
                                   pad_token="<|endoftext|>", add_bos_token=False, add_eos_token=False, model_max_length=131072)


def make_gptoss(out_dir: str) -> None:
    """The tiny source model, saved with save_pretrained (F32), and its tokenizer."""
    import torch
    import transformers as T
    tok = gptoss_tokenizer()
    cfg = T.GptOssConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=HEAD_DIM, num_local_experts=EXPERTS,
                         num_experts_per_tok=USED, sliding_window=WINDOW, max_position_embeddings=int(YARN_FACTOR * INITIAL_CONTEXT),
                         rms_norm_eps=1e-5, tie_word_embeddings=False, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id,
                         rope_parameters={"rope_type": "yarn", "rope_theta": ROPE_THETA, "factor": YARN_FACTOR,
                                          "beta_fast": 32.0, "beta_slow": 1.0,
                                          "original_max_position_embeddings": INITIAL_CONTEXT, "truncate": False})
    torch.manual_seed(120)
    model = T.GptOssForCausalLM(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif name.endswith("sinks"):
                p.copy_(torch.randn_like(p))
            elif p.dim() == 1 or name.endswith("_bias"):
                p.normal_(0.0, 0.05)
            else:
                p.normal_(0.0, 0.08)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c.update(rope_theta=ROPE_THETA, initial_context_length=INITIAL_CONTEXT, experts_per_token=USED,
             rope_scaling={"rope_type": "yarn", "factor": YARN_FACTOR, "beta_fast": 32.0, "beta_slow": 1.0,
                           "original_max_position_embeddings": INITIAL_CONTEXT, "truncate": False})
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


# --- (b) Ollama's dialect: convert/convert_gptoss.go at 9db4bdbad^ -------------------------------------------

GPTOSS_REPLACEMENTS = [   # gptossModel.Replacements(), the "hf flavored model" branch (MaxPositionEmbeddings > 0)
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_out",
    "self_attn.sinks", "attn_sinks",
    "post_attention_layernorm", "ffn_norm",
    "mlp.router", "ffn_gate_inp",
    "mlp.experts.gate_up_proj_", "ffn_gate_up_exps.",
    "mlp.experts.down_proj_", "ffn_down_exps.",
    "model.norm", "output_norm",
]

OLLAMA_PRE = {   # parseTokenizer (convert/tokenizer.go): sha256 of the Split pre-tokenizers' regexes -> Pre
    "1ff7f41064896984db5d1bb6ff64fa4bc29007d08c1b439e505b7392777a319e": "qwen2",
}


def ollama_pre(hf_dir: str) -> str:
    """parseTokenizer's Pre: the hash of the Split regexes of tokenizer.json's pre_tokenizer, "default" when unknown."""
    pt = json.load(open(os.path.join(hf_dir, "tokenizer.json")))["pre_tokenizer"] or {}
    h = hashlib.sha256()
    for p in pt.get("pretokenizers", [pt]) if pt.get("type") == "Sequence" else [pt]:
        if p.get("type") == "Split" and "Regex" in p.get("pattern", {}):
            h.update(p["pattern"]["Regex"].encode())
    return OLLAMA_PRE.get(h.hexdigest(), "default")


def gptoss_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    rs = c.get("rope_scaling") or {}
    tok, _ = M.ref_tokenizer_kvs(ref_text, "gpt-oss")
    tok["tokenizer.ggml.pre"] = ollama_pre(hf_dir)        # ModelParameters.KV: t.Pre (KV() set no pre at 9db4bdbad^)
    w = gguf.GGUFWriter(out_path, "gptoss")               # gptossModel.KV: general.architecture = "gptoss"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    w.kv_data[0]["general.file_type"] = gguf.GGUFValue(4, gguf.GGUFValueType.UINT32)   # KV: file_type 4 (MXFP4)
    a = "gptoss."
    # gptossModel.KV at 9db4bdbad^, in its order; no expert_feed_forward_length, no rope.scaling.type
    w.add_uint32(a + "context_length", c.get("max_position_embeddings") or int(c["rope_scaling_factor"] * c["initial_context_length"]))
    w.add_uint32(a + "block_count", c["num_hidden_layers"])
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"])
    w.add_uint32(a + "expert_count", c.get("num_experts") or c["num_local_experts"])
    w.add_uint32(a + "expert_used_count", c["experts_per_token"])
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(a + "attention.head_count_kv", c["num_key_value_heads"])
    w.add_uint32(a + "attention.key_length", c["head_dim"])
    w.add_uint32(a + "attention.value_length", c["head_dim"])
    w.add_float32(a + "attention.layer_norm_rms_epsilon", c.get("rms_norm_eps") or 1e-5)
    w.add_uint32(a + "attention.sliding_window", c["sliding_window"])
    w.add_float32(a + "rope.freq_base", c["rope_theta"])
    w.add_float32(a + "rope.scaling.factor", c.get("rope_scaling_factor") or rs["factor"])
    w.add_uint32(a + "rope.scaling.original_context_length", c["initial_context_length"])
    # the token ids of gpt-oss's own 201088-entry vocabulary, written whatever the vocabulary (the KV map
    # overwrites ModelParameters.KV's values)
    V = gguf.GGUFValue
    kv = w.kv_data[0]
    kv["tokenizer.ggml.bos_token_id"] = V(199998, gguf.GGUFValueType.UINT32)   # <|startoftext|>
    kv["tokenizer.ggml.add_bos_token"] = V(False, gguf.GGUFValueType.BOOL)
    kv["tokenizer.ggml.eos_token_id"] = V(199999, gguf.GGUFValueType.UINT32)   # <|endoftext|>
    kv["tokenizer.ggml.eos_token_ids"] = V([199999, 200002, 200012], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    kv["tokenizer.ggml.add_eos_token"] = V(False, gguf.GGUFValueType.BOOL)

    sd = M.checkpoint_tensors(hf_dir)
    out = []
    for key in sorted(sd):
        name = M.go_replace(key, GPTOSS_REPLACEMENTS)    # parseTensors: the replacer
        t = sd[key].astype(np.float32)
        if name.endswith("gate_up_exps.bias"):            # Tensors: splitDim(t, 1) with strides 0::2 and 1::2
            out.append((name.replace("gate_up_exps", "gate_exps"), t[:, 0::2]))
            out.append((name.replace("gate_up_exps", "up_exps"), t[:, 1::2]))
        elif name.endswith(".mlp.experts.gate_up_proj"):  # Tensors, the mxfp4 branch of ffn_gate_up_exps: the
            t = np.swapaxes(t, 1, 2)                      # checkpoint's [E, 2I, H] rows (transformers holds
            base = name[: -len("mlp.experts.gate_up_proj")]   # [E, H, 2I]), sliced on dim 1 by 2
            out.append((base + "ffn_gate_exps.weight", t[:, 0::2]))
            out.append((base + "ffn_up_exps.weight", t[:, 1::2]))
        elif name.endswith(".mlp.experts.down_proj"):     # Tensors, the mxfp4 branch of ffn_down_exps: [E, H, I]
            out.append((name[: -len("mlp.experts.down_proj")] + "ffn_down_exps.weight", np.swapaxes(t, 1, 2)))
        else:
            out.append((name, t))
    written = []
    for name, data in out:
        M.add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    M.finish(w)
    return {"tensors": written}
