"""GGUF models made from tiny Hugging Face models, for the Hugging Face folder of GGUF models (issue 8).

    import hf_gguf_fixtures as HG
    HG.CASES                                   # (model name, tag, kind, ggml type, hf_models overrides)
    HG.build_ggufs(HG.CASES, work_dir)         # {(name, tag): (HF source dir, GGUF bytes)}

Each source model is made by hf_models.py (random init, trained tokenizer, save_pretrained). The GGUF
is written by llama.cpp's converter (`convert_hf_to_gguf.py`, run in-process from
MODELFS_LLAMA_CPP_SRC) at F32, then re-encoded with gguf-py: F16 (numpy), Q8_0 (gguf-py's quantizer)
or Q4_K (the small numpy quantizer below: gguf-py 0.19 can only dequantize Q4_K); 1-D tensors stay
F32 as llama.cpp keeps them. Two things the converter cannot know about these home-made tokenizers
are supplied: the byte-level pre-tokenizer name (the tokenizer hash is not in its list; the regex is
Qwen2's, so "qwen2"; Phi-3's vocabulary is read as byte-level BPE the way the converter reads Phi-4's,
since these models have no tokenizer.model), and the llama tokenizer's merges (its `LlamaHfVocab` writes scores of -1000 and
no merges, so the merges list is added as gguf-py's `SpecialVocab(load_merges=True)` reads it).
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import runpy
import shutil
import sys
import tempfile

import numpy as np

BIG = dict(hidden_size=256, intermediate_size=256, num_attention_heads=4, num_key_value_heads=2, head_dim=64)
# Gemma 3: query_pre_attn_scalar = head_dim, the scale llama.cpp uses (a GGUF does not store it)
GEMMA = dict(BIG, query_pre_attn_scalar=64)
# Gemma 4 26B-A4B's routed block beside the dense MLP (enable_moe_block): 4 experts, 2 per token (hf_gguf_moe checks it matters)
GEMMA4_MOE = dict(enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=64)

# (ollama model name, tag, hf_models kind, GGUF tensor type, config overrides)
CASES = [
    ("hf-llama", "f32", "llama", "F32", BIG),
    ("hf-llama", "f16", "llama", "F16", BIG),
    ("hf-llama", "q8_0", "llama", "Q8_0", BIG),
    ("hf-llama", "q4_k", "llama", "Q4_K", BIG),
    ("hf-qwen3", "f32", "qwen3", "F32", BIG),
    ("hf-qwen3", "f16", "qwen3", "F16", BIG),
    ("hf-qwen3", "q8_0", "qwen3", "Q8_0", BIG),
    ("hf-qwen3", "q4_k", "qwen3", "Q4_K", BIG),
    ("hf-qwen2", "tied", "qwen2", "F16", dict(tie_word_embeddings=True)),
    ("hf-qwen3moe", "q8_0", "qwen3moe", "Q8_0", {}),
    ("hf-qwen2moe", "q8_0", "qwen2moe", "Q8_0", {}),
    ("hf-mixtral", "q8_0", "mixtral", "Q8_0", {}),
    ("hf-phi3", "f32", "phi3", "F32", BIG),
    ("hf-phi3", "q8_0", "phi3", "Q8_0", BIG),
    ("hf-gemma3", "f32", "gemma3", "F32", GEMMA),
    ("hf-gemma3", "q8_0", "gemma3", "Q8_0", GEMMA),
    ("hf-gemma3", "4b", "gemma3_4b", "Q8_0", GEMMA),   # global rope scaling, specials also in the vocabulary
    ("hf-gemma", "f32", "gemma", "F32", {}),            # Gemma 1 / CodeGemma
    ("hf-gemma2", "f32", "gemma2", "F32", {}),          # soft-caps and a window of 8 (hf_models.gemma2_features)
    ("hf-llama", "spm-scores", "llama", "F16", BIG),
    ("hf-llama", "rope-llama3", "llama", "Q8_0", dict(BIG, max_position_embeddings=131072, rope_parameters={
        "rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192, "rope_theta": 500000.0})),
    # issue 34 (olmo2, granitemoe, phi3 longrope)
    ("hf-olmo2", "f32", "olmo2", "F32", {}),
    ("hf-phi3", "longrope", "phi3_longrope", "F32", {}),   # 24 tokens, beyond the 8 original positions: long factors
    ("hf-granitemoe", "q8_0", "granitemoe", "Q8_0", {}),   # input_linear gathered from Q8_0 ffn_gate_exps and ffn_up_exps
    # gpt-oss and DeepSeek-V3 (hf_models_moe.py): experts gathered back, MLA's kv_b_proj re-joined
    ("hf-gptoss", "f32", "gptoss", "F32", {}),
    ("hf-gptoss", "q8_0", "gptoss", "Q8_0", {}),
    ("hf-deepseek3", "f32", "deepseek3", "F32", {}),
    ("hf-deepseek3", "q8_0", "deepseek3", "Q8_0", {}),
    # Gemma 4 text: per-layer head dimensions, proportional rope (rope_freqs), layer scalars, final soft-cap
    ("hf-gemma4", "f32", "gemma4", "F32", {}),
    ("hf-gemma4", "q8_0", "gemma4", "Q8_0", {}),
    ("hf-gemma4", "moe", "gemma4", "F32", GEMMA4_MOE),   # experts: fused gate_up, router and per-expert scales
    # Gemma 4 E2B's form: per-layer embeddings, KV sharing of the last two layers, their MLPs double-wide (issue 34)
    ("hf-gemma4", "e2b", "gemma4_e2b", "F32", {}),
    # Gemma 4 26B/31B's full layers: keys shared with values (no attn_v), head_count_kv per layer [2, 1] (issue 34)
    ("hf-gemma4", "keqv", "gemma4_keqv", "F32", {}),
    # the text models of vision-language models (hf_models_vlm.py): qwen2vl, qwen3vl, mistral3 (Mistral Small 3.1 form)
    ("hf-qwen25vl", "f32", "qwen25vl", "F32", {}),
    ("hf-qwen3vl", "f32", "qwen3vl", "F32", {}),
    ("hf-mistral3", "f32", "mistral3", "F32", {}),
    # Qwen 3.5 / 3.6 text (hf_models_qwen35.py): gated delta-net (V heads reordered, A_log from ssm_a), MTP head left out
    ("hf-qwen35", "f32", "qwen35", "F32", {}),
    ("hf-qwen35", "q8_0", "qwen35", "Q8_0", {}),
    ("hf-qwen35moe", "f32", "qwen35moe", "F32", {}),
    ("hf-qwen3vlmoe", "f32", "qwen3vlmoe", "F32", {}),   # Qwen3-VL-MoE text as Qwen3MoeForCausalLM
    ("hf-glmocr", "f32", "glmocr", "F32", {}),           # GLM-OCR text as Glm4ForCausalLM (q/k rows back from NeoX halves)
    ("hf-glmocr", "mtp", "glmocr_mtp", "F32", {}),       # ... with the published MTP layer, llama.cpp's extra block left out
]

# models not compared with transformers' own GGUF loader, and why
NO_GGUF_LOADER = {
    ("hf-llama", "rope-llama3"): "it ignores rope_freqs.weight (Llama 3.x rope scaling)",
    ("hf-gemma3", "f32"): "it keeps Gemma3TextConfig's query_pre_attn_scalar 256 and sliding-window layout",
    ("hf-gemma3", "q8_0"): "it keeps Gemma3TextConfig's query_pre_attn_scalar 256 and sliding-window layout",
    ("hf-gemma3", "4b"): "it keeps Gemma3TextConfig's query_pre_attn_scalar 256 and sliding-window layout",
    ("hf-gemma", "f32"): "it has no gemma (Gemma 1) architecture",
    ("hf-gemma2", "f32"): "it ignores the GGUF's soft-caps (keeps 50 and 30) and keeps query_pre_attn_scalar 256",
    ("hf-qwen2moe", "q8_0"): "it fails on the stacked expert tensors (t() expects a tensor with <= 2 dimensions)",
    ("hf-mixtral", "q8_0"): "it reads a llama GGUF with experts as a dense LlamaForCausalLM",
    ("hf-olmo2", "f32"): "it has no olmo2 architecture",
    ("hf-phi3", "longrope"): "it ignores rope_factors_long/short (LongRoPE)",
    ("hf-granitemoe", "q8_0"): "it has no granitemoe architecture",
    ("hf-gptoss", "f32"): "it fails on a gpt-oss GGUF (TypeError: only 0-dimensional arrays can be converted ...)",
    ("hf-gptoss", "q8_0"): "it fails on a gpt-oss GGUF (TypeError: only 0-dimensional arrays can be converted ...)",
    ("hf-deepseek3", "f32"): "it does not support deepseek2 GGUFs",
    ("hf-deepseek3", "q8_0"): "it does not support deepseek2 GGUFs",
    ("hf-gemma4", "f32"): "it keeps Gemma4TextConfig's per-layer embeddings (newly initialized) and leaves layer_scalar unread",
    ("hf-gemma4", "q8_0"): "it keeps Gemma4TextConfig's per-layer embeddings (newly initialized) and leaves layer_scalar unread",
    ("hf-gemma4", "moe"): "it keeps Gemma4TextConfig's per-layer embeddings (newly initialized) and leaves layer_scalar unread",
    ("hf-gemma4", "e2b"): "it leaves layer_scalar unread and reads neither KV sharing nor double-wide MLPs",
    ("hf-gemma4", "keqv"): "it leaves layer_scalar unread (as for the other gemma4 cases)",
    ("hf-qwen25vl", "f32"): "it has no qwen2vl architecture",
    ("hf-qwen3vl", "f32"): "it has no qwen3vl architecture",
    ("hf-mistral3", "f32"): "it has no mistral3 architecture",
    ("hf-qwen35", "f32"): "it has no qwen35 architecture",
    ("hf-qwen35", "q8_0"): "it has no qwen35 architecture",
    ("hf-qwen35moe", "f32"): "it has no qwen35moe architecture",
    ("hf-qwen3vlmoe", "f32"): "it has no qwen3vlmoe architecture",
    ("hf-glmocr", "f32"): "it has no glm4 architecture",
    ("hf-glmocr", "mtp"): "it has no glm4 architecture",
}

# GGUFs whose SentencePiece vocabulary has scores and no merges, as converted from a tokenizer.model:
# a normal piece's score is minus its id (BPE pieces in merge order), every other token scores 0
SCORES_ONLY = {("hf-llama", "spm-scores")}

FILE_TYPE = {"F32": 0, "F16": 1, "Q8_0": 7, "Q4_K": 15}


def llama_cpp_src() -> str:
    src = os.environ.get("MODELFS_LLAMA_CPP_SRC") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "node", "node_modules", ".llama.cpp-src")
    if not os.path.isfile(os.path.join(src, "convert_hf_to_gguf.py")):
        raise SystemExit(f"llama.cpp converter not found at {src} (scripts/lib.sh ensure_llama_cpp_source)")
    return src


def save_hf(kind: str, out_dir: str, overrides: dict) -> dict:
    """hf_models.save_model with some config fields changed (sizes that Q4_K's 256-element blocks fit)."""
    import hf_models as H
    orig = H.model_config

    def sized(k, vocab_size, tokenizer):
        cfg = orig(k, vocab_size, tokenizer)
        for key, val in overrides.items():
            setattr(cfg, key, val)
        return cfg

    H.model_config = sized
    try:
        return H.save_model(kind, out_dir)
    finally:
        H.model_config = orig


def convert_f32(pairs):
    """llama.cpp's convert_hf_to_gguf.py --outtype f32 for each (hf_dir, out_path), in one child process
    (the converter needs its own gguf-py, not the pinned gguf package this process has imported)."""
    import subprocess
    args = [x for p in pairs for x in p]
    subprocess.run([sys.executable, os.path.abspath(__file__), "--convert", *args], check=True,
                   stdout=subprocess.DEVNULL)


def _convert_main(args):
    src = llama_cpp_src()
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    sys.path.insert(0, src)
    import conversion.base as B   # llama.cpp's converter package
    import gguf as G              # llama.cpp's gguf-py
    B.TextModel.get_vocab_base_pre = lambda self, tokenizer: "qwen2"
    import conversion.phi as P
    P.Phi3MiniModel.set_vocab = lambda self: self._set_vocab_gpt2()
    plain_init = G.SpecialVocab.__init__

    def init(self, path, load_merges=False, *a, **kw):
        plain_init(self, path, True, *a, **kw)

    G.SpecialVocab.__init__ = init
    for hf_dir, out_path in zip(args[0::2], args[1::2]):
        sys.argv = [os.path.join(src, "convert_hf_to_gguf.py"), hf_dir, "--outtype", "f32", "--outfile", out_path]
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as e:
            if e.code:
                raise


def quantize_q4_k(x: np.ndarray) -> np.ndarray:
    """Valid Q4_K blocks (144 bytes per 256 values) close to x (rows of a multiple of 256 values).
    Not ggml's search for the best scales, just min/max per 32-value sub-block, which is all a fixture
    needs: the tests compare against gguf-py's dequantization of these very blocks."""
    v = x.astype(np.float32).reshape(-1, 8, 32)
    nb = v.shape[0]
    lo = np.minimum(v.min(axis=-1), 0.0)
    hi = v.max(axis=-1)
    scale = (hi - lo) / 15.0
    mins = -lo
    d = (scale.max(axis=-1) / 63.0).astype(np.float16)
    dmin = (mins.max(axis=-1) / 63.0).astype(np.float16)
    df, dminf = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(df > 0, np.clip(np.round(scale / df), 0, 63), 0).astype(np.uint8)
        mi = np.where(dminf > 0, np.clip(np.round(mins / dminf), 0, 63), 0).astype(np.uint8)
        es = (df * sc)[..., None]
        em = (dminf * mi)[..., None]
        q = np.where(es > 0, np.clip(np.round((v + em) / es), 0, 15), 0).astype(np.uint8)
    scales = np.zeros((nb, 12), dtype=np.uint8)
    for i in range(4):
        scales[:, i] = sc[:, i] | ((sc[:, i + 4] >> 4) << 6)
        scales[:, i + 4] = mi[:, i] | ((mi[:, i + 4] >> 4) << 6)
        scales[:, i + 8] = (sc[:, i + 4] & 0xF) | ((mi[:, i + 4] & 0xF) << 4)
    qs = np.zeros((nb, 128), dtype=np.uint8)
    for c in range(4):
        qs[:, c * 32:(c + 1) * 32] = q[:, 2 * c] | (q[:, 2 * c + 1] << 4)
    out = np.concatenate([d.view(np.uint8).reshape(nb, 2), dmin.view(np.uint8).reshape(nb, 2), scales, qs], axis=1)
    return out.reshape(*x.shape[:-1], x.shape[-1] // 256 * 144)


def requantize(f32_path: str, out_path: str, tname: str, scores_only: bool = False):
    """Re-encodes every tensor of more than one dimension of an F32 GGUF as `tname` (1-D ones and the gated delta-net's
    ssm_conv1d, which llama.cpp never quantizes, stay F32),
    every KV copied, general.file_type set."""
    import gguf as G
    r = G.GGUFReader(f32_path)
    arch = r.fields["general.architecture"].contents()
    w = G.GGUFWriter(out_path, arch)
    for key, f in r.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        vt = G.GGUFValueType(f.types[0])
        val = f.contents()
        if key == "general.file_type":
            val = FILE_TYPE[tname]
        if scores_only and key == "tokenizer.ggml.merges":
            continue
        if scores_only and key == "tokenizer.ggml.scores":
            types = r.fields["tokenizer.ggml.token_type"].contents()
            val = [-float(i) if t == 1 else 0.0 for i, t in enumerate(types)]
        sub = G.GGUFValueType(f.types[1]) if vt == G.GGUFValueType.ARRAY else None
        w.add_key_value(key, val, vt, sub_type=sub)
    qtype = G.GGMLQuantizationType[tname]
    for t in r.tensors:
        x = np.asarray(t.data, dtype=np.float32).reshape([int(n) for n in reversed(t.shape)])
        if x.ndim == 1 or tname == "F32" or t.name.endswith(".ssm_conv1d.weight"):   # llama.cpp keeps the conv F32
            w.add_tensor(t.name, x)
        elif tname == "F16":
            w.add_tensor(t.name, x.astype(np.float16))
        elif tname == "Q4_K":
            w.add_tensor(t.name, quantize_q4_k(x), raw_dtype=qtype)
        else:
            w.add_tensor(t.name, G.quants.quantize(x, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def build_ggufs(cases, work: str) -> dict:
    """{(name, tag): (HF source dir, GGUF bytes)} for `cases` (CASES entries), the HF sources saved as
    work/src-N/ (one per distinct source model, converted once)."""
    sources, pairs = {}, []
    tmp = tempfile.mkdtemp(prefix="modelfs-hf-gguf-")
    try:
        for name, tag, kind, tname, over in cases:
            key = (kind, json.dumps(over, sort_keys=True))
            if key not in sources:
                hf_dir = os.path.join(work, f"src-{len(sources)}")
                save_hf(kind, hf_dir, over)
                sources[key] = hf_dir
                pairs.append((hf_dir, os.path.join(tmp, f"src-{len(sources) - 1}.f32.gguf")))
        convert_f32(pairs)
        out = {}
        for name, tag, kind, tname, over in cases:
            hf_dir = sources[(kind, json.dumps(over, sort_keys=True))]
            path = f32 = os.path.join(tmp, os.path.basename(hf_dir) + ".f32.gguf")
            if tname != "F32" or (name, tag) in SCORES_ONLY:
                path = os.path.join(tmp, f"{name}-{tag}.gguf")
                requantize(f32, path, tname, (name, tag) in SCORES_ONLY)
            with open(path, "rb") as f:
                out[(name, tag)] = (hf_dir, f.read())
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--convert"]:
        _convert_main(sys.argv[2:])
