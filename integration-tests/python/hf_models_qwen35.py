"""Tiny Qwen 3.5 / 3.6 text models for hf_models.py (the kinds "qwen35" and "qwen35moe": transformers' own
Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM), whose GGUFs llama.cpp's converter writes as qwen35 / qwen35moe
(conversion/qwen.py: Qwen3NextModel.modify_tensors and _LinearAttentionVReorderBase), and check_hf_gguf.py's tensor
oracle for them: numpy inverses of what the converter does, on gguf-py's dequantization.

The models: 4 layers (full_attention_interval 4: three gated delta-net layers, then a full-attention one), 2 key heads
and 4 value heads in the delta net so that the V-head reordering moves rows and columns, partial rotation (a quarter of
the 32-wide heads), the MTP head the published checkpoints carry (mtp.*, added after save_pretrained as
dialect_qwen35.add_mtp does; transformers ignores it on load, llama.cpp's converter writes it as layer 4, which the
folder leaves out). The norms stored as 1 + w (every *norm.weight but the delta net's gated norm) start as multiples of
2^-7 so that the converter's 1 + w is exact in bfloat16, and the oracle's w = stored - 1 gives the source back.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import re

import numpy as np

KINDS = ("qwen35", "qwen35moe")
GGUF_ARCH = {"qwen35": "qwen35", "qwen35moe": "qwen35moe"}
# config fields transformers' Qwen3_5 text configs read beyond check_hf_gguf.py's common list
CONFIG_FIELDS = {t: ["layer_types", "partial_rotary_factor", "linear_conv_kernel_dim", "linear_key_head_dim",
                     "linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads"]
                 for t in ("qwen3_5_text", "qwen3_5_moe_text")}
_LINEAR = re.compile(r"model\.layers\.(\d+)\.linear_attn\.(.+)")
_LAYER = re.compile(r"model\.layers\.(\d+)\..*norm\.weight|model\.norm\.weight")


def config(kind: str, common: dict):
    import transformers as T
    text = dict(common, num_hidden_layers=4, head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=16,
                linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, rms_norm_eps=1e-6,
                rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                                 "mrope_section": [2, 1, 1], "mrope_interleaved": True})
    text.pop("bos_token_id", None)
    if kind == "qwen35moe":
        text.pop("intermediate_size")
        return T.Qwen3_5MoeTextConfig(**text, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                      shared_expert_intermediate_size=48)
    return T.Qwen3_5TextConfig(**text)


def model_class(kind: str):
    import transformers as T
    return {"qwen35": T.Qwen3_5ForCausalLM, "qwen35moe": T.Qwen3_5MoeForCausalLM}[kind]


def init(model) -> None:
    """The shifted norms as multiples of 2^-7 near 0 (Qwen 3.5 scales by 1 + w), A_log away from 0."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and _LAYER.fullmatch(name) and ".linear_attn." not in name:
                p.copy_(torch.round(12.8 * torch.randn_like(p)) / 128)
            elif name.endswith("A_log"):
                p.copy_(0.5 * torch.randn_like(p))


def after_save(kind: str, out_dir: str) -> None:
    """The MTP head beside the model (dialect_qwen35.add_mtp) and mtp_num_hidden_layers, as the published checkpoints
    have them (llama.cpp's converter requires the count unless told --no-mtp)."""
    import torch
    from safetensors.torch import load_file, save_file
    import dialect_qwen35 as Q35
    p = os.path.join(out_dir, "config.json")
    with open(p) as f:
        cfg = json.load(f)
    st = os.path.join(out_dir, "model.safetensors")
    sd = load_file(st)
    sd.update({k: torch.from_numpy(v) for k, v in Q35.mtp_tensors(cfg, kind == "qwen35moe").items()})
    save_file(sd, st, metadata={"format": "pt"})
    cfg["mtp_num_hidden_layers"] = 1
    with open(p, "w") as f:
        json.dump(cfg, f, indent=2)


def source_names(names):
    """The source tensors the folder holds: all but the MTP head."""
    return [n for n in names if not n.startswith("mtp.")]


def _untile(a: np.ndarray, axis: int, nk: int, per_k: int, head: int) -> np.ndarray:
    """The inverse of _reorder_v_heads along `axis`: tiled (per_k, nk, head) back to grouped (nk, per_k, head)."""
    shape = list(a.shape)
    t = a.reshape(shape[:axis] + [per_k, nk, head] + shape[axis + 1:])
    return np.ascontiguousarray(np.swapaxes(t, axis, axis + 1)).reshape(shape)


def oracle_tensor(name: str, deq: dict, types: dict, cfg):
    """(f32 array, GGUF type) of a gated delta-net tensor `name` from the dequantized GGUF tensors, else None."""
    m = _LINEAR.fullmatch(name)
    if not m:
        return None
    b, rest = f"blk.{m.group(1)}.", m.group(2)
    nk, nv = cfg.linear_num_key_heads, cfg.linear_num_value_heads
    hk, hv, r = cfg.linear_key_head_dim, cfg.linear_value_head_dim, nv // nk
    qk = 2 * nk * hk
    if rest == "in_proj_qkv.weight":
        g = b + "attn_qkv.weight"
        a = deq[g]
        return np.concatenate([a[:qk], _untile(a[qk:], 0, nk, r, hv)]), types[g]
    if rest == "conv1d.weight":   # GGUF [channels, kernel] (squeezed), V channels tiled
        g = b + "ssm_conv1d.weight"
        a = deq[g]
        a = np.concatenate([a[:qk], _untile(a[qk:], 0, nk, r, hv)])
        return a.reshape(a.shape[0], 1, a.shape[1]), types[g]
    simple = {"in_proj_z.weight": ("attn_gate.weight", 0, hv), "in_proj_a.weight": ("ssm_alpha.weight", 0, 1),
              "in_proj_b.weight": ("ssm_beta.weight", 0, 1), "dt_bias": ("ssm_dt.bias", 0, 1),
              "out_proj.weight": ("ssm_out.weight", 1, hv), "norm.weight": ("ssm_norm.weight", None, None)}
    if rest in simple:
        g, axis, head = simple[rest]
        a = deq[b + g]
        return (a if axis is None else _untile(a, axis, nk, r, head)), types[b + g]
    if rest == "A_log":   # ssm_a = -exp(A_log): A_log = log(-ssm_a), in float64 rounded once to float32
        g = b + "ssm_a"
        return np.log(-_untile(deq[g], 0, nk, r, 1).astype(np.float64)).astype(np.float32), types[g]
    raise KeyError(f"no oracle for {name}")
