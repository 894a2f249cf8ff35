#!/usr/bin/env python3
"""Llama 4 (GGUF architecture llama4, text + vision) for make_dialect_fixture.py (docs/FORMATS.md §12.13).

    dialect_llama4.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

The source model is transformers' own Llama4ForConditionalGeneration: text hidden 64, 4 layers (dense and MoE layers
alternating, 4 experts with the shared expert: interleave_moe_layer_step 2), chunked attention as Llama 4 ships it, q/k
L2 norm, the 4th layer without rope (NoPE; llama.cpp's llama4 graph always builds the attention-scale input of the
NoPE layers, and a model without one fails in ggml with "tensor buffer not set"); a vision tower of 3 blocks (hidden 32, 64x64 images in 8x8 patches, pixel shuffle 0.5) with the vision adapter
MLP and the projector; a byte-level BPE tokenizer trained here with Llama 4's own pre-tokenizer expression (GPT-4o's),
which llama.cpp names "llama4". Every weight is F16-representable, so both converters' F16/F32 choices hold the same
values.

Reference: llama.cpp's convert_hf_to_gguf.py, text and --mmproj (Llama4Model, Llama4VisionModel). Dialect: written as
Ollama's converter wrote the published llama4 files, convert/convert_llama4.go at commit 7ba9fa9c7 of Ollama's
repository ("fixes for maverick", April 2025; later commits changed only Go types), with convert_llama.go,
convert/reader.go and convert/tokenizer.go of the same commit. One GGUF holds the text model, the vision tower and the
projector. Each step names the Go function it follows. Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

REF_PRE = "llama4"   # llama.cpp's name of Llama 4's pre-tokenizer (the reference converter's hash table)
# Llama 4's tokenizer.json Split expression (o200k's; llama.cpp's LLAMA_VOCAB_PRE_TYPE_GPT4O quotes it)
LLAMA4_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
                r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot|>", "<|header_start|>", "<|header_end|>", "<|image_start|>",
            "<|image_end|>", "<|image|>", "<|patch|>"]
HALF = [0.5, 0.5, 0.5]   # Llama 4's image mean and std


def train_tokenizer(vocab_size: int = 400):
    """A byte-level BPE with Llama 4's pre-tokenizer expression and Llama 4's special tokens in the vocabulary."""
    return H.train_byte_level_bpe(LLAMA4_REGEX, SPECIALS, vocab_size, bos_token="<|begin_of_text|>", eos_token="<|eot|>",
                                   pad_token="<|end_of_text|>", unk_token=None, add_bos_token=True, add_eos_token=False,
                                   model_max_length=4096)


def make_llama4(out_dir: str) -> None:
    """The tiny source model (save_pretrained, F32), its tokenizer, a preprocessor_config.json with Llama 4's image
    statistics, and config.json's text_config with the top-level rope_theta the published files carry (transformers 5
    saves rope_parameters only), which Ollama's llamaModel reads."""
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = train_tokenizer()
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    text = T.Llama4TextConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=32, intermediate_size_mlp=96, num_hidden_layers=4,
                              num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_local_experts=4, num_experts_per_tok=1,
                              interleave_moe_layer_step=2, max_position_embeddings=2048, rms_norm_eps=1e-5,
                              rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
                              bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    # 3 blocks: the converter maps vision_adapter.mlp.fc{bid} through the block numbers, fc2 needs block 2
    vision = T.Llama4VisionConfig(hidden_size=32, num_hidden_layers=3, num_attention_heads=2, intermediate_size=128,
                                  vision_output_dim=64, image_size=64, patch_size=8, pixel_shuffle_ratio=0.5, norm_eps=1e-5,
                                  projector_input_dim=64, projector_output_dim=64, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    cfg = T.Llama4Config(text_config=text.to_dict(), vision_config=vision.to_dict(), image_token_index=ids["<|patch|>"],
                         boi_token_index=ids["<|image_start|>"], eoi_token_index=ids["<|image_end|>"])
    torch.manual_seed(4)
    model = T.Llama4ForConditionalGeneration(cfg)
    M.randomize(model, f16=True)   # wide enough that greedy decoding does not settle on one token
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["text_config"]["rope_theta"] = 500000.0
    c["vision_config"]["rope_theta"] = 10000.0
    with open(p, "w") as f:
        json.dump(c, f, indent=1)
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_processor_type": "Llama4ImageProcessorFast", "image_mean": HALF, "image_std": HALF,
                   "size": {"height": 64, "width": 64}, "max_patches": 16, "resize_to_max_canvas": False}, f, indent=1)


# llama4Model.Replacements(): llamaModel.Replacements() then Llama 4's own, in Go's order
REPLACEMENTS = [
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.norm", "output_norm",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "mlp.gate_proj", "ffn_gate",
    "mlp.down_proj", "ffn_down",
    "mlp.up_proj", "ffn_up",
    "post_attention_layernorm", "ffn_norm",
    "language_model.", "",
    "vision_model", "v",
    "multi_modal_projector", "mm",
    "feed_forward.down_proj", "ffn_down",
    "feed_forward.up_proj", "ffn_up",
    "feed_forward.gate_proj", "ffn_gate",
    "feed_forward.", "ffn_",
    "shared_expert.down_proj", "down_shexp",
    "shared_expert.gate_proj", "gate_shexp",
    "shared_expert.up_proj", "up_shexp",
    "experts.down_proj", "down_exps.weight",
    "experts.gate_up_proj", "gate_up_exps.weight",
    "router", "gate_inp",
    "patch_embedding.linear", "patch_embedding",
]


def kind(name: str, shape) -> str:
    """tensorBase.Kind() at 7ba9fa9c7 (convert/reader.go): ffn_gate_inp, token_types and v.positional_embedding_vlm
    F32, else 1-D F32 and the rest F16."""
    if name.endswith(".ffn_gate_inp.weight") or name in ("token_types.weight", "v.positional_embedding_vlm") or len(shape) == 1:
        return "F32"
    return "F16"


def llama4_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    from safetensors.numpy import load_file
    import make_dialect_fixture as M
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    text, vision = cfg["text_config"], cfg["vision_config"]
    tok, _ = M.ref_tokenizer_kvs(ref_text, "llama4")
    # parseTokenizer at 7ba9fa9c7: the hash of Llama 4's Split expression is none it knows, so Pre stays "default"
    tok["tokenizer.ggml.pre"] = "default"
    w = gguf.GGUFWriter(out_path, "llama4")   # llama4Model.KV: general.architecture = "llama4"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    # llamaModel.KV of text_config, its llama.* keys renamed llama4.* (llama4Model.KV)
    heads = text["num_attention_heads"]
    w.add_uint32("llama4.vocab_size", text["vocab_size"])
    w.add_uint32("llama4.block_count", text["num_hidden_layers"])
    w.add_uint32("llama4.context_length", text["max_position_embeddings"])
    w.add_uint32("llama4.embedding_length", text["hidden_size"])
    w.add_uint32("llama4.attention.head_count", heads)
    w.add_uint32("llama4.rope.dimension_count", text["hidden_size"] // heads)
    w.add_uint32("llama4.attention.head_dim", text["head_dim"])                    # HeadDim > 0
    w.add_float32("llama4.rope.freq_base", text["rope_theta"])
    w.add_uint32("llama4.attention.head_count_kv", text["num_key_value_heads"])
    w.add_float32("llama4.attention.layer_norm_rms_epsilon", text["rms_norm_eps"])
    w.add_uint32("llama4.attention.key_length", text["head_dim"])
    w.add_uint32("llama4.attention.value_length", text["head_dim"])
    # llama4Model.KV: the feed-forward widths (llama.feed_forward_length replaced by intermediate_size_mlp), MoE and vision
    w.add_uint32("llama4.feed_forward_length", text["intermediate_size_mlp"])
    w.add_uint32("llama4.expert_feed_forward_length", text["intermediate_size"])
    w.add_uint32("llama4.expert_count", text["num_local_experts"])
    w.add_uint32("llama4.expert_used_count", text["num_experts_per_tok"])
    w.add_uint32("llama4.interleave_moe_layer_step", text["interleave_moe_layer_step"])
    w.add_bool("llama4.use_qk_norm", text["use_qk_norm"])
    w.add_uint32("llama4.attention.chunk_size", text["attention_chunk_size"])
    w.add_uint32("llama4.vision.block_count", vision["num_hidden_layers"])
    w.add_uint32("llama4.vision.embedding_length", vision["hidden_size"])
    w.add_uint32("llama4.vision.feed_forward_length", vision["intermediate_size"])
    w.add_uint32("llama4.vision.attention.head_count", vision["num_attention_heads"])
    w.add_uint32("llama4.vision.image_size", vision["image_size"])
    w.add_uint32("llama4.vision.patch_size", vision["patch_size"])
    w.add_float32("llama4.vision.rope.freq_base", vision["rope_theta"])
    w.add_float32("llama4.vision.layer_norm_epsilon", vision["norm_eps"])
    w.add_float32("llama4.vision.pixel_shuffle_ratio", vision["pixel_shuffle_ratio"])
    sd = {}
    for f in sorted(os.listdir(hf_dir)):
        if f.endswith(".safetensors"):
            sd.update(load_file(os.path.join(hf_dir, f)))
    written = []

    def put(name, data):
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if kind(name, data.shape) == "F16" else np.float32)))
        written.append(name)
    for key in sorted(sd):
        name = M.go_replace(key, REPLACEMENTS)
        data = sd[key].astype(np.float32)
        if name.startswith(("v.", "mm.")):   # llama4Model.Tensors: the vision tower and projector as they are
            put(name, data)
        elif "ffn_gate_up_exps" in name:
            # llama4Model.Tensors + repack(nil, nil, S(i*half, (i+1)*half)): [experts, hidden, 2*ff] sliced on the last
            # axis, then T(0, 2, 1): ffn_gate_exps and ffn_up_exps of [experts, ff, hidden]
            half = data.shape[2] // 2
            for i, part in enumerate(("ffn_gate_exps", "ffn_up_exps")):
                put(name.replace("ffn_gate_up_exps", part), data[:, :, i * half:(i + 1) * half].transpose(0, 2, 1))
        elif "ffn_down_exps" in name:   # repack(): T(0, 2, 1), [experts, ff, hidden] -> [experts, hidden, ff]
            put(name, data.transpose(0, 2, 1))
        else:   # llamaModel.Tensors with skipRepack: the q/k rows as stored (Llama 4's are already in llama.cpp's order)
            put(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {"tensors": written}


def jobs(work: str, out: str):
    """The reference conversions (pre-tokenizer, HF folder, output, --mmproj?) for make_dialect_fixture.convert_reference."""
    hf = os.path.join(work, "llama4")
    return [(REF_PRE, hf, os.path.join(out, "ref", "llama4.gguf"), False),
            (REF_PRE, hf, os.path.join(out, "ref", "llama4-mmproj.gguf"), True)]


def convert_reference(src: str, work: str, out: str) -> None:
    """make_dialect_fixture's reference conversion in a child process of this module, which first works around a gap
    of the bundled converter's tensor map: "vision_model.model.layers.{bid}.post_attention_layernorm" is listed for
    Llama 4 under V_ENC_POST_ATTN_NORM (v.blk.N.ln2, the pre-FFN norm clip.cpp's Llama 4 graph runs) and again, later,
    for Gemma 4 under V_ENC_ATTN_POST_NORM, which wins: the unpatched converter writes Llama 4's norm as
    v.blk.N.attn_post_norm (and its bias, which clip.cpp never reads), and leaves ln2 out. The Gemma 4 entry is dropped
    in this child, which converts only Llama 4."""
    import subprocess
    args = [x for pre, hf, o, mmproj in jobs(work, out) for x in (pre, hf, o, "mmproj" if mmproj else "text")]
    subprocess.run([sys.executable, os.path.abspath(__file__), "--convert", src, *args], check=True, stdout=subprocess.DEVNULL)


def _convert_main(args) -> None:
    sys.path.insert(0, os.path.join(args[0], "gguf-py"))
    import gguf
    from gguf.tensor_mapping import TensorNameMap
    gemma4_only = "vision_model.model.layers.{bid}.post_attention_layernorm"
    cfg = TensorNameMap.block_mappings_cfg
    cfg[gguf.MODEL_TENSOR.V_ENC_ATTN_POST_NORM] = tuple(n for n in cfg[gguf.MODEL_TENSOR.V_ENC_ATTN_POST_NORM] if n != gemma4_only)
    import make_dialect_fixture as M
    M._convert_main(args)


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The llama4 case: source model, reference (its own converter child process), dialect blob, expectations."""
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf = os.path.join(work, "llama4")
    make_llama4(hf)
    convert_reference(src, work, out)
    ref, ref_mmproj = jobs(work, out)[0][2], jobs(work, out)[1][2]
    dialect_file = os.path.join(out, "ref", "llama4-dialect.gguf")
    info = llama4_dialect(hf, ref, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-llama4"] = {
        "handler": "llama4", "ref_gguf": ref, "ref_mmproj": ref_mmproj, "dialect_file": dialect_file,
        "blob": M.put_model(store, "dialect-llama4", blob, "llama4"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))], "mmproj": True,
        # handle_llama4_clip sets the projector type under both names; llama.cpp's converter writes clip.projector_type
        "clip_extra": ["clip.vision.projector_type"],
        # Ollama's parseTokenizer writes add_*_token only for the special tokens the tokenizer has (none is sep);
        # llama.cpp's converter writes add_sep_token false, llama.cpp's default
        "ref_differences": ["tokenizer.ggml.add_sep_token"],
        "mtmd_template": "llama4"}   # llama.cpp's built-in Llama 4 template for the image check


def main(argv) -> int:
    if argv[1:2] == ["--convert"]:
        _convert_main(argv[2:])
        return 0
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-llama4-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
