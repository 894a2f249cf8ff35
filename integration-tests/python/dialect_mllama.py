"""Llama 3.2 Vision (GGUF architecture mllama) for make_dialect_fixture.py (docs/FORMATS.md §12.7).

The source model is transformers' own MllamaForConditionalGeneration: a text model of hidden 64, 3 layers of which
layer 1 is a cross-attention layer (cross_attn.{q,k,v,o}_proj, per-head q/k norms, the two tanh gates), Llama 3.x rope
scaling as Meta ships it (factor 8, original context 8192), a tiny vision tower (2 local layers, 1 gated global layer,
2 tiles) and the projector; a Llama-3-style byte-level BPE (Llama 3's pre-tokenizer regex, ignore_merges, BOS added by
the post-processor) with Llama 3.2 Vision's special tokens and <|image|> as the last token, whose id is the text
vocab_size (the embedding has vocab_size + 8 rows, lm_head vocab_size, as in the published model). config.json's
text_config gets the top-level rope_theta / rope_scaling the published config.json carries (transformers 5 saves
rope_parameters only), which Ollama's converter reads; the checkpoint keeps the published layout
(language_model.model.*, language_model.lm_head, vision_model.*, multi_modal_projector.*), which transformers 5 saves.

Upstream llama.cpp has no mllama, so there is no reference conversion: the dialect is written as Ollama's converter
writes it today, convert/convert_mllama.go (with convert_llama.go, convert.go, tokenizer.go, reader.go and
fs/ggml/gguf.go) at commit fb30760996871fa9460115c753afd2c60d4ab0f7 of Ollama's repository; each step names the Go
function it follows. The oracle is the source model itself (dialect_hf_folder.oracle: its text-only logits, where
transformers skips the cross-attention layers) plus its logits with cross-attention states given (random vision
features, the cross-attention layers run): the folder's MllamaForCausalLM must give both. Nothing here uses modelfs
code.
"""
from __future__ import annotations

import json
import math
import os
import re

import numpy as np

import hf_models as H

# Llama 3.2 Vision's special tokens (ids 128000.. in the published tokenizer), here after the BPE tokens; <|image|> last
SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
            "<|finetune_right_pad_id|>"]
IMAGE = "<|image|>"
ROPE_THETA, ROPE_SCALING = 500000.0, {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 8192, "rope_type": "llama3"}
CROSS_LAYERS = [1]
VISION_TOKENS = 6   # rows of the random cross-attention states the second oracle feeds the text model


def mllama_tokenizer():
    """The Llama-3-style tokenizer (a PreTrainedTokenizerFast): BPE tokens, the specials, <|image|> last."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, Regex
    from transformers import PreTrainedTokenizerFast
    import dialect_llama3 as L3
    learned = json.loads(H.train_byte_level_bpe(L3.LLAMA3_REGEX, [], vocab_size=400).backend_tokenizer.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tok = Tokenizer(models.BPE(vocab=dict(learned["vocab"]), merges=merges, unk_token=None, byte_fallback=False, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(L3.LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS + [IMAGE]])
    bos = len(learned["vocab"])
    tok.post_processor = processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                                       special_tokens=[("<|begin_of_text|>", bos)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
                                   pad_token="<|finetune_right_pad_id|>", chat_template=L3.CHAT_TEMPLATE, model_max_length=8192)


def make_mllama(out_dir: str) -> None:
    """The tiny source model (F32), saved with save_pretrained in the published layout, and its tokenizer."""
    import torch
    import transformers as T
    import make_dialect_fixture as M
    tok = mllama_tokenizer()
    vocab = len(tok) - 1                       # the text vocabulary: every token but <|image|>
    assert tok.convert_tokens_to_ids(IMAGE) == vocab
    ids = {s: tok.convert_tokens_to_ids(s) for s in SPECIALS}
    vision = T.MllamaVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_global_layers=1, attention_heads=2,
                                  image_size=28, patch_size=14, max_num_tiles=2, intermediate_layers_indices=[0], vision_output_dim=64,
                                  supported_aspect_ratios=[[1, 1], [1, 2], [2, 1]])
    text = T.MllamaTextConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                              num_key_value_heads=2, cross_attention_layers=CROSS_LAYERS, max_position_embeddings=131072, rms_norm_eps=1e-5,
                              bos_token_id=ids["<|begin_of_text|>"], eos_token_id=ids["<|eot_id|>"],
                              pad_token_id=ids["<|finetune_right_pad_id|>"],
                              rope_parameters=dict(ROPE_SCALING, rope_theta=ROPE_THETA))
    cfg = T.MllamaConfig(vision_config=vision.to_dict(), text_config=text.to_dict(), image_token_index=vocab)
    torch.manual_seed(32)
    model = T.MllamaForConditionalGeneration(cfg)
    M.randomize(model)                         # the 1-D gates near 1: tanh(g) about 0.76, so the cross layer counts
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    assert "language_model.model.layers.1.cross_attn_attn_gate" in M.checkpoint_tensors(out_dir), "not the published layout"
    tok.save_pretrained(out_dir)
    p = os.path.join(out_dir, "tokenizer_config.json")
    tc = json.load(open(p))
    tc.update(bos_token="<|begin_of_text|>", eos_token="<|eot_id|>", pad_token="<|finetune_right_pad_id|>")   # as published
    with open(p, "w") as f:
        json.dump(tc, f, indent=1)
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["text_config"].update(rope_theta=ROPE_THETA, rope_scaling=ROPE_SCALING)
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


# --- Ollama's dialect: convert/convert_mllama.go at fb3076099 ------------------------------------------------------

def llama_replacements() -> list:
    """llamaModel.Replacements() (convert_llama.go): the head of dialect_llama4's list, which starts with them."""
    import dialect_llama4 as L4
    return L4.REPLACEMENTS[:L4.REPLACEMENTS.index("language_model.")]


MLLAMA_OWN_REPLACEMENTS = [   # mllamaModel.Replacements(): the text model's (llama_replacements()), then these
    "language_model.", "",
    "gate_attn", "attn_gate",
    "gate_ffn", "ffn_gate",
    "cross_attn.", "cross_attn_",
    "vision_model", "v",
    "class_embedding", "class_embd",
    "patch_embedding", "patch_embd",
    "gated_positional_embedding.tile_embedding", "tile_position_embd",
    "gated_positional_embedding.embedding", "position_embd.weight",
    "gated_positional_embedding", "position_embd",
    "embedding.weight", "weight",
    "pre_tile_positional_embedding", "pre_tile_position_embd",
    "post_tile_positional_embedding", "post_tile_position_embd",
    "layernorm_pre", "pre_ln",
    "layernorm_post", "post_ln",
    "global_transformer.layers", "global.blk",
    "transformer.layers", "blk",
    "mlp.fc1", "ffn_up",
    "mlp.fc2", "ffn_down",
    "multi_modal_projector", "mm.0",
]
F32_NAMES = ("v.position_embd.weight", "v.tile_position_embd.weight", "v.pre_tile_position_embd.weight",
             "v.post_tile_position_embd.weight")   # tensorBase.Kind()'s always-F32 names among mllama's


def kind(name: str, shape) -> str:
    """tensorBase.Kind() (convert/reader.go) of an F32 source: the listed names, biases and 1-D tensors F32, else F16."""
    return "F32" if name.endswith(".bias") or name in F32_NAMES or len(shape) == 1 else "F16"


def permute(t: np.ndarray, heads: int) -> np.ndarray:
    """llamaModel.repack / mllamaModel.repack on attn_q, attn_k: rows viewed as (heads, 2, rows/heads/2), axes 1 and 2
    swapped (tensor T(0, 2, 1, 3) then Transpose, which moves the data of that pending transposition)."""
    return t.reshape(heads, 2, t.shape[0] // heads // 2, *t.shape[1:]).swapaxes(1, 2).reshape(t.shape)


def rope_factors(text: dict) -> np.ndarray:
    """llamaModel.ropeFactors() in its own precision: lambda in float64, the smoothing in float32."""
    rs, dim = text["rope_scaling"], text["hidden_size"] // text["num_attention_heads"]
    f32 = np.float32
    factor, low, high = f32(rs.get("factor") or 8), f32(rs.get("low_freq_factor") or 1), f32(rs.get("high_freq_factor") or 4)
    original = f32(rs.get("original_max_position_embeddings") or 8192)
    lambda_low, lambda_high = original / low, original / high
    out = []
    for i in range(0, dim, 2):
        lam = 2 * math.pi * math.pow(text["rope_theta"], i / dim)
        if lam < float(lambda_high):
            out.append(f32(1))
        elif lam > float(lambda_low):
            out.append(factor)
        else:
            smooth = (original / f32(lam) - low) / (high - low)
            out.append(f32(1) / ((f32(1) - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def ollama_tokenizer_kvs(w, hf_dir: str) -> None:
    """ModelParameters.KV's tokenizer part as parseTokenizer (tokenizer.go) reads the folder: tokens by id (vocabulary and
    added tokens; parseVocabularyFromTokenizer), scores = ids, types control / user-defined / normal, merges, pre-tokenizer
    by the hash of the Split regexes, chat template, per special token type add_<type>_token only where
    tokenizer_config.json sets it (AddTokenSet), and <type>_token_id for a special that is an added token."""
    import ollama_tokenizer as OT
    tj = json.load(open(os.path.join(hf_dir, "tokenizer.json")))
    tokens = {v: (k, 1) for k, v in tj["model"]["vocab"].items()}
    for t in tj["added_tokens"]:
        tokens[t["id"]] = (t["content"], 3 if t["special"] else 4)
    ids = sorted(tokens)
    tc = json.load(open(os.path.join(hf_dir, "tokenizer_config.json")))
    OT.write(w, hf_dir, "gpt2", [tokens[i][0] for i in ids], [float(i) for i in ids], [tokens[i][1] for i in ids])
    for st in OT.SPECIAL_TOKEN_TYPES:   # OT.write follows 73b642e6f, which wrote add_<type>_token whatever the file said
        if f"add_{st}_token" not in tc:
            w.kv_data[0].pop(f"tokenizer.ggml.add_{st}_token", None)
    assert w.kv_data[0]["tokenizer.ggml.pre"].value == "llama-bpe", "not Llama 3's pre-tokenizer regex"


def mllama_dialect(hf_dir: str, out_path: str) -> dict:
    import gguf
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    text, vision = c["text_config"], c["vision_config"]
    w = gguf.GGUFWriter(out_path, "mllama")              # mllamaModel.KV: general.architecture = "mllama"
    # ModelParameters.KV: file type F16, quantization version, the vocabulary (parseTokenizer; the vocabulary is larger
    # than text_config.vocab_size by <|image|>: LoadModelMetadata keeps it, "vocabulary is larger than expected")
    w.add_uint32("general.file_type", 1)
    w.add_uint32("general.quantization_version", 2)
    ollama_tokenizer_kvs(w, hf_dir)
    a = "mllama."
    # llamaModel.KV of text_config, its llama.* keys renamed mllama.* (mllamaModel.KV)
    w.add_uint32(a + "vocab_size", text["vocab_size"])
    w.add_uint32(a + "block_count", text["num_hidden_layers"])
    w.add_uint32(a + "context_length", text["max_position_embeddings"])
    w.add_uint32(a + "embedding_length", text["hidden_size"])
    w.add_uint32(a + "feed_forward_length", text["intermediate_size"])
    w.add_uint32(a + "attention.head_count", text["num_attention_heads"])
    w.add_uint32(a + "rope.dimension_count", text["hidden_size"] // text["num_attention_heads"])
    w.add_float32(a + "rope.freq_base", text["rope_theta"])   # rope_scaling llama3: no KV (rope_freqs.weight below)
    w.add_uint32(a + "attention.head_count_kv", text["num_key_value_heads"])
    w.add_float32(a + "attention.layer_norm_rms_epsilon", text["rms_norm_eps"])
    # mllamaModel.KV's own keys
    i32 = gguf.GGUFValueType.INT32
    w.add_key_value(a + "attention.cross_attention_layers", [int(x) for x in text["cross_attention_layers"]], gguf.GGUFValueType.ARRAY, i32)
    w.add_uint32(a + "vision.block_count", vision["num_hidden_layers"])
    w.add_uint32(a + "vision.global.block_count", vision["num_global_layers"])
    w.add_key_value(a + "vision.intermediate_layers_indices", [int(x) for x in vision["intermediate_layers_indices"]],
                    gguf.GGUFValueType.ARRAY, i32)
    w.add_uint32(a + "vision.embedding_length", vision["hidden_size"])
    w.add_uint32(a + "vision.feed_forward_length", vision["intermediate_size"])
    w.add_uint32(a + "vision.attention.head_count", vision["attention_heads"])
    w.add_float32(a + "vision.attention.layer_norm_epsilon", vision["norm_eps"])
    w.add_uint32(a + "vision.image_size", vision["image_size"])
    w.add_uint32(a + "vision.patch_size", vision["patch_size"])
    w.add_uint32(a + "vision.max_num_tiles", vision["max_num_tiles"])
    w.add_uint32(a + "vision.num_channels", vision["num_channels"])
    # WriteGGUF writes the KVs sorted by key
    w.kv_data[0] = dict(sorted(w.kv_data[0].items()))

    sd = M.checkpoint_tensors(hf_dir)
    replacements = llama_replacements() + MLLAMA_OWN_REPLACEMENTS
    out = []
    for key in sorted(sd):
        name = M.go_replace(key, replacements)           # parseTensors: the replacer of Replacements()
        t = sd[key].astype(np.float32)
        if not name.startswith(("v.", "mm.")):            # mllamaModel.Tensors: text tensors go to llamaModel.Tensors,
            if name.endswith(("attn_q.weight", "attn_q_proj.weight")):   # which repacks attn_q/attn_k and, by suffix,
                t = permute(t, text["num_attention_heads"])              # the cross-attention q/k projections
            elif name.endswith(("attn_k.weight", "attn_k_proj.weight")):
                t = permute(t, text["num_key_value_heads"])
            out.append((name, t))                        # (the gates stay as stored: the model applies tanh)
        elif name == "v.position_embd.gate":             # cloned: 1 - tanh for the position embedding, tanh for the tiles
            out.append(("v.position_embd.gate", 1 - np.tanh(t)))
            out.append(("v.tile_position_embd.gate", np.tanh(t)))
        elif name in ("v.pre_tile_position_embd.gate", "v.post_tile_position_embd.gate") or name.endswith(("attn_gate", "ffn_gate")):
            out.append((name, np.tanh(t)))               # mllamaModel.repack: tanh of the vision gates
        elif name.endswith(("attn_q.weight", "attn_k.weight")):
            out.append((name, permute(t, vision["attention_heads"])))   # mllamaModel.repack: vision heads
        else:
            out.append((name, t))
    # llamaModel.Tensors: rope_freqs.weight (Kind 0: F32) first for llama3 rope scaling
    text_rs = text.get("rope_scaling") or {}
    if text_rs.get("rope_type") == "llama3":
        out.insert(0, ("rope_freqs.weight", rope_factors(text)))

    def block(n):   # WriteGGUF's order: by block number (Sscanf "blk.%d."; others last), then name
        m = re.match(r"blk\.(\d+)\.", n)
        return (int(m.group(1)) if m else math.inf, n)
    written = []
    for name, data in sorted(out, key=lambda x: block(x[0])):
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if kind(name, data.shape) == "F16" else np.float32)))
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def cross_oracle(hf_dir: str, out_prefix: str, ids) -> dict:
    """The source's logits with cross-attention states (random vision features, seeded; the text model's cross-attention
    layers run), from the same F16-rounded weights as dialect_hf_folder.oracle, and the folder's expected tensor names."""
    import torch
    import transformers as T
    model = T.MllamaForConditionalGeneration.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.copy_(p.half().float())
        states = torch.from_numpy(np.random.default_rng(5).normal(0, 1, (1, VISION_TOKENS, model.config.text_config.hidden_size))
                                  .astype(np.float32))
        lm = model.model.language_model
        hidden = lm(input_ids=torch.tensor([ids]), cross_attention_states=states).last_hidden_state
        logits = model.lm_head(hidden)[0].float().numpy()
    np.save(out_prefix + "-cross-states.npy", states.numpy())
    np.save(out_prefix + "-cross-logits.npy", logits)
    names = ["model." + k for k in lm.state_dict()] + ["lm_head.weight"]
    return {"hf_cross_states": out_prefix + "-cross-states.npy", "hf_cross_logits": out_prefix + "-cross-logits.npy",
            "hf_tensor_names": sorted(names)}


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case mllama: the source model and the dialect blob (no reference: upstream llama.cpp has no mllama); the entry goes
    to expected["no_upstream"] (check_dialect.py: the blob served as stored, the text model's Hugging Face folder)."""
    import dialect_hf_folder as F
    import make_dialect_fixture as M
    hf, dialect = os.path.join(work, "mllama"), os.path.join(out, "ref", "mllama-dialect.gguf")
    make_mllama(hf)
    info = mllama_dialect(hf, dialect)
    with open(dialect, "rb") as f:
        blob = f.read()
    prefix = os.path.join(out, "ref", "mllama")
    entry = {"blob": M.put_model(store, "dialect-mllama", blob, "mllama"), "dialect_file": dialect,
             "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))],
             **F.oracle("MllamaForConditionalGeneration", hf, prefix, "MllamaForCausalLM", n=40)}
    entry.update(cross_oracle(hf, prefix, entry["hf_ids"]))
    expected.setdefault("no_upstream", {})["dialect-mllama"] = entry


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-mllama-"))
