"""Tiny random gpt-oss and DeepSeek-V3 models for hf_models.py (the kinds "gptoss" and "deepseek3"); gpt-oss's
tokenizer has the harmony format's special tokens and its eos (train_tokenizer).

Each is made big enough that the feature it stands for changes the output (checked by
hf_gguf_moe.check_features on the source model): gpt-oss's attention sinks, its alternating sliding
window (8 tokens, the checkers' samples are longer) and its router bias; DeepSeek-V3's MLA attention
(q_lora/kv_lora ranks), its shared expert, grouped top-k routing with the e_score_correction bias, one
first dense layer and yarn rope scaling. Nothing here uses modelfs code.
"""
from __future__ import annotations

KINDS = ("gptoss", "deepseek3")
# kinds whose tokenizer is made here (the others: hf_models')
TOKENIZER_KINDS = ("gptoss",)


def train_tokenizer(kind: str):
    """gptoss: hf_models' Qwen-style tokenizer with gpt-oss's harmony tokens (dialect_gptoss.SPECIALS) added as special
    tokens and its eos <|return|>, as the published tokenizer_config.json has it (llama.cpp's converter takes the GGUF's eos
    from there); <|call|> and <|endoftext|> are the other stops of its generation_config.json (dialect_gptoss.STOPS)."""
    import hf_models as H
    import dialect_gptoss as G
    tok = H.train_qwen_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": [t for t in G.SPECIALS if t not in tok.get_vocab()]})
    tok.eos_token = "<|return|>"
    return tok


def config(kind: str, common: dict):
    """The transformers config of `kind` from hf_models' common fields."""
    import transformers as T
    if kind == "gptoss":   # 4 experts of 2 per token, sliding window 8 on every other layer, yarn rope as shipped
        c = dict(common, num_hidden_layers=4, intermediate_size=64)
        return T.GptOssConfig(**c, head_dim=16, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                              rope_parameters={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                                               "beta_slow": 1.0, "truncate": False,
                                               "original_max_position_embeddings": 16, "rope_theta": 150000.0})
    if kind == "deepseek3":   # layer 0 dense, layers 1-2 MoE: 8 experts in 4 groups, 2 groups and 2 experts per token
        c = dict(common, num_hidden_layers=3, num_key_value_heads=4)
        return T.DeepseekV3Config(**c, moe_intermediate_size=32, n_shared_experts=1, n_routed_experts=8,
                                  routed_scaling_factor=2.5, kv_lora_rank=64, q_lora_rank=64, qk_rope_head_dim=16,
                                  v_head_dim=32, qk_nope_head_dim=32, n_group=4, topk_group=2, num_experts_per_tok=2,
                                  first_k_dense_replace=1, norm_topk_prob=True, num_mtp_layers=0,
                                  scoring_func="sigmoid", topk_method="noaux_tc",   # as DeepSeek-V3's config.json
                                  rope_parameters={"rope_type": "yarn", "factor": 4.0, "beta_fast": 32.0,
                                                   "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                                   "original_max_position_embeddings": 128, "rope_theta": 10000.0})
    raise ValueError(kind)


def init_buffers(kind: str, model):
    """Random values for the weights transformers keeps as buffers (DeepSeek's e_score_correction_bias, zeros
    at init), large enough to change which experts are chosen."""
    import torch
    with torch.no_grad():
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                b.copy_(0.5 * torch.randn_like(b))


def model_class(kind: str):
    import transformers as T
    return {"gptoss": T.GptOssForCausalLM, "deepseek3": T.DeepseekV3ForCausalLM}[kind]
