#!/usr/bin/env python3
"""GLM-OCR (GGUF architecture glmocr) for make_dialect_fixture.py (docs/FORMATS.md §12.15).

    dialect_glmocr.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

The source model is transformers' own GlmOcrForConditionalGeneration: a 2-layer GLM-4 text model (hidden 64, 4 heads
of 16, 2 KV heads, the fused gate_up_proj MLP, the sandwich norms, M-RoPE sections [2, 3, 3] with partial rotary
factor 1.0 as GLM-OCR's config has them) and a 2-block vision tower (hidden 32, fused QKV with q/k norms, SwiGLU MLP,
the Conv3D patch embedding of 2 frames, the Conv2D downsample and the SwiGLU merger); a byte-level BPE tokenizer trained
here with the split expression GLM-OCR's tokenizer.json carries (Llama 3's, which Ollama's parseTokenizer names
llama-bpe), GLM's special tokens and the image/video tokens; GLM-OCR's preprocessor_config.json values and a
generation_config.json with its end-of-generation ids. Every weight is F16-representable. GLM-OCR's published
checkpoint also has the MTP layer (num_nextn_predict_layers 1), which transformers' class does not build: the tiny model
has none, so neither converter sees one (llama.cpp's would write it as an extra block with nextn_predict_layers,
Ollama's left it out; llama.cpp runs both).

Reference: llama.cpp's convert_hf_to_gguf.py (GlmOCRModel, architecture glm4, and Glm4VVisionModel for --mmproj). Its
pre-tokenizer is named chatglm-bpe, as Ollama's handler sets it (llama.cpp's glm4 and chatglm-bpe select the same
expression). Dialect: written as Ollama's converter wrote the published glm-ocr files, convert/convert_glmocr.go at
commit 8f4a00813 of Ollama's repository ("Add GLM-OCR vision model support", February 2026; the next commit, 9db4bdbad,
writes llama.cpp's split files), with convert.go, reader.go, tokenizer.go and fs/ggml/gguf.go of the same commit. Each
step names the Go function it follows. Nothing here uses modelfs code.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

REF_PRE = "chatglm-bpe"
# the Split expression of GLM-OCR's tokenizer.json (GLM-4's: Llama 3's expression)
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>", "<|assistant|>",
            "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>", "<|end_of_video|>",
            "<|image|>", "<|video|>"]
EOS = ["<|endoftext|>", "<|user|>"]   # generation_config.json's eos_token_id
MROPE_SECTION = [2, 3, 3]             # the rotary half-width of the 16-wide heads
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]   # GLM-OCR's preprocessor_config.json (CLIP's statistics)
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]
PREPROCESSOR = {"size": {"shortest_edge": 12544, "longest_edge": 9633792}, "patch_size": 14, "temporal_patch_size": 2,
                "merge_size": 2, "image_mean": CLIP_MEAN, "image_std": CLIP_STD}


def make_glmocr(out_dir: str) -> None:
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = H.train_byte_level_bpe(LLAMA3_REGEX, SPECIALS, 400, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                 bos_token=None, unk_token=None, model_max_length=4096)
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    text = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                num_key_value_heads=2, max_position_embeddings=2048, rms_norm_eps=1e-5, pad_token_id=tok.pad_token_id,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": MROPE_SECTION,
                                 "partial_rotary_factor": 1.0})
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, image_size=336, patch_size=14,
                  out_hidden_size=64, spatial_merge_size=2, temporal_patch_size=2, rms_norm_eps=1e-5)
    cfg = T.GlmOcrConfig(text_config=text, vision_config=vision, image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"],
                         image_start_token_id=ids["<|begin_of_image|>"], image_end_token_id=ids["<|end_of_image|>"],
                         video_start_token_id=ids["<|begin_of_video|>"], video_end_token_id=ids["<|end_of_video|>"])
    torch.manual_seed(33)
    model = T.GlmOcrForConditionalGeneration(cfg)
    M.randomize(model, f16=True)   # norms near 1, weights N(0, 0.25): greedy decoding does not settle on one token
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [ids[t] for t in EOS], "pad_token_id": tok.pad_token_id}, f, indent=1)
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump(PREPROCESSOR, f, indent=1)


REPLACEMENTS = [   # glmOcrModel.Replacements() at 8f4a00813, in Go's order
    "model.visual.patch_embed.proj_1", "v.patch_embd_1",
    "model.visual.patch_embed.proj", "v.patch_embd",
    "model.visual.blocks", "v.blk",
    "model.visual.post_layernorm", "v.post_ln",
    "model.visual.downsample", "mm.patch_merger",
    "attn.qkv", "attn_qkv",
    "attn.proj", "attn_out",
    "attn.q_norm", "attn_q_norm",
    "attn.k_norm", "attn_k_norm",
    "norm1", "ln1",
    "norm2", "ln2",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "mlp.down_proj", "ffn_down",
    "model.visual.merger.proj", "mm.model.fc",
    "model.visual.merger.post_projection_norm", "mm.post_norm",
    "model.visual.merger.gate_proj", "mm.gate",
    "model.visual.merger.up_proj", "mm.up",
    "model.visual.merger.down_proj", "mm.down",
    "model.language_model.embed_tokens", "token_embd",
    "model.language_model.layers", "blk",
    "model.language_model.norm", "output_norm",
    "lm_head", "output",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_out",
    "input_layernorm", "attn_norm",
    "post_attention_layernorm", "ffn_norm",
    "post_self_attn_layernorm", "post_attn_norm",
    "post_mlp_layernorm", "post_ffn_norm",
    "mlp.gate_up_proj", "ffn_gate_up",
    "mlp.down_proj", "ffn_down",
]
# parseTokenizer's digest of the Split expressions -> pre-tokenizer name (the others: "default")
PRE_DIGESTS = {"d98f9631be1e9607a9848c26c1f9eac1aa9fc21ac6ba82a2fc0741af9780a48f": "llama-bpe",
               "1ff7f41064896984db5d1bb6ff64fa4bc29007d08c1b439e505b7392777a319e": "qwen2"}
SPECIAL_TYPES = ["bos", "eos", "unk", "sep", "pad", "cls", "mask"]   # convert.go's specialTokenTypes
SPECIAL_KEYS = {"unk": "unknown", "sep": "seperator", "pad": "padding"}   # SpecialVocabulary.Key()


def tokenizer_kv(hf_dir: str) -> dict:
    """ModelParameters.KV's tokenizer part from parseTokenizer / parseVocabularyFromTokenizer (tokenizer.go): tokens by
    id with the added tokens, scores = the ids, types (special added tokens control, other added tokens user-defined,
    else normal), merges, the pre-tokenizer named by the digest of the Split expressions, the special vocabulary of
    tokenizer_config.json (the types whose token is an added token) with generation_config.json's id lists."""
    tj = json.load(open(os.path.join(hf_dir, "tokenizer.json")))
    tcfg = json.load(open(os.path.join(hf_dir, "tokenizer_config.json")))
    gen = json.load(open(os.path.join(hf_dir, "generation_config.json")))
    tokens = {i: (t, 1) for t, i in tj["model"]["vocab"].items()}
    added = {a["content"]: a for a in tj["added_tokens"]}
    for a in tj["added_tokens"]:
        tokens[a["id"]] = (a["content"], 3 if a["special"] else 4)
    order = sorted(tokens)
    merges = tj["model"]["merges"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    digest = hashlib.sha256()
    pts = (tj.get("pre_tokenizer") or {}).get("pretokenizers") or []
    for pt in pts:
        if pt.get("type") == "Split" and pt.get("pattern", {}).get("Regex"):
            digest.update(pt["pattern"]["Regex"].encode())
    kv = {"tokenizer.ggml.model": ("str", "gpt2"), "tokenizer.ggml.pre": ("str", PRE_DIGESTS.get(digest.hexdigest(), "default")),
          "tokenizer.ggml.tokens": ("arr", [tokens[i][0] for i in order]),
          "tokenizer.ggml.scores": ("f32arr", [float(i) for i in order]),
          "tokenizer.ggml.token_type": ("i32arr", [tokens[i][1] for i in order]),
          "tokenizer.ggml.merges": ("arr", merges)}
    for st in SPECIAL_TYPES:
        content = tcfg.get(st + "_token")
        if isinstance(content, dict):
            content = content.get("content")
        if content not in added:
            continue
        key = SPECIAL_KEYS.get(st, st)
        kv[f"tokenizer.ggml.add_{key}_token"] = ("bool", bool(tcfg.get(f"add_{st}_token", False)))
        kv[f"tokenizer.ggml.{key}_token_id"] = ("u32", added[content]["id"])
        if isinstance(gen.get(f"{st}_token_id"), list):
            kv[f"tokenizer.ggml.{key}_token_ids"] = ("i32arr", [int(i) for i in gen[f"{st}_token_id"]])
    return kv


def model_kv(hf_dir: str) -> dict:
    """glmOcrModel.KV at 8f4a00813 (with ModelParameters.KV): the text keys, the vision keys (cmp.Or defaults), parseMore's
    preprocessor_config.json values and the special token ids of config.json, all under glmocr.*."""
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    t, v, p = c["text_config"], c["vision_config"], PREPROCESSOR
    rp = t.get("rope_parameters") or {}
    head_dim = t.get("head_dim") or t["hidden_size"] // t["num_attention_heads"]
    A = "glmocr."
    kv = {"general.architecture": ("str", "glmocr"), "general.file_type": ("u32", 1), "general.quantization_version": ("u32", 2),
          A + "block_count": ("u32", t["num_hidden_layers"]), A + "embedding_length": ("u32", t["hidden_size"]),
          A + "attention.head_count": ("u32", t["num_attention_heads"]), A + "attention.head_count_kv": ("u32", t["num_key_value_heads"]),
          A + "attention.key_length": ("u32", head_dim), A + "attention.value_length": ("u32", head_dim),
          A + "feed_forward_length": ("u32", t["intermediate_size"]),
          A + "attention.layer_norm_rms_epsilon": ("f32", t["rms_norm_eps"]),
          A + "context_length": ("u32", t["max_position_embeddings"]), A + "rope.freq_base": ("f32", rp.get("rope_theta") or 10000.0),
          A + "rope.partial_rotary_factor": ("f32", rp.get("partial_rotary_factor") or t.get("partial_rotary_factor") or 1.0),
          A + "vision.block_count": ("u32", v["depth"]), A + "vision.embedding_length": ("u32", v["hidden_size"]),
          A + "vision.attention.head_count": ("u32", v["num_heads"]), A + "vision.image_size": ("u32", v["image_size"]),
          A + "vision.patch_size": ("u32", v["patch_size"]), A + "vision.spatial_merge_size": ("u32", v["spatial_merge_size"]),
          A + "vision.temporal_patch_size": ("u32", v["temporal_patch_size"]), A + "vision.out_hidden_size": ("u32", v["out_hidden_size"]),
          A + "vision.intermediate_size": ("u32", v["intermediate_size"]),
          A + "vision.attention.layer_norm_rms_epsilon": ("f32", v["rms_norm_eps"]),
          A + "vision.min_pixels": ("u32", p["size"]["shortest_edge"]), A + "vision.max_pixels": ("u32", p["size"]["longest_edge"]),
          A + "vision.image_mean": ("f32arr", p["image_mean"]), A + "vision.image_std": ("f32arr", p["image_std"])}
    if rp.get("mrope_section"):
        kv[A + "rope.mrope_section"] = ("i32arr", list(rp["mrope_section"]))
    for k in ("image_token_id", "image_start_token_id", "image_end_token_id", "video_token_id", "video_start_token_id",
              "video_end_token_id"):
        kv[A + k] = ("u32", c[k])
    kv.update(tokenizer_kv(hf_dir))
    return kv


def kind(name: str, shape) -> str:
    """tensorBase.Kind() at 8f4a00813: .bias (and the listed names) F32, 1-D F32, the rest F16."""
    return "F32" if name.endswith((".ffn_gate_inp.weight", ".bias")) or len(shape) == 1 else "F16"


def normal_to_neox(data, heads: int, head_dim: int, factor: float):
    """normalToNeoXRepacker: per head, the rotary dimensions reordered even ones first, then odd ones."""
    rot = int(head_dim * factor) // 2 * 2
    shape = data.shape
    x = data.reshape(heads, head_dim, -1)
    out = x.copy()
    out[:, :rot // 2] = x[:, 0:rot:2]
    out[:, rot // 2:rot] = x[:, 1:rot:2]
    return out.reshape(shape)


def glmocr_tensors(hf_dir: str) -> list:
    """glmOcrModel.Tensors at 8f4a00813 over the checkpoint renamed by Replacements(): (name, F32 data), torch order."""
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    t = c["text_config"]
    rp = t.get("rope_parameters") or {}
    n_layers = t["num_hidden_layers"]
    out = []
    for key, data in M.checkpoint_tensors(hf_dir).items():
        name = M.go_replace(key, REPLACEMENTS)
        data = data.astype(np.float32)
        if name.startswith("blk.") and int(name.split(".")[1]) >= n_layers:
            continue   # skipLayer: the MTP layers
        if "ffn_gate_up" in name:   # splitDim(t, 0, ffn_gate, ffn_up): the halves of the rows
            half = data.shape[0] // 2
            out += [(name.replace("ffn_gate_up", "ffn_gate"), data[:half]), (name.replace("ffn_gate_up", "ffn_up"), data[half:])]
            continue
        if name.endswith("patch_embd.weight") and data.ndim == 5 and data.shape[2] == 2:
            # the two temporal slices [out, in, h, w] as patch_embd_0 / patch_embd_1 (the repackers' Slice on dim 2)
            out += [(name.replace("patch_embd.weight", "patch_embd_0.weight"), data[:, :, 0]),
                    (name.replace("patch_embd.weight", "patch_embd_1.weight"), data[:, :, 1])]
            continue
        if rp.get("mrope_section") and "blk." in name and ("attn_q." in name or "attn_k." in name):
            # the Q/K rows from interleaved to NeoX order (normalToNeoXRepacker) with Q's or K's head count
            heads = t["num_key_value_heads"] if "attn_k." in name else t["num_attention_heads"]
            head_dim = t.get("head_dim") or t["hidden_size"] // t["num_attention_heads"]
            factor = t.get("partial_rotary_factor") or rp.get("partial_rotary_factor") or 1.0
            data = normal_to_neox(data, heads, head_dim, factor)
        out.append((name, data))
    return out


def block_of(name: str) -> float:
    """Tensor.block() (fs/ggml/ggml.go): N of blk.N., else MaxInt (so WriteGGUF sorts by block, then name)."""
    parts = name.split(".")
    return int(parts[1]) if parts[0] == "blk" and len(parts) > 2 and parts[1].isdigit() else float("inf")


def glmocr_dialect(hf_dir: str, out_path: str) -> dict:
    """The dialect file: WriteGGUF (fs/ggml/gguf.go) of glmOcrModel.KV and glmOcrModel.Tensors: the KVs in key order,
    the tensors by block, then name, each in its Kind()."""
    import gguf
    w = gguf.GGUFWriter(out_path, "glmocr")   # general.architecture first (gguf-py writes it itself)
    kv = model_kv(hf_dir)
    for k in sorted(kv):
        if k == "general.architecture":
            continue
        typ, val = kv[k]
        if typ == "str":
            w.add_string(k, val)
        elif typ == "u32":
            w.add_uint32(k, int(val))
        elif typ == "f32":
            w.add_float32(k, float(val))
        elif typ == "bool":
            w.add_bool(k, val)
        elif typ == "f32arr":
            w.add_array(k, [float(x) for x in val])   # gguf-py writes a float list as FLOAT32
        elif typ == "i32arr":
            w.add_key_value(k, [int(x) for x in val], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.INT32)
        else:
            w.add_array(k, val)
    written = []
    for name, data in sorted(glmocr_tensors(hf_dir), key=lambda x: (block_of(x[0]), x[0])):
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if kind(name, data.shape) == "F16" else np.float32)))
        written.append(name)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {"tensors": written}


def jobs(work: str, out: str):
    hf = os.path.join(work, "glmocr")
    return [(REF_PRE, hf, os.path.join(out, "ref", "glmocr.gguf"), False),
            (REF_PRE, hf, os.path.join(out, "ref", "glmocr-mmproj.gguf"), True)]


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The glmocr case: source model, references (text and --mmproj), dialect blob, expectations."""
    import dialect_hf_folder as F
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf = os.path.join(work, "glmocr")
    make_glmocr(hf)
    M.convert_reference(src, jobs(work, out))
    ref, ref_mmproj = jobs(work, out)[0][2], jobs(work, out)[1][2]
    dialect_file = os.path.join(out, "ref", "glmocr-dialect.gguf")
    info = glmocr_dialect(hf, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-glmocr"] = {
        "handler": "glmocr", "ref_gguf": ref, "ref_mmproj": ref_mmproj, "dialect_file": dialect_file,
        "blob": M.put_model(store, "dialect-glmocr", blob, "glmocr"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))], "mmproj": True,
        "mtmd_template": "chatglm4",   # llama.cpp's built-in GLM-4 template for the image check (check_dialect.py --mtmd)
        # the special tokens Ollama's converter took from tokenizer_config.json (eos, pad) and generation_config.json;
        # llama.cpp's converter also sets bos = unk = <|endoftext|> and eot = <|user|> (Glm4Model.set_vocab), which
        # handle_glmocr does not inject. Neither file's tokenization or greedy continuation reads them (the llama check)
        "ref_differences": ["tokenizer.ggml.bos_token_id", "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.eot_token_id"],
        # handle_glmocr_clip copies the merge size, which llama.cpp's converter does not write (clip.cpp's GLM4V default is 2)
        "clip_extra": ["clip.vision.spatial_merge_size"],
        # every block's ffn_up is fused from two blob slices (TensorOp.Concat), so the other GGUF views read the stored
        # header, not the translation (FORMATS.md §12.1)
        "views_read_stored": True,
        # the text model's Hugging Face folder (Glm4ForCausalLM) read through the translation (its fused ffn_up as the two
        # blob slices), against the source's text-only logits
        **F.oracle("GlmOcrForConditionalGeneration", hf, os.path.join(out, "ref", "glmocr"), "Glm4ForCausalLM")}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-glmocr-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
