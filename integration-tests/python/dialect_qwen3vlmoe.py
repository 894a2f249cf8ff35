"""Qwen3-VL-MoE (GGUF architecture qwen3vlmoe) for make_dialect_fixture.py (docs/FORMATS.md §12).

The source model is transformers' own Qwen3VLMoeForConditionalGeneration: dialect_qwenvl.py's qwen3vl model (2 text
layers with 128-wide heads, the M-RoPE sections handle_qwen3vl injects, a 2-block vision tower with one deepstack
adapter) with a MoE feed-forward in both layers (4 experts, 2 used), the experts fused as the published checkpoints
store them (mlp.experts.gate_up_proj [E, hidden, 2 x moe_intermediate], mlp.experts.down_proj [E, moe_intermediate,
hidden]; published_layout).

The dialect is written as Ollama's convert/convert_qwen3vl.go wrote the published qwen3-vl MoE files at commit 7d25b9e19
(the same converter as qwen3vl: qwen3VLModel.KV names the architecture qwen3vlmoe when NumExperts > 0 and
qwen3Model.KV adds the expert keys; qwen3Model.Tensors splits gate_up_proj into ffn_gate_exps / ffn_up_exps and
transposes both and ffn_down_exps to llama.cpp's layout). Ollama's compatibility layer translates it with handle_qwen3vl
(text) and handle_qwen3vl_clip (the embedded vision tower, mmproj.gguf), as for qwen3vl.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H


def make_qwen3vlmoe(out_dir: str) -> None:
    """The tiny source model, saved with save_pretrained, with dialect_qwenvl's tokenizer and preprocessor config."""
    import torch
    import transformers as T
    import dialect_qwenvl as VL
    import make_dialect_fixture as M
    tok = H.train_qwen_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": VL.VISION_TOKENS})
    ids = {t: tok.convert_tokens_to_ids(t) for t in VL.VISION_TOKENS}
    # intermediate_size = moe_intermediate_size x experts used, as the published config has it (6144 = 768 x 8): Ollama's
    # converter writes no expert_feed_forward_length and llama.cpp's qwen3vlmoe then takes n_ff / n_expert_used
    text = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                num_key_value_heads=1, head_dim=128, max_position_embeddings=2048, rms_norm_eps=1e-6, tie_word_embeddings=False,
                num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16, decoder_sparse_step=1, mlp_only_layers=[],
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                rope_parameters={"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": VL.QWEN3VL_SECTIONS,
                                 "mrope_interleaved": True})
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=16, spatial_merge_size=2,
                  temporal_patch_size=2, out_hidden_size=64, num_position_embeddings=16, deepstack_visual_indexes=[0])
    cfg = T.Qwen3VLMoeConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
                             video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
                             vision_end_token_id=ids["<|vision_end|>"], tie_word_embeddings=False)
    torch.manual_seed(31)
    model = T.Qwen3VLMoeForConditionalGeneration(cfg)
    M.randomize(model)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    published_layout(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_processor_type": "Qwen2VLImageProcessorFast", "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
                   "patch_size": 16, "merge_size": 2, "temporal_patch_size": 2,
                   "size": {"shortest_edge": 65536, "longest_edge": 16777216}}, f, indent=1)


def published_layout(out_dir: str) -> None:
    """transformers 5 saves the fused experts in its own layout (gate_up_proj [E, 2 x I, hidden], down_proj [E, hidden,
    I]) and the expert count as num_local_experts; the published Qwen3-VL-MoE checkpoints (which both converters read)
    store gate_up_proj [E, hidden, 2 x I], down_proj [E, I, hidden] and text_config.num_experts."""
    from safetensors.numpy import load_file, save_file
    p = os.path.join(out_dir, "model.safetensors")
    sd = load_file(p)
    save_file({k: np.ascontiguousarray(np.swapaxes(v, 1, 2)) if k.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj")) else v
               for k, v in sd.items()}, p, metadata={"format": "pt"})
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["text_config"]["num_experts"] = c["text_config"]["num_local_experts"]
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


def qwen3vlmoe_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    """convert_qwen3vl.go writes the MoE model with the dense one's code (qwen3VLModel, NumExperts > 0)."""
    import dialect_qwenvl as VL
    return VL.qwen3vl_dialect(hf_dir, ref_text, out_path)


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case qwen3vlmoe: the source model, llama.cpp's text and --mmproj conversions and the dialect blob."""
    import dialect_hf_folder as F
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf, ref, ref_mmproj = (os.path.join(work, "qwen3vlmoe"), os.path.join(out, "ref", "qwen3vlmoe.gguf"),
                           os.path.join(out, "ref", "qwen3vlmoe-mmproj.gguf"))
    make_qwen3vlmoe(hf)
    M.convert_reference(src, [("qwen2", hf, ref, False), ("qwen2", hf, ref_mmproj, True)])
    dialect = os.path.join(out, "ref", "qwen3vlmoe-dialect.gguf")
    info = qwen3vlmoe_dialect(hf, ref, dialect)
    with open(dialect, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-qwen3vlmoe"] = {
        "handler": "qwen3vl", "ref_gguf": ref, "ref_mmproj": ref_mmproj, "dialect_file": dialect,
        "blob": M.put_model(store, "dialect-qwen3vlmoe", blob, "qwen3vlmoe"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))], "mmproj": True, "mtmd_template": "chatml",
        "promoted": ["v.patch_embd.weight", "v.patch_embd.weight.1", "v.position_embd.weight"],
        # qwen3Model.KV writes no expert_feed_forward_length; llama.cpp's qwen3vlmoe takes feed_forward_length /
        # expert_used_count, the same value
        "ref_differences": ["qwen3vlmoe.expert_feed_forward_length"],
        # as for qwen3vl: keys handle_qwen3vl_clip copies or injects, which llama.cpp's converter does not write
        "clip_extra": ["clip.vision.image_max_pixels", "clip.vision.image_min_pixels", "clip.vision.rope.freq_base",
                       "clip.vision.temporal_patch_size"],
        # the text model's Hugging Face folder (Qwen3MoeForCausalLM, the experts per expert), read through the translation,
        # against the source's text-only logits; the router stays F32 in the dialect file as in llama.cpp's conversion
        **F.oracle("Qwen3VLMoeForConditionalGeneration", hf, os.path.join(out, "ref", "qwen3vlmoe"), "Qwen3MoeForCausalLM",
                   keep_f32=("mlp.gate.weight",))}


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-qwen3vlmoe-"))
