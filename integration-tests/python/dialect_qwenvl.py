"""Qwen 2.5-VL and Qwen3-VL (GGUF architectures qwen25vl, qwen3vl) for make_dialect_fixture.py (docs/FORMATS.md
§12.11, §12.12).

    dialect_qwenvl.py OUT [LLAMA_CPP_SRC [CASE]]   # these cases alone: OUT/store, OUT/ref, OUT/dialect_expected.json

The source model is transformers' own Qwen2_5_VLForConditionalGeneration: a 2-layer text model (M-RoPE sections
[2, 3, 3] of its 16-wide heads) and a 3-block vision tower (window attention, block 2 full attention; three blocks
because llama.cpp's converter maps visual.merger.mlp.{bid} through the block numbers, and mm.2 needs block 2).

The dialect is written as Ollama's converter wrote the published qwen2.5vl files: convert/convert_qwen25vl.go at
commit 0aa8b371d of Ollama's repository ("model: add Qwen2.5-VL support", May 2025; the later commits change only
the split helper's argument type and the default of fullatt_block_indexes, which this config sets): the text model
as qwen2Model writes it under qwen25vl.*, the vision keys, the vision tower embedded with its fused QKV split into
attn_q/k/v and its Conv3D patch embedding split into two temporal slices v.patch_embd_0/1. Each step names the Go
function it follows. The reference is llama.cpp's conversion (text, and --mmproj for the vision tower).

qwen3vl: Qwen3VLForConditionalGeneration, a 2-layer text model with 128-wide heads (the M-RoPE sections [24, 20, 20]
that Ollama's handle_qwen3vl injects, as the published family has them) and a 2-block vision tower with one
deepstack adapter (after block 0) and a 4 x 4 position grid; written as Ollama's convert/convert_qwen3vl.go wrote
the published qwen3-vl files at commit 7d25b9e19 ("feat(model): add qwen3vl", October 2025; later commits write
llama.cpp's layout): the qwen3Model keys without rope sections (the published configs name their rope type
rope_type, which qwen3Model's rope_scaling.type did not read), the vision keys and parseMore's
preprocessor_config.json values, the vision tower embedded with attn_qkv split into attn_q/k/v and the Conv3D patch
embedding flattened to [out * in, t, h, w].
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

import hf_models as H

MROPE_SECTION = [2, 3, 3]        # sums to the rotary half-width of the 16-wide heads
VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]   # Qwen 2.5-VL's preprocessor_config.json (CLIP's statistics)
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def make_qwen25vl(out_dir: str) -> None:
    """The tiny source model saved with save_pretrained, hf_models' Qwen2 byte-level BPE with the vision tokens, and a
    preprocessor_config.json as Qwen 2.5-VL ships one."""
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = H.train_qwen_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": VISION_TOKENS})
    ids = {t: tok.convert_tokens_to_ids(t) for t in VISION_TOKENS}
    text = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=2048, rms_norm_eps=1e-6, tie_word_embeddings=False,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=tok.pad_token_id,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": MROPE_SECTION})
    vision = dict(depth=3, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=14, spatial_merge_size=2,
                  temporal_patch_size=2, window_size=112, out_hidden_size=64, fullatt_block_indexes=[2])
    cfg = T.Qwen2_5_VLConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                             video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                             vision_end_token_id=ids["<|vision_end|>"], tie_word_embeddings=False,
                             bos_token_id=tok.pad_token_id)   # <|endoftext|> as Qwen 2.5-VL's (the default 151643 is no id here)
    torch.manual_seed(25)
    model = T.Qwen2_5_VLForConditionalGeneration(cfg)
    M.randomize(model)   # wide enough that greedy decoding does not settle on one token
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_processor_type": "Qwen2VLImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
                   "patch_size": 14, "merge_size": 2, "temporal_patch_size": 2,
                   "min_pixels": 3136, "max_pixels": 12845056}, f, indent=1)


QWEN25VL_REPLACEMENTS = [   # qwen25VLModel.Replacements(): qwen2Model.Replacements() and the vision names, in Go's order
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.q_proj", "attn_q",
    "self_attn.o_proj", "attn_output",
    "mlp.down_proj", "ffn_down",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "post_attention_layernorm", "ffn_norm",
    "model.norm", "output_norm",
    "visual", "v",
    "blocks", "blk",
    "attn.proj", "attn_out",
    "norm1", "ln1",
    "norm2", "ln2",
]


def checkpoint_name(key: str) -> str:
    """The published checkpoints' layout (model.layers.*, model.embed_tokens, visual.*, lm_head), which
    qwen25VLModel.Replacements() is written for, from transformers 5's module names."""
    if key.startswith("model.language_model."):
        return "model." + key[len("model.language_model."):]
    if key.startswith("model.visual."):
        return key[len("model."):]
    return key


def qwen25vl_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import make_dialect_fixture as M
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    text, vision = cfg.get("text_config") or cfg, cfg["vision_config"]
    rope = text.get("rope_parameters") or text.get("rope_scaling") or {}
    tok, _ = M.ref_tokenizer_kvs(ref_text, "qwen2vl")
    w = gguf.GGUFWriter(out_path, "qwen25vl")   # qwen25VLModel.KV: general.architecture = "qwen25vl"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])   # ModelParameters.KV
    # qwen2Model.KV, its qwen2.* keys written as qwen25vl.* (published config.json files carry these at the top level)
    w.add_uint32("qwen25vl.block_count", text["num_hidden_layers"])
    w.add_uint32("qwen25vl.context_length", text["max_position_embeddings"])
    w.add_uint32("qwen25vl.embedding_length", text["hidden_size"])
    w.add_uint32("qwen25vl.feed_forward_length", text["intermediate_size"])
    w.add_uint32("qwen25vl.attention.head_count", text["num_attention_heads"])
    w.add_uint32("qwen25vl.attention.head_count_kv", text["num_key_value_heads"])
    w.add_float32("qwen25vl.rope.freq_base", text.get("rope_theta") or rope["rope_theta"])
    w.add_float32("qwen25vl.attention.layer_norm_rms_epsilon", text["rms_norm_eps"])
    # rope_scaling.type "mrope" (the published configs) or "default" (transformers 5's rope_type): the mrope_section
    assert (rope.get("type") or rope.get("rope_type")) in ("mrope", "default")
    w.add_array("qwen25vl.rope.mrope_section", [int(x) for x in rope["mrope_section"]])   # []int32: INT32 array
    # the vision keys, cmp.Or giving the defaults of absent fields; num_channels reads in_chans, which the published
    # configs carry (3) and transformers 5 names in_channels; spatial_patch_size is in no config (0)
    w.add_uint32("qwen25vl.vision.block_count", vision.get("depth") or 32)
    w.add_uint32("qwen25vl.vision.embedding_length", vision["hidden_size"])
    w.add_uint32("qwen25vl.vision.attention.head_count", vision.get("num_heads") or 16)
    w.add_uint32("qwen25vl.vision.num_channels", vision.get("in_chans", vision.get("in_channels", 0)))
    w.add_uint32("qwen25vl.vision.patch_size", vision.get("patch_size") or 14)
    w.add_uint32("qwen25vl.vision.spatial_merge_size", vision.get("spatial_merge_size") or 2)
    w.add_uint32("qwen25vl.vision.spatial_patch_size", vision.get("spatial_patch_size", 0))
    w.add_uint32("qwen25vl.vision.window_size", vision.get("window_size") or 112)
    w.add_float32("qwen25vl.vision.attention.layer_norm_epsilon", vision.get("layer_norm_epsilon") or 1e-6)
    w.add_float32("qwen25vl.vision.rope.freq_base", vision.get("rope_theta") or 1e4)
    w.add_array("qwen25vl.vision.fullatt_block_indexes", [int(x) for x in vision["fullatt_block_indexes"]])
    w.add_uint32("qwen25vl.vision.temporal_patch_size", vision.get("temporal_patch_size") or 2)
    sd = M.checkpoint_tensors(hf_dir)
    written = []

    def add(name, data, kind_of):
        # tensorBase.Kind(): 1-D F32, else F16 (of the tensor before any split)
        w.add_tensor(name, data.astype(np.float32 if kind_of.ndim == 1 else np.float16))
        written.append(name)
    for key in sorted(sd):
        name = M.go_replace(checkpoint_name(key), QWEN25VL_REPLACEMENTS)   # the reader's Replacements
        data = sd[key].astype(np.float32)
        if "patch_embed.proj" in name:
            # qwen25VLModel.Tensors: splitDim(t, 2, patch_embd_0, patch_embd_1), the size-1 dims deleted
            for i, part in enumerate(np.split(data, 2, axis=2)):
                add(name.replace("patch_embed.proj", f"patch_embd_{i}"), part.reshape([d for d in part.shape if d != 1]), data)
        elif "attn.qkv" in name:
            # qwen25VLModel.Tensors: splitDim(t, 0, attn_q, attn_k, attn_v)
            for leaf, part in zip(("attn_q", "attn_k", "attn_v"), np.split(data, 3, axis=0)):
                add(name.replace("attn.qkv", leaf), part, data)
        else:
            add(name, data, data)
    M.finish(w)
    return {"tensors": written}


# --- qwen3vl: convert/convert_qwen3vl.go at 7d25b9e19 -------------------------------------------------------

QWEN3VL_SECTIONS = [24, 20, 20]   # handle_qwen3vl's hard-coded sections (head width 128: 64 rotary pairs)


def make_qwen3vl(out_dir: str) -> None:
    """The tiny source model saved with save_pretrained, hf_models' Qwen2 byte-level BPE with the vision tokens, and a
    preprocessor_config.json as Qwen3-VL ships one (statistics 0.5, the pixel limits in "size")."""
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = H.train_qwen_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": VISION_TOKENS})
    ids = {t: tok.convert_tokens_to_ids(t) for t in VISION_TOKENS}
    text = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=1, head_dim=128, max_position_embeddings=2048, rms_norm_eps=1e-6, tie_word_embeddings=False,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                rope_parameters={"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": QWEN3VL_SECTIONS,
                                 "mrope_interleaved": True})
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=16, spatial_merge_size=2,
                  temporal_patch_size=2, out_hidden_size=64, num_position_embeddings=16, deepstack_visual_indexes=[0])
    cfg = T.Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                          video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                          vision_end_token_id=ids["<|vision_end|>"], tie_word_embeddings=False)
    torch.manual_seed(30)
    model = T.Qwen3VLForConditionalGeneration(cfg)
    M.randomize(model)   # norms near 1, weights N(0, 0.25): greedy decoding does not settle on one token
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_processor_type": "Qwen2VLImageProcessorFast", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
                   "patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
                   "size": {"shortest_edge": 65536, "longest_edge": 16777216}}, f, indent=1)


QWEN3VL_REPLACEMENTS = [   # qwen3VLModel.Replacements() at 7d25b9e19: qwen3Model.Replacements() and the vision names
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.k_proj", "attn_k",
    "self_attn.k_norm", "attn_k_norm",
    "self_attn.v_proj", "attn_v",
    "self_attn.q_proj", "attn_q",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.o_proj", "attn_output",
    "mlp.down_proj", "ffn_down",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "mlp.gate.weight", "ffn_gate_inp.weight",
    "mlp.experts.down_proj", "ffn_down_exps.weight",
    "mlp.experts.gate_up_proj", "ffn_gate_up_exps.weight",
    "post_attention_layernorm", "ffn_norm",
    "model.norm", "output_norm",
    "model.language_", "",
    "model.visual", "v",
    "patch_embed.proj", "patch_embed",
    "blocks", "blk",
    "attn.qkv", "attn_qkv",
    "attn.proj", "attn_out",
    "deepstack_merger_list", "deepstack_merger",
]


def qwen3vl_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    """qwen3vl, or qwen3vlmoe when the text config has experts: convert_qwen3vl.go writes both."""
    import gguf
    import make_dialect_fixture as M
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    text, vision = cfg["text_config"], dict(cfg["vision_config"])
    vision.update(json.load(open(os.path.join(hf_dir, "preprocessor_config.json"))))   # parseMore: over vision_config
    rope = text.get("rope_scaling") or text.get("rope_parameters") or {}
    moe = bool(text.get("num_experts"))
    A = "qwen3vlmoe" if moe else "qwen3vl"         # qwen3VLModel.KV: NumExperts > 0 or 0
    tok, _ = M.ref_tokenizer_kvs(ref_text, A)
    w = gguf.GGUFWriter(out_path, A)
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])   # ModelParameters.KV
    # qwen3Model.KV (text_config); WriteGGUF prefixes the keys with the architecture
    w.add_uint32(A + ".block_count", text["num_hidden_layers"])
    w.add_uint32(A + ".context_length", text["max_position_embeddings"])
    w.add_uint32(A + ".embedding_length", text["hidden_size"])
    w.add_uint32(A + ".feed_forward_length", text["intermediate_size"])
    w.add_uint32(A + ".attention.head_count", text["num_attention_heads"])
    w.add_uint32(A + ".attention.head_count_kv", text["num_key_value_heads"])
    w.add_uint32(A + ".attention.key_length", text["head_dim"])
    w.add_uint32(A + ".attention.value_length", text["head_dim"])
    if moe:                                        # qwen3Model.KV's expert keys
        w.add_uint32(A + ".expert_count", text["num_experts"])
        w.add_uint32(A + ".expert_used_count", text["num_experts_per_tok"])
        w.add_bool(A + ".norm_top_k_prob", bool(text.get("norm_topk_prob", False)))
    w.add_float32(A + ".rope.freq_base", text.get("rope_theta") or rope["rope_theta"])
    w.add_float32(A + ".attention.layer_norm_rms_epsilon", text["rms_norm_eps"])
    assert "type" not in rope   # RopeScaling.Type "": no rope keys (the published configs say rope_type)
    # the vision keys, cmp.Or giving the defaults of absent fields
    w.add_uint32(A + ".vision.block_count", vision.get("depth") or 32)
    w.add_uint32(A + ".vision.embedding_length", vision["hidden_size"])
    w.add_uint32(A + ".vision.attention.head_count", vision.get("num_heads") or 16)
    w.add_uint32(A + ".vision.num_channels", vision.get("in_channels", 0))
    w.add_uint32(A + ".vision.patch_size", vision.get("patch_size") or 14)
    w.add_uint32(A + ".vision.spatial_merge_size", vision.get("spatial_merge_size") or 2)
    w.add_float32(A + ".vision.attention.layer_norm_epsilon", vision.get("layer_norm_epsilon") or 1e-6)
    w.add_float32(A + ".vision.rope.freq_base", vision.get("rope_theta") or 1e4)
    w.add_uint32(A + ".vision.temporal_patch_size", vision.get("temporal_patch_size") or 2)
    w.add_array(A + ".vision.deepstack_visual_indexes", [int(x) for x in vision["deepstack_visual_indexes"]])
    w.add_uint32(A + ".vision.shortest_edge", vision["size"]["shortest_edge"])
    w.add_uint32(A + ".vision.longest_edge", vision["size"]["longest_edge"])
    w.add_array(A + ".vision.image_mean", [float(x) for x in vision["image_mean"]])
    w.add_array(A + ".vision.image_std", [float(x) for x in vision["image_std"]])
    sd = M.checkpoint_tensors(hf_dir)
    written = []

    def add(name, data):
        # tensorBase.Kind() at 7d25b9e19: .bias, .ffn_gate_inp.weight and 1-D F32, else F16
        f32 = name.endswith((".bias", ".ffn_gate_inp.weight")) or data.ndim == 1
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float32 if f32 else np.float16)))
        written.append(name)
    for key in sorted(sd):
        name = M.go_replace(key, QWEN3VL_REPLACEMENTS)   # the reader's Replacements (the published names are these)
        data = sd[key].astype(np.float32)
        if "attn_qkv" in name:
            # qwen3VLModel.Tensors: splitDim(t, 0, attn_q, attn_k, attn_v)
            for leaf, part in zip(("attn_q", "attn_k", "attn_v"), np.split(data, 3, axis=0)):
                add(name.replace("attn_qkv", leaf), part)
        elif "patch_embed" in name and name.endswith("weight"):
            # qwen3VLModel.Tensors: shape [out * in, t, h, w], the same data
            add(name, data.reshape(data.shape[0] * data.shape[1], *data.shape[2:]))
        elif "ffn_gate_up_exps" in name:           # qwen3Model.Tensors: splitDim(t, 2, gate, up), each transposed (0, 2, 1)
            for leaf, part in zip(("gate", "up"), np.split(data, 2, axis=2)):
                add(name.replace("gate_up", leaf), np.swapaxes(part, 1, 2))
        elif "ffn_down_exps" in name:              # transposed (0, 2, 1)
            add(name, np.swapaxes(data, 1, 2))
        else:
            add(name, data)                          # qwen3Model.Tensors (dense: as is)
    M.finish(w)
    return {"tensors": written}


# --- the cases ----------------------------------------------------------------------------------------

# per case: the source maker, the dialect writer, and what its dialect_expected.json entry adds to the common fields
CASES = {
    "qwen25vl": (make_qwen25vl, qwen25vl_dialect, {
        "promoted": ["v.patch_embd.weight", "v.patch_embd.weight.1"],
        # handle_qwen25vl_clip copies these two, which llama.cpp's converter does not write (clip.cpp reads no
        # window size for this projector, and its spatial merge default is the same 2)
        "clip_extra": ["clip.vision.spatial_merge_size", "clip.vision.window_size"]}),
    "qwen3vl": (make_qwen3vl, qwen3vl_dialect, {
        "promoted": ["v.patch_embd.weight", "v.patch_embd.weight.1", "v.position_embd.weight"],
        # handle_qwen3vl_clip copies or injects these, which llama.cpp's converter does not write (clip.cpp reads no
        # rope base or temporal patch size for this projector; the pixel limits are the published preprocessor's)
        "clip_extra": ["clip.vision.image_max_pixels", "clip.vision.image_min_pixels", "clip.vision.rope.freq_base",
                       "clip.vision.temporal_patch_size"]}),
}


SOURCE_CLASS = {"qwen25vl": "Qwen2_5_VLForConditionalGeneration", "qwen3vl": "Qwen3VLForConditionalGeneration"}
FOLDER_CLASS = {"qwen25vl": "Qwen2ForCausalLM", "qwen3vl": "Qwen3ForCausalLM"}   # M-RoPE is plain rope on text


def add_cases(src: str, work: str, out: str, store: str, expected: dict, cases=tuple(CASES)) -> None:
    """The cases for make_dialect_fixture.py: the source models, llama.cpp's text and --mmproj conversions of all of
    them in one converter process, the dialect blobs in the store and their entries in dialect_expected.json."""
    import dialect_hf_folder as F
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    paths = {}
    for case in cases:
        hf = os.path.join(work, case)
        CASES[case][0](hf)
        paths[case] = (hf, os.path.join(out, "ref", case + ".gguf"), os.path.join(out, "ref", case + "-mmproj.gguf"))
    M.convert_reference(src, [job for hf, ref, mmproj in paths.values() for job in (("qwen2", hf, ref, False), ("qwen2", hf, mmproj, True))])
    for case, (hf, ref, ref_mmproj) in paths.items():
        dialect_file = os.path.join(out, "ref", case + "-dialect.gguf")
        info = CASES[case][1](hf, ref, dialect_file)
        with open(dialect_file, "rb") as f:
            blob = f.read()
        tok = AutoTokenizer.from_pretrained(hf)
        expected["models"]["dialect-" + case] = {
            "handler": case, "ref_gguf": ref, "ref_mmproj": ref_mmproj, "dialect_file": dialect_file,
            "blob": M.put_model(store, "dialect-" + case, blob, case), "texts": H.SAMPLE_TEXTS,
            "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
            "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))], "mmproj": True,
            "mtmd_template": "chatml",   # llama.cpp's built-in ChatML for the image check (check_dialect.py --mtmd)
            # the text model's Hugging Face folder, read through the translation, against the source's text-only logits
            **F.oracle(SOURCE_CLASS[case], hf, os.path.join(out, "ref", case), FOLDER_CLASS[case]),
            **CASES[case][2]}


def main(argv) -> int:
    import tempfile
    import make_dialect_fixture as M
    out = os.path.abspath(argv[1])
    src = M.llama_cpp_src(argv)
    os.makedirs(os.path.join(out, "ref"), exist_ok=True)
    expected = {"models": {}}
    work = tempfile.mkdtemp(prefix="modelfs-qwenvl-")
    add_cases(src, work, out, os.path.join(out, "store"), expected, tuple(argv[3:]) or tuple(CASES))
    with open(os.path.join(out, "dialect_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv))
