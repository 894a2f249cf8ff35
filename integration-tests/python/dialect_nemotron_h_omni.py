#!/usr/bin/env python3
"""Nemotron 3 Omni / Nemotron Nano VL (GGUF architecture nemotron_h_omni) for make_dialect_fixture.py (docs/FORMATS.md §12.17).

    dialect_nemotron_h_omni.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

transformers has no class for the Nemotron Nano VL / Omni checkpoint (NemotronH_Nano_VL_V2 runs its own remote code),
but neither converter needs one: llama.cpp's (conversion/nemotron.py: NemotronNanoV2VLModel for --mmproj, NemotronHModel
over llm_config for the text) and Ollama's (convert_nemotron_h.go: nemotronHNanoVLModel) read config.json, the
safetensors and the tokenizer files. So the checkpoint is assembled here in the published layout: config.json with
architectures [NemotronH_Nano_VL_V2], the text config under llm_config, a RADIO vision_config (radio_v2.5-h, patch 16),
force_image_size, downsample_ratio, vit_hidden_size, projector_hidden_size, norm_mean / norm_std; a
preprocessor_config.json; tensors language_model.* (transformers' own NemotronHForCausalLM, hidden 64, 3 layers "M*E": a
Mamba-2 layer, an attention layer, a MoE layer of 4 routed experts, 2 used, and a shared expert; no latent projection,
no MTP head), vision_model.radio_model.* (RADIO: input conditioner, patch embedder, position table, class tokens,
blocks with fused qkv) and mlp1.* (the projector: RMS norm, linear, squared ReLU, linear; no biases); hf_models'
byte-level BPE tokenizer (400 tokens).

The tower's size is the one thing not chosen here: both converters write RADIO v2.5-h's sizes whatever the checkpoint
says (llama.cpp's NemotronNanoV2VLModel._vit_* and Ollama's visionBlockCount / visionAttentionHeads: 32 blocks of
1280, 16 heads, feed-forward 5120), and llama.cpp's converter reshapes the patch embedding and the position table
with that width. The fixture's tower therefore has ViT-H's width and shapes (patch embedding [1280, 768], class tokens
[4, 1280], an 8x8 position table resampled to the 4x4 grid of a 64-pixel image) but ONE block of the 32 the KVs
announce: enough to compare names, shapes, values and clip.* keys of mmproj.gguf with llama.cpp's --mmproj conversion,
but neither file loads in clip.cpp (block 1 is missing). A loadable tower is 32 blocks of 19.7M parameters (1.26 GB in
F16 per copy, four copies in the fixture), measured in FORMATS.md §12.17: far beyond the test's budget, so this model
has no image check (check_dialect.py asserts that the reference mmproj still lacks the announced blocks). Every weight
is F16-representable (the tower is stored as F16, the text as F32).

Reference: llama.cpp's convert_hf_to_gguf.py (text: architecture nemotron_h_moe from llm_config) and its --mmproj
conversion (projector nemotron_v2_vl). Dialect: written as Ollama's converter writes Nemotron 3 Omni,
convert/convert_nemotron_h.go (nemotronHNanoVLModel: KV, Tensors, Replacements, and nemotronHModel's for the text; at
fb3076099 of Ollama's repository) with convert.go's ModelParameters.KV, reader.go's tensorBase.Kind and tensor.go's
splitDim; each step names the Go function it follows. Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

CASE = "nemotron_h_omni"
REF_PRE = "qwen2"   # the fixture tokenizer's pre-tokenizer (Qwen 2's regex), as both converters name it
PATTERN = "M*E"     # hybrid_override_pattern: Mamba-2, attention, MoE
HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 64, 4, 2, 16
VIT, VIT_FF, VIT_BLOCKS_KV, VIT_BLOCKS = 1280, 5120, 32, 1   # RADIO v2.5-h's width (both converters); one block made
PATCH, IMAGE, SOURCE_SIDE, CLS_TOKENS, PROJ_HIDDEN = 16, 64, 8, 4, 64
MEAN, STD = [0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711]
IMAGE_TOKEN_ID = 7   # img_context_token_id (any id of the vocabulary: Ollama's converter writes it as given)


def make_omni(out_dir: str) -> None:
    """The checkpoint: the text model from transformers (saved, then under language_model.), the RADIO tower and the
    projector with numpy, config.json / preprocessor_config.json as the published Nemotron Nano VL / Omni ones."""
    import tempfile
    import torch
    import transformers as T
    from safetensors.numpy import load_file, save_file
    import dialect_nemotron as NEMO
    import make_dialect_fixture as M
    tok = H.train_tokenizer("qwen3")
    assert len(tok) % 8 == 0   # llama.cpp's NemotronH vocabulary is padded to a multiple of 8, Ollama's to vocab_size
    types = {"M": "mamba", "*": "attention", "E": "moe"}
    cfg = T.NemotronHConfig(vocab_size=len(tok), hidden_size=HIDDEN, layers_block_type=[types[c] for c in PATTERN],
                            num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, max_position_embeddings=512,
                            intermediate_size=96, mamba_num_heads=4, mamba_head_dim=32, n_groups=2, ssm_state_size=16,
                            conv_kernel=4, chunk_size=16, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
                            moe_intermediate_size=32, moe_shared_expert_intermediate_size=48, routed_scaling_factor=2.5,
                            n_group=1, topk_group=1, norm_topk_prob=True, num_nextn_predict_layers=0,
                            use_mamba_kernels=False, tie_word_embeddings=False,
                            eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None)
    torch.manual_seed(11)
    model = T.NemotronHForCausalLM(cfg)
    M.randomize(model, f16=True, std=0.2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("mixer.A_log"):
                p.copy_(torch.tensor(NEMO.a_log_values(p.numel(), np.random.default_rng(11))))
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as text_dir:
        model.save_pretrained(text_dir, safe_serialization=True)
        sd = {"language_model." + k: v for k, v in load_file(os.path.join(text_dir, "model.safetensors")).items()}
        llm = json.load(open(os.path.join(text_dir, "config.json")))
    llm["hybrid_override_pattern"] = PATTERN   # the published llm_config's fields beside transformers' own
    llm["num_hidden_layers"] = len(PATTERN)
    llm["architectures"] = ["NemotronHForCausalLM"]
    sd.update(radio_tensors(np.random.default_rng(12)))
    save_file(sd, os.path.join(out_dir, "model.safetensors"), metadata={"format": "pt"})
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    config = {"architectures": ["NemotronH_Nano_VL_V2"], "model_type": "NemotronH_Nano_VL_V2", "llm_config": llm,
              "vision_config": {"architectures": ["RADIOModel"], "version": "radio_v2.5-h", "patch_size": PATCH,
                                "max_resolution": SOURCE_SIDE * PATCH, "args": {"min_num_patches": 4, "max_num_patches": 64}},
              "force_image_size": IMAGE, "patch_size": PATCH, "downsample_ratio": 0.5, "vit_hidden_size": VIT,
              "projector_hidden_size": PROJ_HIDDEN, "img_context_token_id": IMAGE_TOKEN_ID, "norm_mean": MEAN, "norm_std": STD,
              "use_thumbnail": True, "torch_dtype": "float16"}
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:   # read by both converters
        json.dump({"image_size": IMAGE, "patch_size": PATCH, "downsample_ratio": 0.5, "max_num_tiles": 12, "use_thumbnail": True,
                   "image_mean": MEAN, "image_std": STD, "norm_mean": MEAN, "norm_std": STD}, f, indent=1)


def radio_tensors(rng) -> dict:
    """RADIO v2.5-h's tower (one block) and the projector, in the checkpoint's layout (torch [out, in]), F16."""
    def w(*shape, std=0.05):
        return rng.normal(0.0, std, shape).astype(np.float16)

    def near1(n):
        return (1.0 + 0.1 * rng.normal(size=n)).astype(np.float16)
    r = "vision_model.radio_model."
    t = {r + "input_conditioner.norm_mean": np.array(MEAN, np.float16).reshape(3, 1, 1),   # skipped by both converters
         r + "input_conditioner.norm_std": np.array(STD, np.float16).reshape(3, 1, 1),
         r + "model.patch_generator.embedder.weight": w(VIT, 3 * PATCH * PATCH),
         r + "model.patch_generator.pos_embed": w(1, SOURCE_SIDE * SOURCE_SIDE, VIT, std=0.5),
         r + "model.patch_generator.cls_token.token": w(CLS_TOKENS, VIT, std=0.5)}
    for b in range(VIT_BLOCKS):
        p = f"{r}model.blocks.{b}."
        t.update({p + "norm1.weight": near1(VIT), p + "norm1.bias": w(VIT), p + "attn.qkv.weight": w(3 * VIT, VIT),
                  p + "attn.qkv.bias": w(3 * VIT), p + "attn.proj.weight": w(VIT, VIT), p + "attn.proj.bias": w(VIT),
                  p + "norm2.weight": near1(VIT), p + "norm2.bias": w(VIT), p + "mlp.fc1.weight": w(VIT_FF, VIT),
                  p + "mlp.fc1.bias": w(VIT_FF), p + "mlp.fc2.weight": w(VIT, VIT_FF), p + "mlp.fc2.bias": w(VIT)})
    t.update({"mlp1.0.weight": near1(4 * VIT), "mlp1.1.weight": w(PROJ_HIDDEN, 4 * VIT), "mlp1.3.weight": w(HIDDEN, PROJ_HIDDEN, std=0.2)})
    return t


# --- (b) Ollama's dialect: convert/convert_nemotron_h.go, nemotronHNanoVLModel ----------------------------------------

VISION_REPLACEMENTS = [   # nemotronHNanoVLModel.Replacements(): its own pairs (the audio ones match nothing here), in Go's order
    "language_model.", "",
    "vision_model.radio_model.model.patch_generator.embedder", "v.patch_embd",
    "vision_model.radio_model.model.patch_generator.pos_embed", "v.position_embd",
    "vision_model.radio_model.model.patch_generator.cls_token.token", "v.cls_embd",
    "vision_model.radio_model.model.blocks", "v.blk",
    "attn.qkv", "attn_qkv",
    "attn.proj", "attn_out",
    "mlp.fc1", "ffn_up",
    "mlp.fc2", "ffn_down",
    "norm1", "ln1",
    "norm2", "ln2",
    "mlp1.0", "mm.norm",
    "mlp1.1", "mm.1",
    "mlp1.3", "mm.2",
]


def omni_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import dialect_gptoss as G
    import dialect_nemotron as NEMO
    import make_dialect_fixture as M
    top = json.load(open(os.path.join(hf_dir, "config.json")))
    c = top["llm_config"]
    tok, _ = M.ref_tokenizer_kvs(ref_text, "nemotron_h_moe")
    tok["tokenizer.ggml.pre"] = G.ollama_pre(hf_dir)             # ModelParameters.KV: parseTokenizer's Pre
    w = gguf.GGUFWriter(out_path, CASE)                          # nemotronHNanoVLModel.KV: general.architecture
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    a = CASE + "."
    NEMO.text_kvs(w, c, a)                                       # n.LLMConfig.KV(t), under the omni architecture
    pre = json.load(open(os.path.join(hf_dir, "preprocessor_config.json")))
    # nemotronHNanoVLModel.KV's vision keys, with its fixed RADIO v2.5-h sizes
    w.add_uint32(a + "vision.block_count", VIT_BLOCKS_KV)                              # visionBlockCount: 32
    w.add_uint32(a + "vision.embedding_length", top.get("vit_hidden_size") or 1280)    # visionEmbeddingLength
    w.add_uint32(a + "vision.feed_forward_length", 4 * (top.get("vit_hidden_size") or 1280))
    w.add_uint32(a + "vision.attention.head_count", 16)                                # visionAttentionHeads
    w.add_float32(a + "vision.attention.layer_norm_epsilon", 1e-6)
    w.add_uint32(a + "vision.patch_size", top.get("patch_size") or pre.get("patch_size") or 16)
    w.add_uint32(a + "vision.image_size", top.get("force_image_size") or pre.get("image_size") or 512)
    w.add_uint32(a + "vision.max_tiles", pre.get("max_num_tiles") or 12)
    w.add_bool(a + "vision.use_thumbnail", bool(top.get("use_thumbnail", pre.get("use_thumbnail", True))))
    args = top["vision_config"].get("args", {})
    if top["vision_config"].get("min_num_patches") or args.get("min_num_patches"):
        w.add_uint32(a + "vision.min_num_patches", top["vision_config"].get("min_num_patches") or args["min_num_patches"])
    if top["vision_config"].get("max_num_patches") or args.get("max_num_patches"):
        w.add_uint32(a + "vision.max_num_patches", top["vision_config"].get("max_num_patches") or args["max_num_patches"])
    w.add_uint32(a + "vision.num_channels", 3)
    w.add_array(a + "vision.image_mean", top.get("norm_mean") or pre.get("norm_mean") or MEAN)
    w.add_array(a + "vision.image_std", top.get("norm_std") or pre.get("norm_std") or STD)
    w.add_uint32(a + "vision.projector.scale_factor", round(1 / (top.get("downsample_ratio") or 0.5)))
    # setTokenID: the explicit img_context_token_id; <img> / </img> are not in this vocabulary (no key)
    w.add_uint32(a + "vision.image_token_id", top["img_context_token_id"])
    tokens = list(tok["tokenizer.ggml.tokens"])
    for key, token in (("vision.image_start_token_id", "<img>"), ("vision.image_end_token_id", "</img>")):
        if token in tokens:
            w.add_uint32(a + key, tokens.index(token))
    # parseTensors with Replacements() (the omni's pairs, then the text model's), then nemotronHNanoVLModel.Tensors:
    # the omitted tensors out, the text ones to nemotronHModel.Tensors first, the tower and projector after them
    repl = VISION_REPLACEMENTS + NEMO.REPLACEMENTS
    text, vision = {}, []
    for key, data in M.checkpoint_tensors(hf_dir).items():
        if key.startswith("vision_model.radio_model.input_conditioner.") or \
                key.startswith("vision_model.radio_model.model.patch_generator.video_embedder"):
            continue                                             # isNemotronHNanoVLOmittedTensor
        name = M.go_replace(key, repl)
        if name.startswith(("a.", "v.", "mm.")) or ".attn_qkv" in name:
            vision.append((name, data))
        else:
            text[name] = data.astype(np.float32)
    written = NEMO.text_tensors(w, text, c)
    for name, data in sorted(vision):   # parseTensors reads the safetensors keys in sorted order
        if ".attn_qkv" in name:          # splitDim(t, 0, attn_q, attn_k, attn_v): thirds of the rows, Kind of the source
            for part, sub in zip(np.split(data, 3, axis=0), ("attn_q", "attn_k", "attn_v")):
                out = name.replace("attn_qkv", sub)
                M.add_as_kind(w, out, part)
                written.append(out)
            continue
        if name == "v.position_embd" and data.ndim == 3 and data.shape[0] == 1:
            w.add_tensor(name, data[0].astype(np.float16))       # the shape without its leading 1; Kind F16 (3-D source)
        else:
            M.add_as_kind(w, name, data)
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def jobs(work: str, out: str):
    hf = os.path.join(work, CASE)
    return [(REF_PRE, hf, os.path.join(out, "ref", CASE + ".gguf"), False),
            (REF_PRE, hf, os.path.join(out, "ref", CASE + "-mmproj.gguf"), True)]


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The nemotron_h_omni case: source checkpoint, reference (text + --mmproj), dialect blob, expectations."""
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf = os.path.join(work, CASE)
    make_omni(hf)
    M.convert_reference(src, jobs(work, out))
    ref, ref_mmproj = jobs(work, out)[0][2], jobs(work, out)[1][2]
    dialect_file = os.path.join(out, "ref", CASE + "-dialect.gguf")
    info = omni_dialect(hf, ref, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    qkv = [f"v.blk.{b}.attn_qkv.{s}" for b in range(VIT_BLOCKS) for s in ("weight", "bias")]
    expected["models"]["dialect-" + CASE] = {
        "handler": CASE, "ref_gguf": ref, "ref_mmproj": ref_mmproj, "dialect_file": dialect_file,
        "blob": M.put_model(store, "dialect-" + CASE, blob, CASE), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS], "mmproj": True,
        "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm.", "a."))],
        # as in the nemotron_h_moe case: llama.cpp's converter permutes q/k rows (no rope reads them)
        "qk_permuted_in_ref": {"blk.1.attn_q.weight": HEADS, "blk.1.attn_k.weight": KV_HEADS},
        "ref_differences": ["nemotron_h_moe.context_length", "nemotron_h_moe.vocab_size", "nemotron_h_moe.rope.dimension_count",
                            "nemotron_h_moe.rope.scaling.finetuned"],
        # Ollama's converter splits RADIO's fused qkv (splitDim), which handle_nemotron_h_omni_clip leaves split (clip.cpp
        # reads either): the reference's attn_qkv is the translation's attn_q, attn_k, attn_v one after another
        "mmproj_split": {n: [n.replace("attn_qkv", s) for s in ("attn_q", "attn_k", "attn_v")] for n in qkv},
        # F16 in the blob, F32 in mmproj.gguf (promote_tensor_to_f32, the patch kernel's reshape); llama.cpp's converter
        # stores them as F16
        "promoted": ["v.class_embd", "v.patch_embd.weight"],
        # the 8x8 table resampled to 4x4 by Ollama's bilinear arithmetic (float weights, double coordinates), llama.cpp's by
        # torch's F.interpolate, then rounded to F16: within one F16 step of the reference (FORMATS.md §12.17)
        "resampled": ["v.position_embd.weight"],
        # handle_nemotron_h_omni_clip names the projector under clip.vision.projector_type (llama.cpp's converter writes
        # clip.projector_type for a file without audio; clip.cpp reads either), and copies keys llama.cpp's converter
        # does not write (clip.cpp reads none of them but the channel count, whose default is 3)
        "clip_renamed": {"clip.projector_type": "clip.vision.projector_type"},
        "clip_extra": ["clip.vision.projector_type", "clip.has_audio_encoder", "clip.vision.num_channels", "clip.vision.image_token_id",
                       "clip.vision.max_tiles", "clip.vision.min_num_patches", "clip.vision.max_num_patches"],
        # the KVs announce RADIO v2.5-h's 32 blocks, the fixture has one (module docstring): no image check
        "mtmd_unloadable": {"blocks": VIT_BLOCKS, "announced": VIT_BLOCKS_KV}}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-nemotron-h-omni-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
