"""Gemma 3n (GGUF architecture gemma3n) for make_dialect_fixture.py (docs/FORMATS.md §12.6).

The source model is transformers' own Gemma3nForCausalLM (the text model of Gemma 3n: AltUp with 4 inputs, LAuReL,
per-layer inputs, activation sparsity on both layers (llama.cpp applies it to the first 10), no KV-shared layers: llama.cpp shares from layer 20 on):
hidden 64, 2 layers (sliding, then global), per-layer input width 256 and LAuReL rank 64 (the values llama.cpp's
gemma3n hard-codes), gemma_tokenizer's SentencePiece tokenizer (560 pieces) as the text vocabulary
(vocab_size_per_layer_input) and 16 more rows in embed_tokens (vocab_size 576: the multimodal tokens of the
published model's 262400, which a text prompt never reaches: their rows are zero). It is saved in the published
checkpoints' layout (Gemma3nForConditionalGeneration: model.language_model.*, text_config in config.json), which
both converters read.

The dialect is written as Ollama's converter wrote the published gemma3n files: convert/convert_gemma3n.go at
commit 73b642e6f of Ollama's repository ("add new gemma model"), with the SentencePiece vocabulary of
convert/tokenizer_spm.go (parseSentencePiece) padded to vocab_size by ModelParameters.KV's caller (convert.go:
"[PAD%d]", score -1, user-defined): the tokenizer arrays and token_embd carry the 576 tokens, per_layer_token_embd
the 560 of the text vocabulary, which llama.cpp refuses. Ollama's compatibility layer (handle_gemma3n in
llama/compat/llama-ollama-compat.cpp) cuts token_embd and the vocabulary to the per-layer rows.
The reference is llama.cpp's conversion, which pads per_layer_token_embd with zero rows to 576 instead: the
translation equals its first 560 rows and tokens ("vocab_cut" in dialect_expected.json).
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H
import ollama_tokenizer

EXTRA = 16          # rows of embed_tokens beyond the text vocabulary (262400 - 262144 in the published model)
LAYERS = 2


def make_gemma3n(out_dir: str) -> None:
    """The tiny source model (F32) in the published layout, and its tokenizer (tokenizer.model kept)."""
    import torch
    import transformers as T
    from safetensors.torch import load_file, save_file
    tok = H.train_tokenizer("gemma3")
    v = len(tok)
    cfg = T.Gemma3nTextConfig(
        vocab_size=v + EXTRA, vocab_size_per_layer_input=v, hidden_size=64, hidden_size_per_layer_input=256,
        intermediate_size=128, num_hidden_layers=LAYERS, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
        max_position_embeddings=512, sliding_window=8, layer_types=["sliding_attention", "full_attention"],
        num_kv_shared_layers=0, laurel_rank=64, altup_num_inputs=4, activation_sparsity_pattern=[0.95, 0.95],
        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                         "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}},
        rms_norm_eps=1e-6, tie_word_embeddings=True, final_logit_softcapping=30.0,
        eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(33)
    model = T.Gemma3nForCausalLM(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.1)
            if name.endswith("embed_tokens.weight"):
                p[v:] = 0.0   # the multimodal tokens: never the greedy choice after a text prompt
            p.copy_(p.half().float())   # F16-exact: the F16 files and the F32 reference hold the same values
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    with open(os.path.join(out_dir, "tokenizer.model"), "wb") as f:
        f.write(tok.spm_model_bytes)
    p = os.path.join(out_dir, "tokenizer_config.json")
    tc = json.load(open(p))
    tc.update(add_bos_token=True, add_eos_token=False)   # as Gemma 3n's tokenizer_config.json has them
    with open(p, "w") as f:
        json.dump(tc, f, indent=1)
    p = os.path.join(out_dir, "model.safetensors")
    sd = load_file(p)
    save_file({("model.language_model." + k[len("model."):] if k.startswith("model.") else k): t for k, t in sd.items()}, p,
              metadata={"format": "pt"})
    c = json.load(open(os.path.join(out_dir, "config.json")))
    text = {k: val for k, val in c.items() if k not in ("architectures", "transformers_version", "dtype")}
    text["model_type"] = "gemma3n_text"
    # the published config.json: the text model under text_config, with the top-level rope fields Gemma 3n ships
    text.update(rope_theta=1000000.0, rope_local_base_freq=10000.0)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump({"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n", "text_config": text,
                   "vision_config": {}, "audio_config": {}, "dtype": c.get("dtype", "float32")}, f, indent=1)


# --- (b) Ollama's dialect: convert/convert_gemma3n.go at 73b642e6f ------------------------------------------

GEMMA3N_REPLACEMENTS = [   # gemma3nModel.Replacements(), in Go's order
    "model.language_model.embed_tokens_per_layer", "per_layer_token_embd",
    "model.language_model.embed_tokens", "token_embd",
    "model.language_model.per_layer_model_projection", "per_layer_model_proj",
    "model.language_model.per_layer_projection_norm", "per_layer_proj_norm",
    "model.language_model.altup_projections", "altup_proj",
    "model.language_model.altup_unembed_projections", "altup_unembd_proj",
    "model.language_model.norm", "output_norm",
    "model.language_model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.k_proj", "attn_k",
    "self_attn.k_norm", "attn_k_norm",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "post_attention_layernorm", "post_attention_norm",
    "pre_feedforward_layernorm", "ffn_norm",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "mlp.down_proj", "ffn_down",
    "post_feedforward_layernorm", "post_ffw_norm",
    "per_layer_input_gate", "inp_gate",
    "per_layer_projection", "proj",
    "post_per_layer_input_norm", "post_norm",
    "altup.", "altup_",
    "modality_router", "router",
    "prediction_coefs", "predict_coef",
    "correction_coefs", "correct_coef",
    "correct_output_scale", "correct_scale.weight",
    "laurel.", "laurel_",
    "linear_left", "l",
    "linear_right", "r",
    "post_laurel_norm", "post_norm",
]


def spm_vocabulary(hf_dir: str):
    """parseSentencePiece (convert/tokenizer_spm.go): every piece of tokenizer.model with its score; types UNKNOWN,
    CONTROL, UNUSED and BYTE kept, the others NORMAL except <start_of_turn>/<end_of_turn> and the additional special
    tokens of special_tokens_map.json (CONTROL); no added_tokens.json here."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(hf_dir, "tokenizer.model"))
    ast = set()
    p = os.path.join(hf_dir, "special_tokens_map.json")
    if os.path.exists(p):
        for t in json.load(open(p)).get("additional_special_tokens", []):
            ast.add(t["content"] if isinstance(t, dict) else t)
    tokens, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        tokens.append(piece)
        scores.append(float(sp.get_score(i)))
        if sp.is_unknown(i):
            types.append(2)
        elif sp.is_control(i):
            types.append(3)
        elif sp.is_unused(i):
            types.append(5)
        elif sp.is_byte(i):
            types.append(6)
        else:
            types.append(3 if piece in ("<end_of_turn>", "<start_of_turn>") or piece in ast else 1)
    return tokens, scores, types


def gemma3n_dialect(hf_dir: str, out_path: str) -> dict:
    import gguf
    from statistics import NormalDist
    import make_dialect_fixture as M
    top = json.load(open(os.path.join(hf_dir, "config.json")))
    c = top["text_config"]
    tokens, scores, types = spm_vocabulary(hf_dir)
    for i in range(c["vocab_size"] - len(tokens)):     # convert.go: padded to vocab_size with dummy tokens
        tokens.append(f"[PAD{i}]")
        scores.append(-1.0)
        types.append(4)                                # tokenTypeUserDefined
    w = gguf.GGUFWriter(out_path, "gemma3n")           # gemma3nModel.KV: general.architecture = "gemma3n"
    w.add_uint32("general.file_type", 1)               # ModelParameters.KV
    w.add_uint32("general.quantization_version", 2)
    ollama_tokenizer.write(w, hf_dir, "llama", tokens, scores, types)   # parseTokenizer: Vocabulary{Model: "llama"}
    a = "gemma3n."
    # gemma3nModel.KV at 73b642e6f (Go writes a map: the order is the GGUF writer's sorted keys, irrelevant here)
    w.add_array(a + "activation_sparsity_scale", [float(np.float32(NormalDist().inv_cdf(float(np.float32(s))) if s > 0 else -np.inf))
                                                 for s in c["activation_sparsity_pattern"]])   # distuv.Normal{0, 1}.Quantile
    w.add_uint32(a + "altup.active_idx", c["altup_active_idx"])
    w.add_bool(a + "altup.correct_scale", bool(c["altup_correct_scale"]))
    w.add_float32(a + "altup.lr_multiplier", c.get("altup_lr_multiplier", 1.0))
    w.add_uint32(a + "altup.num_inputs", c["altup_num_inputs"])
    w.add_uint32(a + "attention.head_count_kv", c["num_key_value_heads"])
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_float32(a + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_uint32(a + "attention.sliding_window", c["sliding_window"])
    w.add_array(a + "attention.sliding_window_pattern", [t == "sliding_attention" for t in c["layer_types"]])
    w.add_uint32(a + "attention.shared_kv_layers", c["num_kv_shared_layers"])
    w.add_uint32(a + "block_count", c["num_hidden_layers"])
    w.add_uint32(a + "context_length", c["max_position_embeddings"])
    w.add_uint32(a + "embedding_length_per_layer_input", c["hidden_size_per_layer_input"])
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"] if isinstance(c["intermediate_size"], int) else c["intermediate_size"][0])
    w.add_uint32(a + "head_dim", c["head_dim"])
    w.add_uint32(a + "laurel_rank", c["laurel_rank"])
    w.add_uint32(a + "num_kv_shared_layers", c["num_kv_shared_layers"])
    w.add_float32(a + "rope.freq_base_local", c["rope_local_base_freq"])
    w.add_float32(a + "rope.freq_base", c["rope_theta"])
    sd = M.checkpoint_tensors(hf_dir)
    named = {M.go_replace(k, GEMMA3N_REPLACEMENTS): v.astype(np.float32) for k, v in sd.items()}   # parseTensors
    out = []
    # Tensors(): mergeTensors altup_proj.*.weight and altup_unembd_proj.*.weight, stacked by index
    for src, dst in (("altup_proj", "altup_proj.weight"), ("altup_unembd_proj", "altup_unembd_proj.weight")):
        parts = sorted((int(k.split(".")[1]), k) for k in named if k.startswith(src + ".") and k.endswith(".weight"))
        out.append((dst, np.stack([named.pop(k) for _, k in parts])))
    clip = c.get("altup_coef_clip") or 0
    for name in sorted(named):
        t = named[name]
        if any(s in name for s in ("audio_tower", "embed_audio", "vision_tower", "embed_vision")):
            continue                                   # the towers: left out ("TODO: handle audio and vision towers")
        if ("altup_predict_coef" in name or "altup_correct_coef" in name) and clip > 0:
            t = np.clip(t, -clip, clip)                # tensor.Clamp(-AltupCoefClip, AltupCoefClip)
        out.append((name, t))
    written = []
    for name, data in out:
        M.add_as_kind(w, name, data)                   # tensorBase.Kind()
        written.append(name)
    M.finish(w)
    return {"tensors": written, "text_vocab": c["vocab_size_per_layer_input"]}


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case gemma3n: the source model, llama.cpp's conversion (OUT/ref/gemma3n.gguf) and the dialect blob."""
    import make_dialect_fixture as M
    hf, ref, dialect = os.path.join(work, "gemma3n"), os.path.join(out, "ref", "gemma3n.gguf"), os.path.join(out, "ref", "gemma3n-dialect.gguf")
    make_gemma3n(hf)
    ref32 = os.path.join(out, "ref", "gemma3n-f32.gguf")
    M.convert_reference(src, [("default", hf, ref, False), ("default", hf, ref32, "f32")])
    info = gemma3n_dialect(hf, dialect)
    with open(dialect, "rb") as f:
        blob = f.read()
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-gemma3n"] = {
        "handler": "gemma3n", "ref_gguf": ref, "dialect_file": dialect, "texts": H.SAMPLE_TEXTS, "mmproj": False,
        "blob": M.put_model(store, "dialect-gemma3n", blob, "gemma3n"),
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        # handle_gemma3n cuts token_embd and the vocabulary to the text vocabulary; llama.cpp's converter pads
        # per_layer_token_embd with zero rows to the full one instead: these compare as the reference's first rows
        "vocab_cut": {"rows": info["text_vocab"], "tensors": ["token_embd.weight", "per_layer_token_embd.weight"],
                      "kvs": ["tokenizer.ggml.tokens", "tokenizer.ggml.scores"]},
        # KVs handle_gemma3n leaves as Ollama's converter wrote them, which llama.cpp reads alike: the sparsity scale
        # (Go's float64 quantile rounded to F32, torch's F32 icdf: 1 ulp apart), key/value lengths and the
        # final logit softcapping and the sliding-window rope base it did not write (llama.cpp's defaults, n_embd /
        # n_head, 30 and 10000, are Gemma 3n's values), one feed-forward length for all layers, the SentencePiece
        # add_sep_token flag (unread by a SentencePiece vocabulary), and the token types (parseSentencePiece types <start_of_turn>
        # and <end_of_turn> control, llama.cpp's converter normal)
        "ref_differences": ["gemma3n.activation_sparsity_scale", "gemma3n.attention.key_length", "gemma3n.attention.value_length",
                            "gemma3n.feed_forward_length", "gemma3n.final_logit_softcapping", "gemma3n.rope.freq_base_swa",
                            "tokenizer.ggml.add_sep_token", "tokenizer.ggml.token_type"],
        # upstream llama.cpp's CPU backend computes NaN logits from an F16 altup_proj.weight (llama.cpp's own F16
        # conversion as well: every greedy token 0), so the greedy check runs model.gguf widened to F32 by gguf-py
        # (check_dialect.widen_f16) against llama.cpp's --outtype f32 conversion instead
        "greedy_fp32": ref32,
        "f16_where_ref_f32": [n for n in info["tensors"] if n.endswith(("altup_correct_coef.weight", "altup_predict_coef.weight"))]}


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-gemma3n-"))
