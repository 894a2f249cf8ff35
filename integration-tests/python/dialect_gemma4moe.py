"""Case gemma4moe of make_dialect_fixture.py: Gemma 4 in the form of 26B-A4B and 31B as Ollama's converter writes them.

One tiny Gemma4ForConditionalGeneration (text only: the vision tower and audio encoder are E2B's case, dialect_gemma4.py)
with both larger models' features: experts in every layer (the router with its input scale and per-expert scale, the
stacked, fused experts, the three extra norms; 26B-A4B) and full-attention layers whose keys are their values
(attention_k_eq_v: no v_proj) with a KV-head count of their own (num_global_key_value_heads; 26B-A4B and 31B). Written by
llama.cpp's converter (the reference) and in Ollama's dialect by dialect_gemma4.gemma4_dialect, which follows
convert/convert_gemma4.go step by step (the per-layer head_count_kv array, the MoE replacements).

Variant gemma4moe-split: the same model in a checkpoint laid out as moe.gate_proj / moe.up_proj / moe.down_proj, names
gemma4Model.Replacements() also maps (to blk.N.ffn_gate_exps / ffn_up_exps / ffn_down_exps): the split expert gate and up
tensors of older Ollama gemma4 files, which upstream llama.cpp loads as they are and transformers reads fused
(experts.gate_up_proj); and without a per-expert scale (no moe.per_expert_scale, so no ffn_down_exps.scale, which Ollama's
runtime and llama.cpp take as optional): the source's per-expert scales (powers of two) multiplied into its down experts,
the same function. Its reference is llama.cpp's conversion of that folded checkpoint (experts.* names, no
router.per_expert_scale), compared with the fused tensor split; its folder must give the source model's logits.
Nothing here uses modelfs code; nothing is copied from Ollama's repository.

    dialect_gemma4moe.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out
"""
from __future__ import annotations

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

CASE = "gemma4moe"
SLIDING_KV, FULL_KV = 2, 1   # num_key_value_heads, num_global_key_value_heads (26B-A4B: 8 and 2; 31B: 16 and 4)


def make_gemma4moe(out_dir: str) -> None:
    """The source model: hidden 64, 4 layers (sliding, full, sliding, full; window 8), head_dim 32, global_head_dim 64,
    2 query heads, 2 KV heads on the sliding layers and 1 on the full ones, whose keys are their values; a dense MLP of 64
    and 4 experts of 32 (top 2) in every layer; no per-layer inputs, no KV sharing; Gemma's BPE tokenizer
    (gemma_tokenizer.py) with Gemma 4's named special tokens; weights random, norms and scales near 1, layer scalars 0.75."""
    import make_dialect_fixture as M
    import torch
    import transformers as T
    import dialect_gemma4 as G4
    tok = H.train_tokenizer("gemma3")
    from tokenizers import AddedToken
    tok.add_tokens([AddedToken(t, special=True, normalized=False) for t in G4.NAMED_SPECIALS.values()], special_tokens=True)
    text = T.Gemma4TextConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=64, num_hidden_layers=4,
                              num_attention_heads=2, num_key_value_heads=SLIDING_KV, num_global_key_value_heads=FULL_KV,
                              head_dim=32, global_head_dim=G4.GLOBAL_HEAD_DIM, attention_k_eq_v=True,
                              enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=32,
                              sliding_window=8, layer_types=["sliding_attention", "full_attention"] * 2,
                              hidden_size_per_layer_input=0, vocab_size_per_layer_input=len(tok), num_kv_shared_layers=0,
                              max_position_embeddings=4096, final_logit_softcapping=30.0, rms_norm_eps=1e-6)
    cfg = T.Gemma4Config(text_config=text.to_dict(), vision_config=None, audio_config=None,
                         boi_token_id=4, eoi_token_id=5, image_token_id=6, video_token_id=7, boa_token_id=8,
                         eoa_token_index=9, audio_token_id=11)
    torch.manual_seed(34)
    model = T.Gemma4ForConditionalGeneration(cfg)
    M.randomize(model, std=0.08)
    with torch.no_grad():
        for name, b in model.named_buffers():
            if name.endswith("layer_scalar"):
                b.fill_(0.75)
        for i, layer in enumerate(model.model.language_model.layers):   # powers of two: exact when folded (split variant)
            layer.router.per_expert_scale.copy_(torch.tensor([1.0, 2.0, 0.5, 4.0]).roll(i))
    # published configs carry the full layers' KV-head count at the top of text_config (Ollama's converter reads it there;
    # transformers 5.17 saves per_layer_config instead, and reads both)
    G4.save_gemma4(model, tok, out_dir, named_specials=True, top_level={"num_global_key_value_heads": FULL_KV})


def rewrite_checkpoint(hf_dir: str, out_dir: str, tensors: dict) -> None:
    """A copy of folder hf_dir (config and tokenizer files) whose checkpoint is `tensors`."""
    from safetensors.numpy import save_file
    shutil.copytree(hf_dir, out_dir)
    for f in os.listdir(out_dir):
        if f.endswith(".safetensors"):
            os.remove(os.path.join(out_dir, f))
    save_file(tensors, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})


def fold_scales(hf_dir: str, out_dir: str) -> None:
    """The source without router.per_expert_scale, each expert's experts.down_proj multiplied by its scale (the same routed
    output: transformers and llama.cpp multiply that expert's output by it; exact for powers of two)."""
    import make_dialect_fixture as M
    sd = M.checkpoint_tensors(hf_dir)
    out = {}
    for k, v in sd.items():
        if k.endswith(".experts.down_proj"):
            out[k] = (v * sd[k.replace(".experts.down_proj", ".router.per_expert_scale")][:, None, None]).astype(v.dtype)
        elif not k.endswith(".router.per_expert_scale"):
            out[k] = v
    rewrite_checkpoint(hf_dir, out_dir, out)


def split_checkpoint(hf_dir: str, out_dir: str) -> None:
    """Folder hf_dir with its experts laid out as moe.*: experts.gate_up_proj [E, 2·ff, hidden] cut into moe.gate_proj
    (each expert's first ff rows) and moe.up_proj (the others), experts.down_proj as moe.down_proj and router.per_expert_scale
    (when there is one) as moe.per_expert_scale, values unchanged."""
    import make_dialect_fixture as M
    sd = {}
    for k, v in M.checkpoint_tensors(hf_dir).items():
        if k.endswith(".experts.gate_up_proj"):
            ff = v.shape[1] // 2
            sd[k.replace(".experts.gate_up_proj", ".moe.gate_proj")] = v[:, :ff, :].copy()
            sd[k.replace(".experts.gate_up_proj", ".moe.up_proj")] = v[:, ff:, :].copy()
        elif k.endswith(".experts.down_proj"):
            sd[k.replace(".experts.down_proj", ".moe.down_proj")] = v
        elif k.endswith(".router.per_expert_scale"):
            sd[k.replace(".router.per_expert_scale", ".moe.per_expert_scale")] = v
        else:
            sd[k] = v
    rewrite_checkpoint(hf_dir, out_dir, sd)


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The gemma4moe case and its split variant: source model, reference, dialect blobs, expectations."""
    import make_dialect_fixture as M
    import dialect_gemma4 as G4
    from transformers import AutoTokenizer
    hf, ref = os.path.join(work, CASE), os.path.join(out, "ref", CASE + ".gguf")
    make_gemma4moe(hf)
    hf_folded, ref_folded = os.path.join(work, CASE + "-folded"), os.path.join(out, "ref", CASE + "-folded.gguf")
    fold_scales(hf, hf_folded)
    M.convert_reference(src, [("gemma4", hf, ref, False), ("gemma4", hf_folded, ref_folded, False)])
    tok = AutoTokenizer.from_pretrained(hf)
    folder = __import__("dialect_hf_folder").oracle("Gemma4ForConditionalGeneration", hf, os.path.join(out, "ref", CASE),
                                                    "Gemma4ForCausalLM", n=40, keep_f32=("router.proj",))
    hf_split = os.path.join(work, CASE + "-split")
    split_checkpoint(hf_folded, hf_split)
    for name, hf_dir, reference in ((CASE, hf, ref), (CASE + "-split", hf_split, ref_folded)):
        dialect_file = os.path.join(out, "ref", name + "-dialect.gguf")
        G4.gemma4_dialect(hf_dir, dialect_file)
        with open(dialect_file, "rb") as f:
            blob = f.read()
        expected["models"]["dialect-" + name] = {
            "handler": "gemma4", "ref_gguf": reference, "dialect_file": dialect_file, "texts": H.SAMPLE_TEXTS, "mmproj": False,
            "blob": M.put_model(store, "dialect-" + name, blob, "gemma4"),
            "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
            # the text model's folder read through the translation: experts, router scales, keys shared with values and
            # the full layers' own KV-head count, against the source's logits (the router F32 in both files); the split
            # variant's too (its experts gathered from the halves, its missing per-expert scales written as ones)
            **folder,
            # transformers initializes no key of either folder itself (the split variant's router.per_expert_scale included)
            "hf_missing_keys": [],
            # text only, so no a.* / v.* / mm.* tensor: upstream llama.cpp loads the raw file (tokenizer.ggml.model llama: a
            # SentencePiece vocabulary) and tokenizes otherwise; the published files embed the vision tower (refused raw,
            # as the gemma4 case checks)
            "raw_loads": True,
            # as the gemma4 case: Ollama's scores (the ids), no add_space_prefix / add_sep_token, which llama.cpp's
            # Gemma 4 BPE vocabulary does not read
            "ref_differences": ["tokenizer.ggml.scores", "tokenizer.ggml.add_space_prefix", "tokenizer.ggml.add_sep_token"],
            # the split variant holds each reference ffn_gate_up_exps as ffn_gate_exps and ffn_up_exps (rows of every expert)
            **({"experts_split": True} if name.endswith("-split") else {})}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-gemma4moe-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
