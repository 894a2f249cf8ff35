"""Qwen 3.5 / 3.6 text models for make_gguf_fixture.py (the synthesized model.gguf of Ollama's safetensors tags,
issue 34 point 4): the kinds "qwen35" (Qwen3_5ForCausalLM, GGUF qwen35) and "qwen35moe" (Qwen3_5MoeForCausalLM,
GGUF qwen35moe), tiny models of transformers' own classes saved as save_pretrained writes them, in BF16 like the
other synth kinds, with hf_models' byte-level BPE tokenizer and chat template.

Two layers, a gated-delta-net (linear attention) layer 0 and a full-attention layer 1; 2 key heads and 4 value heads
in the linear attention, so that llama.cpp's converter moves rows (attn_qkv's V part, attn_gate, ssm_alpha/beta, ssm_a,
ssm_dt, the conv channels) and ssm_out's column blocks (the V heads grouped → tiled). Key and value heads are 32 wide
(llama.cpp's qwen35 loader assumes equal widths, as the published models have): a column block is one Q4_1 block, half
an NVFP4 block (so the nvfp4 import's ssm_out is dequantized to BF16).
No MTP head (mtp_num_hidden_layers 0): the reference is convert_hf_to_gguf.py --no-mtp. A_log values are chosen where
torch's float32 exp (the converter's -torch.exp) and a correctly rounded exp agree, so that the reference's ssm_a bytes
are the formula's, whoever computes it. Nothing here uses modelfs code.

The kinds "qwen35_vlm" (Qwen3_5ForConditionalGeneration) and "qwen35moe_vlm" (Qwen3_5MoeForConditionalGeneration) are
the published checkpoint layout, which the tags of Ollama's library are imported from: config.json with text_config and
vision_config, the text model under model.language_model.*, a (tiny) vision tower under model.visual.*; the MoE's
routed experts fused as published (mlp.experts.gate_up_proj [E, 2 * moe_intermediate_size, hidden] and
mlp.experts.down_proj [E, hidden, moe_intermediate_size], no ".weight" suffix), and the MTP head beside the model
(mtp.*, its experts per expert, text_config's mtp_num_hidden_layers 1), all in the HF folder itself, so that the
reference converts the same checkpoint. Their synthesized model.gguf is the text model's, the converter's with
--no-mtp and without --mmproj.

The quantization policy is x/create's for qwen3.5 (x/create/qwen35.go, read, not copied): in_proj_a / in_proj_b (and
in_proj_ba) stay at source precision, everything else follows the default policy (vision tensors at source precision:
x/create's isVision).
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

KINDS = ("qwen35", "qwen35moe", "qwen35_vlm", "qwen35moe_vlm")
GGUF_ARCH = {"qwen35": "QWEN35", "qwen35moe": "QWEN35MOE", "qwen35_vlm": "QWEN35", "qwen35moe_vlm": "QWEN35MOE"}
# the published multimodal layout: its fused experts are one tensor each, so each is its own blob (x/create/plan.go
# planFloat: only per-expert tensors, here the MTP layer's, are stacked into a group)
PUBLISHED = ("qwen35_vlm", "qwen35moe_vlm")
# convert_hf_to_gguf.py's extra arguments: the fixture has no MTP head
CONVERT_ARGS = ["--no-mtp"]
# imports whose routed experts are stored fused (mlp.experts.gate_up_proj.weight [E, 2 * moe_intermediate_size, hidden]),
# as the published Qwen 3.5 MoE checkpoints ship them and x/create keeps them (x/create/plan.go: pre-stacked experts)
FUSED_QUANTS = ("int4",)


def fuse_experts(sd: dict) -> dict:
    """The state dict with every layer's stacked gate_proj and up_proj experts ([E, ff, hidden] each) fused into
    gate_up_proj [E, 2 ff, hidden]: each expert's gate rows, then its up rows."""
    out = {}
    for k, v in sd.items():
        if k.endswith(".mlp.experts.gate_proj.weight"):
            up = sd[k.replace("gate_proj", "up_proj")]
            out[k.replace("gate_proj", "gate_up_proj")] = np.concatenate([v, up], axis=1)
        elif not k.endswith(".mlp.experts.up_proj.weight"):
            out[k] = v
    return out


def text_config(kind: str, vocab: int, tok) -> dict:
    kind = kind.removesuffix("_vlm")
    cfg = dict(vocab_size=vocab, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
               head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=32, linear_value_head_dim=32,
               linear_num_key_heads=2, linear_num_value_heads=4, max_position_embeddings=512, rms_norm_eps=1e-6,
               layer_types=["linear_attention", "full_attention"], tie_word_embeddings=False,
               eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id,
               rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                                "mrope_section": [2, 1, 1], "mrope_interleaved": True})
    if kind == "qwen35moe":
        cfg.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48)
    else:
        cfg.update(intermediate_size=128)
    return cfg


def _exp_agrees(v: float) -> bool:
    import torch
    x = np.float32(v)
    return bool(torch.exp(torch.tensor([x], dtype=torch.float32)).numpy()[0] == np.float32(np.exp(np.float64(x))))


def _bf16(v: float) -> float:
    import torch
    return float(torch.tensor([v], dtype=torch.float32).to(torch.bfloat16).float()[0])


def quant(name: str, shape, req: str, default):
    """x/create's qwen3.5 policy: the low-rank linear-attention projections keep their precision."""
    if name.endswith((".linear_attn.in_proj_a.weight", ".linear_attn.in_proj_b.weight", ".linear_attn.in_proj_ba.weight")):
        return None
    return default(name, shape, req)


# a tiny vision tower (Qwen3_5VisionModel): one block, its merger projecting to the text model's hidden size
VISION = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=4, spatial_merge_size=2,
              temporal_patch_size=2, out_hidden_size=64, num_position_embeddings=16)


def _model(kind: str, text: dict):
    import transformers as T
    moe = kind.startswith("qwen35moe")
    if kind in PUBLISHED:
        cfg = (T.Qwen3_5MoeConfig if moe else T.Qwen3_5Config)(text_config=text, vision_config=VISION, tie_word_embeddings=False)
        return (T.Qwen3_5MoeForConditionalGeneration if moe else T.Qwen3_5ForConditionalGeneration)(cfg)
    return T.Qwen3_5MoeForCausalLM(T.Qwen3_5MoeTextConfig(**text)) if moe else T.Qwen3_5ForCausalLM(T.Qwen3_5TextConfig(**text))


def fuse_as_published(path: str) -> None:
    """Rewrites the save_pretrained file `path` (per-expert tensors, transformers' save form) with each layer's routed
    experts as the published checkpoints store them: mlp.experts.gate_up_proj (every expert's gate rows, then its up rows)
    and mlp.experts.down_proj, stacked by expert, without suffix."""
    import torch
    from safetensors.torch import load_file, save_file
    sd = load_file(path)
    out, experts = {}, {}
    for k, v in sd.items():
        parts = k.split(".")
        if ".mlp.experts." in k and parts[parts.index("experts") + 1].isdigit():
            i = parts.index("experts")
            experts.setdefault(".".join(parts[:i + 1]), {}).setdefault(parts[i + 2], {})[int(parts[i + 1])] = v
        else:
            out[k] = v
    for prefix, by_proj in experts.items():
        stack = {p: torch.stack([by_e[e] for e in sorted(by_e)]) for p, by_e in by_proj.items()}
        out[prefix + ".gate_up_proj"] = torch.cat([stack["gate_proj"], stack["up_proj"]], dim=1).contiguous()
        out[prefix + ".down_proj"] = stack["down_proj"].contiguous()
    save_file(out, path, metadata={"format": "pt"})


def add_mtp(out_dir: str, text: dict, moe: bool) -> None:
    """The MTP head the published checkpoints carry (dialect_qwen35.mtp_tensors: mtp.fc, its norms, one layer whose
    routed experts are per expert), in BF16 as published, and text_config's mtp_num_hidden_layers. x/create imports it
    (stacking its experts); the converter with --no-mtp leaves it out."""
    import torch
    from safetensors.torch import load_file, save_file
    import dialect_qwen35
    p = os.path.join(out_dir, "model.safetensors")
    sd = load_file(p)
    sd.update({k: torch.from_numpy(v).to(torch.bfloat16) for k, v in dialect_qwen35.mtp_tensors(text, moe).items()})
    save_file(sd, p, metadata={"format": "pt"})
    c = os.path.join(out_dir, "config.json")
    with open(c) as f:
        cfg = json.load(f)
    cfg["text_config"]["mtp_num_hidden_layers"] = 1
    with open(c, "w") as f:
        json.dump(cfg, f, indent=2)


def make(kind: str, out_dir: str) -> None:
    """Saves the tiny model of `kind` and its tokenizer files to `out_dir` as hf_models.save_model saves the others."""
    import torch
    tok = H.train_tokenizer("qwen3")
    text = text_config(kind, len(tok), tok)
    torch.manual_seed(35 + KINDS.index(kind))
    model = _model(kind, text)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):   # bf16 values whose float32 exp rounds alike in torch and correctly
                vals = []
                for v in (0.5 * torch.randn(p.shape)).tolist():
                    v = _bf16(v)
                    while not _exp_agrees(v):
                        v = _bf16(v + 2 ** -7)
                    vals.append(v)
                p.copy_(torch.tensor(vals))
            elif p.dim() == 1 and name.endswith("norm.weight") and "linear_attn" not in name:
                p.copy_(0.1 * torch.randn_like(p))   # Qwen 3.5 scales by 1 + w
            elif p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.08)
    model = model.to(torch.bfloat16)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    if kind == "qwen35moe_vlm":
        fuse_as_published(os.path.join(out_dir, "model.safetensors"))
    if kind in PUBLISHED:
        add_mtp(out_dir, text, kind == "qwen35moe_vlm")
    tok.save_pretrained(out_dir)
    tc_path, tc = H.tokenizer_config_alone(out_dir)
    tc.update(add_bos_token=False, add_eos_token=False, chat_template=H.QWEN_CHAT_TEMPLATE)
    H.write_tokenizer_config(tc_path, tc)


def _reorder_v_heads(a: np.ndarray, dim: int, num_k: int, v_per_k: int, head: int) -> np.ndarray:
    """llama.cpp's _LinearAttentionVReorderBase._reorder_v_heads: dimension `dim` viewed as (num_k, v_per_k, head), the
    first two swapped (grouped by K head -> tiled)."""
    shape = list(a.shape)
    t = a.reshape(shape[:dim] + [num_k, v_per_k, head] + shape[dim + 1:])
    return np.swapaxes(t, dim, dim + 1).reshape(shape)


class Rewrite:
    """What convert_hf_to_gguf.py (Qwen3_5TextModel: _LinearAttentionVReorderBase.modify_tensors, then
    Qwen3NextModel.modify_tensors) does to HF tensor `name` beyond its name, as numpy (read from the converter, not from
    modelfs): `gguf` the GGUF name when gguf-py's map cannot give it (ssm_a without suffix, dt_bias as ssm_dt.bias),
    `values(v)` the GGUF values (logical shape) from the HF values, `f32` when the converter keeps it F32 (1-D, norms,
    ssm_conv1d), `col_block` the column-block width when columns move (a re-packed type must divide it)."""

    def __init__(self, name: str, cfg: dict, n_layers: int):
        self.gguf, self.f32, self.col_block = None, False, None
        nk, nv = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
        dk, dv = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]
        r, qk = nv // nk, 2 * nk * dk
        steps = []
        if nk != nv and ".linear_attn." in name:
            if ".in_proj_qkv." in name:
                steps.append(lambda v: np.concatenate([v[:qk], _reorder_v_heads(v[qk:], 0, nk, r, dv)], axis=0))
            elif ".in_proj_z." in name:
                steps.append(lambda v: _reorder_v_heads(v, 0, nk, r, dv))
            elif ".in_proj_a." in name or ".in_proj_b." in name or name.endswith((".A_log", ".dt_bias")):
                steps.append(lambda v: _reorder_v_heads(v, 0, nk, r, 1))
            elif ".conv1d." in name:
                steps.append(lambda v: np.concatenate([v[:qk], _reorder_v_heads(v[qk:], 0, nk, r, dv)], axis=0))
            elif ".out_proj." in name:
                steps.append(lambda v: _reorder_v_heads(v, 1, nk, r, dv))
                self.col_block = dv
        layer = name.split(".")[2] if name.startswith("model.layers.") else None
        if name.endswith(".A_log"):
            steps.append(lambda v: (-np.exp(v.astype(np.float64))).astype(np.float32))   # the exact value, rounded once
            self.gguf, self.f32 = f"blk.{layer}.ssm_a", True
        elif name.endswith(".dt_bias"):
            self.gguf, self.f32 = f"blk.{layer}.ssm_dt.bias", True
        elif ".conv1d." in name:
            steps.append(lambda v: v.reshape(v.shape[0], v.shape[-1]))   # squeezed [C, 1, K] -> [C, K]
            self.f32 = True
        elif name.endswith("norm.weight") and not name.endswith("linear_attn.norm.weight"):
            steps.append(lambda v: v + np.float32(1))
        self.steps = steps

    def values(self, v: np.ndarray) -> np.ndarray:
        for s in self.steps:
            v = s(v)
        return np.asarray(v, dtype=np.float32)
