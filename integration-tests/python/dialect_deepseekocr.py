#!/usr/bin/env python3
"""DeepSeek-OCR (GGUF architecture deepseekocr) for make_dialect_fixture.py (docs/FORMATS.md §12.18).

    dialect_deepseekocr.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

transformers has no class for DeepSeek-OCR (the published deepseek-ai/DeepSeek-OCR runs its own remote code;
transformers 5.17's DeepseekOcr2ForConditionalGeneration is DeepSeek-OCR 2, with a Qwen 2 encoder, which llama.cpp
converts as another projector), so the tiny checkpoint is written here with numpy + safetensors in the published
checkpoint's layout, the one llama.cpp's converter reads (conversion/deepseek.py: DeepseekOCRVisionModel for --mmproj,
DeepseekV2Model with architecture deepseek2-ocr for the text) and Ollama's convert_deepseekocr.go reads:
config.json with architectures [DeepseekOCRForCausalLM], a language_config (DeepSeek-V2 without MLA: plain q/k/v/o
projections, use_mla false; hidden 64, 2 layers: a dense one, then a MoE one of 4 routed experts, 2 used, one shared
expert) and a vision_config whose width holds the CLIP-L ("clip-l-14-224": width 32, 4 layers, 2 heads,
image 224, patch 14: as many layers as SAM has blocks and neck parts, since llama.cpp's converter maps the numbered
SAM tensors only up to the CLIP block count) and SAM ViT-B ("sam_vit_b": width 32, 3 layers, 2 heads, the published global_attn_indexes [2, 5, 8, 11], which
llama.cpp hard-codes: two blocks attend in windows of 14, the third globally; clip.cpp fails on a SAM without a
global block) settings; tensors model.layers.*,
model.embed_tokens, model.norm, lm_head (the text), model.sam_model.* (SAM: patch embedding, a 64x64 position table,
blocks with relative positions for windows of 14 (the global block: the whole 64x64 grid), neck, the two stride-2 convolutions net_2 / net_3 that give the CLIP
its 16x16 input of width 32), model.vision_model.* (the CLIP over SAM's features: class embedding, an unused patch
embedding, a 257-row position table, pre-norm, blocks with fused qkv), model.projector.layers (64 -> 64),
model.image_newline and model.view_seperator (sic); hf_models' byte-level BPE tokenizer (Qwen 2's expression, which
both converters name qwen2). Every weight is F16-representable.

Reference: llama.cpp's convert_hf_to_gguf.py (text, architecture deepseek2-ocr) and its --mmproj conversion (projector
deepseekocr). Dialect: written as Ollama's converter writes deepseekocr files, convert/convert_deepseekocr.go (at
fb3076099 of Ollama's repository, unchanged since 92981ae3f "deepseekocr"), with convert.go's ModelParameters.KV,
reader.go's tensorBase.Kind and fs/ggml/gguf.go's WriteGGUF; each step names the Go function it follows.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

REF_PRE = "qwen2"   # the fixture tokenizer's pre-tokenizer (Qwen 2's expression), as both converters name it
LANG = dict(hidden_size=64, intermediate_size=96, moe_intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=4, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1,
            max_position_embeddings=2048)
CLIP = {"heads": 2, "image_size": 224, "layers": 4, "patch_size": 14, "width": 32}
SAM = {"downsample_channels": [16, 32], "global_attn_indexes": [2, 5, 8, 11], "heads": 1, "layers": 3, "width": 32}
NECK, WINDOW, SAM_GRID, SAM_PATCH = 16, 14, 64, 16


def checkpoint(vocab: int, rng) -> dict:
    """The published checkpoint's tensors (torch layout, [out, in]) for the tiny configuration, F32 holding F16 values."""
    h, ff, moe, n_exp = LANG["hidden_size"], LANG["intermediate_size"], LANG["moe_intermediate_size"], LANG["n_routed_experts"]
    sd = {}

    def w(name, *shape, std=0.25):
        sd[name] = rng.normal(0.0, std, shape).astype(np.float16).astype(np.float32)

    def norm(name, n, bias=False):   # a norm (or a bias): near 1
        sd[name] = (1.0 + 0.1 * rng.normal(0.0, 1.0, n)).astype(np.float16).astype(np.float32)
        if bias:
            sd[name.replace(".weight", ".bias")] = (0.1 * rng.normal(0.0, 1.0, n)).astype(np.float16).astype(np.float32)
    w("model.embed_tokens.weight", vocab, h)
    w("lm_head.weight", vocab, h)
    norm("model.norm.weight", h)
    for i in range(LANG["num_hidden_layers"]):
        p = f"model.layers.{i}."
        norm(p + "input_layernorm.weight", h)
        norm(p + "post_attention_layernorm.weight", h)
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            w(p + f"self_attn.{proj}.weight", h, h)
        if i < LANG["first_k_dense_replace"]:
            w(p + "mlp.gate_proj.weight", ff, h)
            w(p + "mlp.up_proj.weight", ff, h)
            w(p + "mlp.down_proj.weight", h, ff)
            continue
        w(p + "mlp.gate.weight", n_exp, h)
        for e in range(n_exp):
            w(p + f"mlp.experts.{e}.gate_proj.weight", moe, h)
            w(p + f"mlp.experts.{e}.up_proj.weight", moe, h)
            w(p + f"mlp.experts.{e}.down_proj.weight", h, moe)
        shared = moe * LANG["n_shared_experts"]
        w(p + "mlp.shared_experts.gate_proj.weight", shared, h)
        w(p + "mlp.shared_experts.up_proj.weight", shared, h)
        w(p + "mlp.shared_experts.down_proj.weight", h, shared)
    # SAM ViT-B (deepencoder's ImageEncoderViT): 16x16 patches of a 1024 image, window attention, neck, two downsamplers
    c, hd = SAM["width"], SAM["width"] // SAM["heads"]
    s = "model.sam_model."
    w(s + "patch_embed.proj.weight", c, 3, SAM_PATCH, SAM_PATCH, std=0.05)
    norm(s + "patch_embed.proj.bias", c)
    w(s + "pos_embed", 1, SAM_GRID, SAM_GRID, c, std=0.1)
    for i in range(SAM["layers"]):
        b = s + f"blocks.{i}."
        norm(b + "norm1.weight", c, bias=True)
        w(b + "attn.qkv.weight", 3 * c, c)
        norm(b + "attn.qkv.bias", 3 * c)
        w(b + "attn.proj.weight", c, c)
        norm(b + "attn.proj.bias", c)
        span = 2 * (SAM_GRID if i in SAM["global_attn_indexes"] else WINDOW) - 1   # relative positions over the block's extent
        w(b + "attn.rel_pos_h", span, hd, std=0.1)
        w(b + "attn.rel_pos_w", span, hd, std=0.1)
        norm(b + "norm2.weight", c, bias=True)
        w(b + "mlp.lin1.weight", 4 * c, c)
        norm(b + "mlp.lin1.bias", 4 * c)
        w(b + "mlp.lin2.weight", c, 4 * c)
        norm(b + "mlp.lin2.bias", c)
    w(s + "neck.0.weight", NECK, c, 1, 1)
    norm(s + "neck.1.weight", NECK, bias=True)
    w(s + "neck.2.weight", NECK, NECK, 3, 3, std=0.1)
    norm(s + "neck.3.weight", NECK, bias=True)
    w(s + "net_2.weight", SAM["downsample_channels"][0], NECK, 3, 3, std=0.1)
    w(s + "net_3.weight", SAM["downsample_channels"][1], SAM["downsample_channels"][0], 3, 3, std=0.1)
    # the CLIP-L tower over SAM's features (deepencoder's VitModel)
    d, v = CLIP["width"], "model.vision_model."
    norm(v + "embeddings.class_embedding", d)
    w(v + "embeddings.patch_embedding.weight", d, 3, CLIP["patch_size"], CLIP["patch_size"], std=0.05)
    w(v + "embeddings.position_embedding.weight", (CLIP["image_size"] // CLIP["patch_size"]) ** 2 + 1, d, std=0.1)
    norm(v + "pre_layrnorm.weight", d, bias=True)
    for i in range(CLIP["layers"]):
        b = v + f"transformer.layers.{i}."
        norm(b + "layer_norm1.weight", d, bias=True)
        w(b + "self_attn.qkv_proj.weight", 3 * d, d)
        norm(b + "self_attn.qkv_proj.bias", 3 * d)
        w(b + "self_attn.out_proj.weight", d, d)
        norm(b + "self_attn.out_proj.bias", d)
        norm(b + "layer_norm2.weight", d, bias=True)
        w(b + "mlp.fc1.weight", 4 * d, d)
        norm(b + "mlp.fc1.bias", 4 * d)
        w(b + "mlp.fc2.weight", d, 4 * d)
        norm(b + "mlp.fc2.bias", d)
    w("model.projector.layers.weight", h, 2 * d)      # the CLIP and SAM features side by side -> the text width
    norm("model.projector.layers.bias", h)
    w("model.image_newline", h, std=0.5)
    w("model.view_seperator", h, std=0.5)
    return sd


def make_deepseekocr(out_dir: str) -> None:
    from safetensors.numpy import save_file
    tok = H.train_tokenizer("qwen3")
    os.makedirs(out_dir, exist_ok=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    lang = {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "vocab_size": len(tok), **LANG,
            "kv_lora_rank": None, "q_lora_rank": None, "qk_nope_head_dim": 0, "qk_rope_head_dim": 0, "v_head_dim": 0,
            "use_mla": False, "topk_method": "greedy", "n_group": 1, "topk_group": 1, "lm_head": True, "rm_head": False,
            "bos_token_id": None, "eos_token_id": tok.eos_token_id, "torch_dtype": "float32"}
    cfg = {"architectures": ["DeepseekOCRForCausalLM"], "model_type": "deepseek_vl_v2", "language_config": lang,
           "projector_config": {"input_dim": 2 * CLIP["width"], "model_type": "mlp_projector", "n_embed": LANG["hidden_size"],
                                "projector_type": "linear"},
           "vision_config": {"image_size": 1024, "mlp_ratio": 3.7362, "model_name": "deeplip_b_l", "model_type": "vision",
                             "width": {"clip-l-14-224": dict(CLIP), "sam_vit_b": dict(SAM)}},
           "tile_tag": "2D", "global_view_pos": "head", "candidate_resolutions": [[1024, 1024]], "torch_dtype": "float32",
           "tie_word_embeddings": False, **{k: v for k, v in lang.items() if k not in ("architectures", "model_type")}}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}, f, indent=1)
    save_file(checkpoint(len(tok), np.random.default_rng(33)), os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})


REPLACEMENTS = [   # deepseekocr.Replacements(), in Go's order
    "model.embed_tokens", "token_embd",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "post_attention_layernorm", "ffn_norm",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "mlp.down_proj", "ffn_down",
    "mlp.gate", "ffn_gate_inp",
    "mlp.shared_experts.gate_proj", "ffn_gate_shexp",
    "mlp.shared_experts.up_proj", "ffn_up_shexp",
    "mlp.shared_experts.down_proj", "ffn_down_shexp",
    "model.norm", "output_norm",
    "lm_head", "output",
    "model.vision_model", "v",
    "embeddings.patch_embedding", "patch_embd",
    "embeddings.class_embedding", "class_embd",
    "embeddings.position_embedding", "position_embd",
    "transformer.layers", "blk",
    "model.projector", "mm",
    "model.image_newline", "mm.image_newline",
    "model.view_seperator", "mm.view_seperator",
    "model.sam_model.patch_embed.proj", "s.patch_embd",
    "model.sam_model.pos_embed", "s.position_embd",
    "model.sam_model.blocks", "s.blk",
    "model.sam_model.neck", "s.neck",
    "model.sam_model.net_", "s.net_",
]


def kind(name: str, shape) -> str:
    """tensorBase.Kind() (reader.go at fb3076099): the listed names F32 (s.position_embd, *rel_pos_h/w, .bias,
    ffn_gate_inp, v.position_embd), 1-D F32, else F16."""
    if (name.endswith((".ffn_gate_inp.weight", ".bias", "rel_pos_h", "rel_pos_w"))
            or name in ("v.position_embd.weight", "s.position_embd") or len(shape) == 1):
        return "F32"
    return "F16"


def block(name: str) -> int:
    """ggml.Tensor.block() (fs/ggml/ggml.go): the number after a leading blk., else MaxInt (WriteGGUF sorts by it,
    then by name)."""
    parts = name.split(".")
    return int(parts[1]) if len(parts) > 2 and parts[0] == "blk" and parts[1].isdigit() else sys.maxsize


def deepseekocr_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import dialect_gptoss as G
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    lang, width = c["language_config"], c["vision_config"]["width"]
    tok, _ = M.ref_tokenizer_kvs(ref_text, "deepseek2-ocr")
    tok["tokenizer.ggml.pre"] = G.ollama_pre(hf_dir)        # ModelParameters.KV: parseTokenizer's Pre
    kv = {}   # deepseekocr.KV: ModelParameters.KV, then the language and vision keys (WriteGGUF prefixes them, sorts all)
    a = "deepseekocr."
    kv[a + "block_count"] = ("u32", lang["num_hidden_layers"])
    kv[a + "context_length"] = ("u32", lang["max_position_embeddings"])
    kv[a + "embedding_length"] = ("u32", lang["hidden_size"])
    kv[a + "feed_forward_length"] = ("u32", lang["intermediate_size"])
    kv[a + "attention.head_count"] = ("u32", lang["num_attention_heads"])
    kv[a + "attention.head_count_kv"] = ("u32", lang["num_key_value_heads"])
    kv[a + "expert_count"] = ("u32", lang["n_routed_experts"])
    kv[a + "expert_used_count"] = ("u32", lang["num_experts_per_tok"])
    kv[a + "leading_dense_block_count"] = ("u32", lang["first_k_dense_replace"])
    clip, sam = width["clip-l-14-224"], width["sam_vit_b"]
    kv[a + "vision.block_count"] = ("u32", clip["layers"])
    kv[a + "vision.embedding_length"] = ("u32", clip["width"])
    kv[a + "vision.head_count"] = ("u32", clip["heads"])
    kv[a + "vision.image_size"] = ("u32", clip["image_size"])
    kv[a + "vision.patch_size"] = ("u32", clip["patch_size"])
    kv[a + "sam.block_count"] = ("u32", sam["layers"])
    kv[a + "sam.embedding_length"] = ("u32", sam["width"])
    kv[a + "sam.head_count"] = ("u32", sam["heads"])
    kv[a + "sam.global_attention_indexes"] = ("i32[]", sam["global_attn_indexes"])
    w = gguf.GGUFWriter(out_path, "deepseekocr")          # deepseekocr.KV: general.architecture = "deepseekocr"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    for k in sorted(kv):
        t, v = kv[k]
        if t == "u32":
            w.add_uint32(k, v)
        else:   # []int32
            w.add_key_value(k, list(v), gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.INT32)
    sd = M.checkpoint_tensors(hf_dir)
    named = {M.go_replace(k, REPLACEMENTS): v.astype(np.float32) for k, v in sd.items()}
    out = []
    # deepseekocr.Tensors: mergeTensors stacks blk.N.mlp.experts.*.{gate,up,down}_proj.weight into
    # blk.N.ffn_{gate,up,down}_exps.weight ([experts, out, in]); the other tensors as they are
    for i in range(lang["num_hidden_layers"]):
        for proj, dst in (("gate_proj", "ffn_gate_exps"), ("up_proj", "ffn_up_exps"), ("down_proj", "ffn_down_exps")):
            parts = sorted((n for n in named if n.startswith(f"blk.{i}.mlp.experts.") and n.endswith(f".{proj}.weight")),
                           key=lambda n: int(n.split(".")[4]))
            if parts:
                out.append((f"blk.{i}.{dst}.weight", np.stack([named.pop(n) for n in parts])))
    out += list(named.items())
    out.sort(key=lambda t: (block(t[0]), t[0]))            # WriteGGUF: by block, then by name
    for name, data in out:                                 # tensorBase.Kind()
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if kind(name, data.shape) == "F16" else np.float32)))
    M.finish(w)
    return {"tensors": [n for n, _ in out]}


def jobs(work: str, out: str):
    hf = os.path.join(work, "deepseekocr")
    return [(REF_PRE, hf, os.path.join(out, "ref", "deepseekocr.gguf"), False),
            (REF_PRE, hf, os.path.join(out, "ref", "deepseekocr-mmproj.gguf"), True)]


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The deepseekocr case: source checkpoint, reference (text + --mmproj), dialect blob, expectations."""
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf = os.path.join(work, "deepseekocr")
    make_deepseekocr(hf)
    M.convert_reference(src, jobs(work, out))
    ref, ref_mmproj = jobs(work, out)[0][2], jobs(work, out)[1][2]
    dialect_file = os.path.join(out, "ref", "deepseekocr-dialect.gguf")
    info = deepseekocr_dialect(hf, ref, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-deepseekocr"] = {
        "handler": "deepseekocr", "ref_gguf": ref, "ref_mmproj": ref_mmproj, "dialect_file": dialect_file,
        "blob": M.put_model(store, "dialect-deepseekocr", blob, "deepseekocr"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        "dropped": [n for n in info["tensors"] if n.startswith(("s.", "v.", "mm."))], "mmproj": True,
        "mtmd_template": "chatml",
        # F16 in the blob, F32 in mmproj.gguf (handle_deepseekocr_clip's promote_tensor_to_f32; v.position_embd is
        # already F32 in the blob)
        "promoted": ["v.patch_embd.weight", "v.sam.patch_embd.weight"],
        # KVs llama.cpp's converter writes that Ollama's converter does not and handle_deepseekocr does not inject:
        # llama.cpp reads the vocabulary size from the tokens; rope.dimension_count is 0 (the OCR graph ropes whole
        # heads); rope.freq_base is llama.cpp's default, 10000, the value the converter writes; the expert groups are
        # config.json's n_group / topk_group, 1 (no grouping: llama.cpp groups experts only for more than one group, and
        # its deepseek2-ocr loader reads neither key)
        "ref_differences": ["deepseek2-ocr.vocab_size", "deepseek2-ocr.rope.dimension_count", "deepseek2-ocr.rope.freq_base",
                            "deepseek2-ocr.expert_group_count", "deepseek2-ocr.expert_group_used_count"]}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-deepseekocr-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
