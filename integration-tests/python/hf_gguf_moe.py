"""check_hf_gguf.py's parts for gpt-oss and DeepSeek-V3 (hf_models_moe.py) and Gemma 4's experts (hf_gguf_fixtures.GEMMA4_MOE):
the tensor oracle for the HF tensors llama.cpp's converter split, transposed or renamed, the config fields these models
read, and the check that each feature the fixture stands for changes the source model's output.

Oracles are numpy inverses of what llama.cpp's converter does (conversion/gpt_oss.py, deepseek.py, gemma.py), on
gguf-py's dequantization; nothing here uses modelfs code.
"""
from __future__ import annotations

import re

import numpy as np

GGUF_ARCH = {"gptoss": "gpt-oss", "deepseek3": "deepseek2",
             "gemma4": "gemma4"}   # check_features: Gemma 4's experts, when the source has them
CONFIG_FIELDS = {
    "gpt_oss": ["sliding_window", "layer_types", "num_local_experts", "num_experts_per_tok"],
    "deepseek_v3": ["q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "n_group",
                    "topk_group", "n_routed_experts", "n_shared_experts", "routed_scaling_factor", "first_k_dense_replace",
                    "rope_interleave", "moe_intermediate_size"],
    "gemma4_text": ["top_k_experts"],
}
# Gemma4Model.modify_tensors: the router's scales under the router's and the down experts' names (gemma.py)
GEMMA4_SCALES = {"router.scale": "ffn_gate_inp.scale", "router.per_expert_scale": "ffn_down_exps.scale"}
_LAYER = re.compile(r"model\.layers\.(\d+)\.(.+)")
# logits must move by more than this when a feature is turned off (the checks compare within 1e-5)
FEATURE_EFFECT = 1e-3


def oracle_tensor(name: str, deq: dict, types: dict):
    """(f32 array, GGUF type of its first source) of HF tensor `name` when it is one the converter split,
    transposed or renamed beyond gguf-py's name map, else None."""
    m = _LAYER.fullmatch(name)
    if not m:
        return None
    b, rest = f"blk.{m.group(1)}.", m.group(2)
    if rest in GEMMA4_SCALES:
        g = b + GEMMA4_SCALES[rest]
        return deq[g], types[g]
    if rest == "self_attn.sinks":
        g = b + "attn_sinks.weight"
        return deq[g], types[g]
    if rest in ("mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj_bias"):
        suffix = "weight" if rest.endswith("proj") else "bias"
        gate, up = deq[f"{b}ffn_gate_exps.{suffix}"], deq[f"{b}ffn_up_exps.{suffix}"]
        if suffix == "weight":   # GGUF [E, ff, hidden] -> HF [E, hidden, 2ff], gate in even columns
            gate, up = gate.transpose(0, 2, 1), up.transpose(0, 2, 1)
        out = np.empty(gate.shape[:-1] + (2 * gate.shape[-1],), dtype=np.float32)
        out[..., 0::2], out[..., 1::2] = gate, up
        return out, types[f"{b}ffn_gate_exps.{suffix}"]
    if rest == "mlp.experts.down_proj":   # GGUF [E, hidden, ff] -> HF [E, ff, hidden]
        g = b + "ffn_down_exps.weight"
        return np.ascontiguousarray(deq[g].transpose(0, 2, 1)), types[g]
    if rest == "mlp.experts.down_proj_bias":
        g = b + "ffn_down_exps.bias"
        return deq[g], types[g]
    if rest == "mlp.gate.e_score_correction_bias":
        g = b + "exp_probs_b.bias"
        return deq[g], types[g]
    if rest == "self_attn.kv_b_proj.weight" and b + "attn_k_b.weight" in deq:
        k_b, v_b = deq[b + "attn_k_b.weight"], deq[b + "attn_v_b.weight"]   # [H, kv_lora, nope], [H, v, kv_lora]
        kv = np.concatenate([k_b.transpose(0, 2, 1), v_b], axis=1)          # [H, nope + v, kv_lora]
        return np.ascontiguousarray(kv.reshape(-1, kv.shape[-1])), types[b + "attn_k_b.weight"]
    return None


def _logits(model, ids):
    import torch
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].float().numpy()


def check_features(r, d, src, kind, ids):
    """Each feature the fixture stands for changes the source model's logits on `ids` by more than
    FEATURE_EFFECT when turned off, so that a folder getting it wrong cannot pass the 1e-5 comparison."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    if kind == "gemma4" and not AutoConfig.from_pretrained(src).enable_moe_block:
        return   # a dense Gemma 4: its features are hf_models.FEATURES's

    def load(**over):
        cfg = AutoConfig.from_pretrained(src)
        for k, v in over.items():
            setattr(cfg, k, v)
        return AutoModelForCausalLM.from_pretrained(src, config=cfg, dtype=torch.float32,
                                                    attn_implementation="eager").eval()

    base = _logits(load(), ids)

    def changed(what, model):
        diff = float(np.abs(_logits(model, ids) - base).max())
        r.ok(diff > FEATURE_EFFECT, f"{d}: {what} changes the source's logits by only {diff:.3g}: the fixture does not test it")

    def zeroed(pattern, value=0.0):
        m = load()
        with torch.no_grad():
            for n, p in list(m.named_parameters()) + list(m.named_buffers()):
                if re.search(pattern, n):
                    p.fill_(value)
        return m

    cfg = AutoConfig.from_pretrained(src)
    if kind == "gptoss":
        r.ok(len(ids) > cfg.sliding_window, f"{d}: sample of {len(ids)} tokens is not longer than the window {cfg.sliding_window}")
        changed("the attention sinks", zeroed(r"self_attn\.sinks$", -1e9))
        changed("the sliding window", load(layer_types=["full_attention"] * cfg.num_hidden_layers))
        changed("the router bias", zeroed(r"mlp\.router\.bias$"))
        changed("the yarn rope scaling", load(rope_parameters={"rope_type": "default",
                                                              "rope_theta": cfg.rope_parameters["rope_theta"]}))
    elif kind == "gemma4":   # the routed block: top-k of the experts, the router's input scale, the per-expert scale
        r.ok(cfg.top_k_experts < cfg.num_experts, f"{d}: top_k_experts {cfg.top_k_experts} is not below num_experts {cfg.num_experts}")
        changed("top-k routing (all experts instead)", load(top_k_experts=cfg.num_experts))
        changed("the router's input scale", zeroed(r"router\.scale$", 1.0))
        changed("the per-expert scale", zeroed(r"router\.per_expert_scale$", 1.0))
        changed("the experts", zeroed(r"experts\.down_proj$"))
    elif kind == "deepseek3":
        changed("the e_score_correction bias (expert selection)", zeroed(r"e_score_correction_bias$"))
        changed("grouped top-k routing", load(n_group=1, topk_group=1))
        changed("the shared experts", zeroed(r"shared_experts\.down_proj\.weight$"))
        changed("the yarn rope scaling", load(rope_parameters={"rope_type": "default",
                                                              "rope_theta": cfg.rope_parameters["rope_theta"]}))
