#!/usr/bin/env python3
"""Fixture for the synthesized GGUF of safetensors LLMs (issue 7).

    make_gguf_fixture.py OUT [LLAMA_CPP_SRC]

writes
    OUT/store/...                 an Ollama store: tiny HF models (hf_models.py) imported the way Ollama's
                                  importer writes them (FORMATS.md §4.3 kinds A/B/C, the quantization
                                  policy of §5.9), in BF16 and MLX int4/int8/nvfp4/mxfp4/mxfp8, plus hostile
                                  variants and an unsupported architecture
    OUT/hf/<kind>/                the HF model directories (save_pretrained)
    OUT/ref/<kind>.gguf           llama.cpp's convert_hf_to_gguf.py output for each kind (BF16), when
                                  LLAMA_CPP_SRC (or $MODELFS_LLAMA_CPP_SRC) is given
    OUT/oracle/<dir>/<gguf name>.npy   float32 values every tensor of <dir>/model.gguf must hold
    OUT/gguf_expected.json        what check_synth_gguf.py checks (schema in its docstring)

The expected GGUF names come from gguf-py's tensor map, the values from the numpy quantizers and
dequantizers of fixture_lib (FORMATS.md §5), the q/k permutation from llama.cpp's own formula
(reshape/swapaxes, §7.2), the expected types from the rules of FORMATS.md §7.5 -- never from modelfs.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402
import hf_models as H  # noqa: E402
import make_fixture as MF  # noqa: E402
import synth_qwen35 as Q35  # noqa: E402

# which imports of which kind (keep ./test fast: every quantization once, the others where they add cover)
IMPORTS = {
    "llama": ["bf16", "int4", "nvfp4"],
    "qwen2": ["bf16"],
    "qwen3": ["bf16", "int4", "int8", "nvfp4", "mxfp4", "mxfp8"],
    "qwen3moe": ["bf16", "mxfp4"],
    "gemma3": ["bf16", "int4"],
    "phi3": ["bf16", "int8"],
    "qwen2moe": ["bf16", "int4"],        # experts stacked into [E, out, in] as Ollama's x/create writes them
    "mixtral": ["bf16", "int4"],         # experts per expert: x/create does not stack block_sparse_moe
    "gemma3_4b": ["bf16"],               # linear rope scaling of the global layers, specials also in the vocabulary
    "gemma": ["bf16"],                   # Gemma 1 / CodeGemma
    "gemma2": ["bf16"],                  # soft-caps, sliding window on alternate layers
    "olmo2": ["bf16"],                   # post-norms only, q/k norms over the whole projection
    "phi3_longrope": ["bf16"],           # LongRoPE: rope_factors_long/short and rope.scaling.attn_factor
    "granitemoe": ["bf16"],              # multipliers; input_linear split into ffn_gate_exps / ffn_up_exps
    # Ollama's safetensors tags of gemma4 (-mlx, -nvfp4, -mxfp8: x/create's gemma4 policy, embedding 8-bit, issue 34 point 4)
    "gemma4": ["bf16", "int4", "nvfp4", "mxfp8"],
    # Gemma4ForConditionalGeneration in E2B's form (dialect_gemma4: per-layer embeddings, KV sharing, double-wide MLPs):
    # the text of model.language_model.*, towers left out
    "gemma4_vlm": ["bf16", "nvfp4"],
    # Ollama's safetensors tags of qwen3.5 (x/create's qwen3.5 policy; synth_qwen35.py): gated delta-net + full attention
    "qwen35": ["bf16", "int4", "nvfp4", "mxfp8"],
    "qwen35moe": ["bf16", "int4"],      # qwen3.6: experts stacked [E, out, in] (bf16) or gate and up fused (int4, Q35.FUSED_QUANTS), a shared expert
    # their published layout, Qwen3_5(Moe)ForConditionalGeneration (text under model.language_model.*, a vision tower): the
    # text model; the MoE's experts fused as published (mlp.experts.gate_up_proj, down_proj, no suffix), one blob each
    "qwen35_vlm": ["bf16", "int4"],
    "qwen35moe_vlm": ["bf16", "nvfp4"],
    "gemma4_moe": ["bf16", "int4"],     # 26B-A4B's experts (hf_gguf_fixtures.GEMMA4_MOE): stacked, fused gate_up, router scales
    "gemma4_keqv": ["bf16"],            # 26B/31B's full layers: keys shared with values (no v_proj), their own KV-head count
}
GROUP = {"nvfp4": 16, "int4": 64, "int8": 64, "mxfp4": 32, "mxfp8": 32}
GGUF_ARCH = {"llama": "LLAMA", "qwen2": "QWEN2", "qwen3": "QWEN3", "qwen3moe": "QWEN3MOE", "gemma3": "GEMMA3",
             "phi3": "PHI3", "qwen2moe": "QWEN2MOE", "mixtral": "LLAMA", "gemma3_4b": "GEMMA3",
             "gemma": "GEMMA", "gemma2": "GEMMA2",
             "olmo2": "OLMO2", "phi3_longrope": "PHI3", "granitemoe": "GRANITE_MOE",
             "gemma4": "GEMMA4", "gemma4_vlm": "GEMMA4", "gemma4_moe": "GEMMA4",
             "gemma4_keqv": "GEMMA4", **Q35.GGUF_ARCH}
# llama.cpp's converter stores these architectures' norm weights (HF names ending in norm.weight) as 1 + w
NORM_SHIFT = {"gemma3": 1.0, "gemma3_4b": 1.0, "gemma": 1.0, "gemma2": 1.0}
# model names: llama.cpp gives a model whose general.name contains "phi3" or "phi-3" Phi-3's SentencePiece
# token attributes (it looks up "</s>", "<unk>", "<s>" by text and fails without them); these byte-level
# fixtures are named so that it does not
NAMES = {"phi3": "synth-phi", "gemma3_4b": "synth-gemma3-4b", "phi3_longrope": "synth-phi-longrope"}
REF_NAMES = {"phi3": "tiny-phi", "phi3_longrope": "tiny-phi-longrope"}
# tensors llama.cpp's converter computes from config.json (Phi3MiniModel.generate_extra_tensors): GGUF name -> rope field
COMPUTED = {"rope_factors_long.weight": "long_factor", "rope_factors_short.weight": "short_factor"}
# kinds whose q/k rows llama.cpp permutes (LlamaModel.permute)
PERMUTED = ("llama", "mixtral", "granitemoe")
# HF tensors llama.cpp's converter splits (GraniteMoeModel.modify_tensors): per expert, the parts' rows in order
FUSED = {re.compile(r"model\.layers\.(\d+)\.block_sparse_moe\.input_linear\.weight"): ("ffn_gate_exps", "ffn_up_exps"),
         # Qwen 3.5 MoE's fused experts as published (no suffix) and as x/create keeps them (Qwen2MoeModel.modify_tensors splits them)
         re.compile(r"model\.layers\.(\d+)\.mlp\.experts\.gate_up_proj(?:\.weight)?"): ("ffn_gate_exps", "ffn_up_exps")}
# Mixtral's per-expert tensors, which llama.cpp's converter stacks as layers.N.feed_forward.experts.wK
MIXTRAL_EXPERT = re.compile(r"model\.layers\.(\d+)\.block_sparse_moe\.experts\.(\d+)\.(w[123])\.weight")


def aligned(shape, qt):
    return shape[-1] % GROUP[qt] == 0


def gemma4_quant(name, shape, req, n_layers):
    """x/create's gemma4 policy (x/create/gemma4.go, read, not copied): the token embedding in the requested family's
    8-bit type (else the requested type when aligned); v_proj and down_proj 8-bit in the layers useMoreBits picks (the
    first and last eighth, every third between), k_proj never promoted (no 8-expert model), else the default policy."""
    eight = "int8" if req in ("int4", "int8") else "mxfp8"
    if name.endswith("embed_tokens.weight") and "per_layer" not in name:
        return eight if aligned(shape, eight) else req if aligned(shape, req) else None
    if any(s in name for s in (".v_proj", ".k_proj", "down_proj")) and eight != req:
        layer = int(re.search(r"\.layers\.(\d+)\.", name).group(1))
        first, last = n_layers // 8, 7 * n_layers // 8
        more = ".k_proj" not in name and (layer < first or layer >= last or (first <= layer < last and (layer - first) % 3 == 2))
        if more and aligned(shape, eight):
            return eight
        return req if aligned(shape, req) else None
    return ollama_quant(name, shape, req)


def ollama_quant(name, shape, req, draft=False):
    """The quant type Ollama's importer gives a tensor (FORMATS.md §5.9 default policy), or None; a draft's
    output head (tied embedding or lm_head) takes the requested type (x/create/draft.go draftPolicy)."""
    if req == "bf16":
        return None
    if draft and (name.endswith("embed_tokens.weight") or name.endswith("lm_head.weight")):
        return req if shape[-1] % GROUP[req] == 0 else None
    expert = any(s in name for s in (".experts.", ".mlp.switch_mlp.", ".mlp.shared_experts.")) \
        and (name.endswith(".weight") or ".experts." in name and not name.endswith((".bias", ".scale")))   # gemma4's stacked experts.X
    if not expert and (any(s in name for s in ("embed", "norm", "ln_", "layernorm")) or not name.endswith(".weight")):
        return None
    if not (len(shape) == 2 or (expert and len(shape) == 3)) or int(np.prod(shape)) < 1024:
        return None
    if name.endswith(".mlp.gate.weight"):
        return None
    eight = "int8" if req in ("int4", "int8") else "mxfp8"
    if name.endswith("lm_head.weight"):
        return eight if shape[-1] % GROUP[eight] == 0 else None
    if "vision" in name or "visual" in name:   # x/create's isVision: source precision
        return None
    if shape[-1] % GROUP[req]:
        return None
    promote = req == "int4" or (req in ("nvfp4", "mxfp4") and not expert)
    if promote and any(s in name for s in (".v_proj", ".k_proj", "down_proj")) and shape[-1] % GROUP[eight] == 0:
        return eight
    return req


def make_lt(name, w, qt):
    if qt is None:
        return MF.lt_plain(name, w, "BF16")
    if qt in ("int4", "int8"):
        return MF.lt_affine(name, w, 4 if qt == "int4" else 8, 64, "BF16", qt)
    return {"nvfp4": MF.lt_nvfp4, "mxfp4": MF.lt_mxfp4, "mxfp8": MF.lt_mxfp8}[qt](name, w)


def load_state(hf_dir):
    """HF state dict as float32 numpy (the BF16 values exactly), per-expert tensors stacked as Ollama does."""
    from safetensors.torch import load_file
    sd = {k: v.float().numpy() for k, v in load_file(os.path.join(hf_dir, "model.safetensors")).items()}
    stacked, experts = {}, {}
    for k in sorted(sd):
        parts = k.split(".")
        if ".mlp.experts." in k and parts[5].isdigit():      # {model,mtp}.layers.L.mlp.experts.E.proj.weight
            experts.setdefault((".".join(parts[:5]), parts[6]), {})[int(parts[5])] = sd[k]
        else:
            stacked[k] = sd[k]
    for (group, proj), by_e in experts.items():
        stacked[f"{group}.{proj}.weight"] = np.stack([by_e[e] for e in sorted(by_e)])
    return stacked


def permute(w, n_head):
    """llama.cpp's LlamaModel.permute (FORMATS.md §7.2)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_arch_name(kind):
    """general.architecture of `kind` (gguf-py's MODEL_ARCH_NAMES: granitemoe for GRANITE_MOE)."""
    import gguf
    return gguf.MODEL_ARCH_NAMES[getattr(gguf.MODEL_ARCH, GGUF_ARCH[kind])]


def gguf_name(kind, hf_name, n_layers):
    import gguf
    arch = getattr(gguf.MODEL_ARCH, GGUF_ARCH[kind])
    tmap = gguf.get_tensor_name_map(arch, n_layers)
    import hf_gguf_moe
    scale = next((g for h, g in hf_gguf_moe.GEMMA4_SCALES.items() if hf_name.endswith("." + h)), None)
    if scale:   # Gemma4Model.modify_tensors renames the router's scales
        return f"blk.{hf_name.split('.')[2]}.{scale}"
    if not hf_name.endswith((".weight", ".bias")) and tmap.get_name(hf_name):   # a buffer (gemma4's layer_scalar; experts.X)
        return tmap.get_name(hf_name) + ".weight"
    base, suf = hf_name.rsplit(".", 1)
    n = tmap.get_name(base)
    if n is None and ".mlp.experts." in base:     # Ollama's stacked experts: gguf-py knows the switch_mlp spelling
        n = tmap.get_name(base.replace(".mlp.experts.", ".mlp.switch_mlp."))
    if n is None:
        raise KeyError(f"gguf-py has no name for {hf_name}")
    return f"{n}.{suf}"


def f16_exact(a):
    a = np.asarray(a, dtype=np.float32)
    return bool(np.all(np.isfinite(a)) and np.array_equal(a.astype(np.float16).astype(np.float32).view(np.uint32),
                                                          a.view(np.uint32)))


def bf16_round(a):
    import ml_dtypes
    return np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def expected_tensor(lt, gname, perm_heads, rounded=True, shift=0.0, rewrite=None):
    """(type, exact, f32 values in GGUF row order) by FORMATS.md §7.5 (`rounded=False`: before any
    BF16 rounding); `shift` is added in f32 (gemma3 norms: 1 + w, as llama.cpp's converter writes them);
    `rewrite` (synth_qwen35.Rewrite) does what the converter does to a Qwen 3.5 tensor instead of the shift."""
    vals = np.asarray(lt.oracle, dtype=np.float32).reshape(lt.logical_shape)
    if rewrite is not None:
        vals = rewrite.values(vals)
    elif shift:
        vals = vals + np.float32(shift)
    if perm_heads:
        vals = permute(vals, perm_heads)
    norm_like = len(lt.logical_shape) == 1 or gname.endswith("_norm.weight") or gname.endswith("ffn_gate_inp.weight") \
        or gname.endswith("ffn_gate_inp_shexp.weight") or (rewrite is not None and rewrite.f32)
    q = lt.quant
    # columns moved in blocks (Qwen 3.5's ssm_out): a re-packed type only when its blocks divide a column block
    fits = (lambda n: rewrite is None or rewrite.col_block is None or rewrite.col_block % n == 0)
    if norm_like:
        return "F32", True, vals
    if q is None:
        return "BF16", True, vals
    if q["mode"] == "mxfp4" and fits(32):
        return "MXFP4", True, vals
    if q["mode"] == "nvfp4" and ".global_scale" not in lt.comps and lt.logical_shape[-1] % 64 == 0 and fits(64):
        return "NVFP4", True, vals
    if q["mode"] == "affine" and q["bits"] == 4 and fits(32):
        sc = L.st_bytes_to_f32(lt.comps[".scale"][2], lt.comps[".scale"][0], lt.comps[".scale"][1])
        bi = L.st_bytes_to_f32(lt.comps[".bias"][2], lt.comps[".bias"][0], lt.comps[".bias"][1])
        if f16_exact(sc) and f16_exact(bi):
            return "Q4_1", True, vals
    return "BF16", False, bf16_round(vals) if rounded else vals


class Builder:
    def __init__(self, out, llama_src):
        self.fx = MF.Fixture(out)
        self.out = self.fx.out
        self.llama_src = llama_src
        self.exp = {"models": {}, "hostile": {}, "refs": {}, "draft_refused": {}}

    def hf(self, kind):
        d = os.path.join(self.out, "hf", kind)
        if not os.path.isdir(d) and kind == "gemma4_vlm":
            make_gemma4_vlm(d)
        elif not os.path.isdir(d) and kind in Q35.KINDS:
            Q35.make(kind, d)
        elif not os.path.isdir(d) and kind == "gemma4_moe":
            import hf_gguf_fixtures as HG
            HG.save_hf("gemma4", d, HG.GEMMA4_MOE)
        elif not os.path.isdir(d):
            H.save_model(kind, d)
        return d

    def reference(self, kind):
        if not self.llama_src:
            return None
        out = os.path.join(self.out, "ref", kind + ".gguf")
        if not os.path.exists(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
            r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_convert.py"),
                                self.llama_src, self.hf(kind), out] + (["qwen2", REF_NAMES[kind]] if kind in REF_NAMES else [])
                               + (["--"] + Q35.CONVERT_ARGS if kind in Q35.KINDS else []),
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"convert_hf_to_gguf.py failed for {kind}:\n{r.stdout}\n{r.stderr}")
        return out

    def write_tensors(self, m, kind, quant, prefix="", draft=False):
        """Writes HF model `kind`'s tensors quantized as `quant` into model `m` the way Ollama's importer does,
        every tensor and blob name prefixed with `prefix` (a draft's "draft.", x/create/draft.go prefixSpecs);
        returns ({hf name: LT}, {hf name: quant type or None})."""
        sd = load_state(self.hf(kind))
        if kind in Q35.KINDS and quant in Q35.FUSED_QUANTS:
            sd = Q35.fuse_experts(sd)
        tensors, lts = {}, {}
        groups = {}
        n_layers = text_config(json.load(open(os.path.join(self.hf(kind), "config.json"))))["num_hidden_layers"]
        for k in sorted(sd):
            qt = gemma4_quant(k, sd[k].shape, quant, n_layers) if kind.startswith("gemma4") and quant != "bf16" \
                else Q35.quant(k, sd[k].shape, quant, ollama_quant) if kind in Q35.KINDS \
                else ollama_quant(k, sd[k].shape, quant, draft=draft)
            lt = make_lt(prefix + k, sd[k], qt)
            lts[k] = lt
            if ".mlp.experts." in k and (kind not in Q35.PUBLISHED or k.startswith("mtp.")):
                groups.setdefault(k.rsplit(".", 2)[0], []).append((prefix + k, lt, qt))
            elif qt is None:
                m.tensor_blob(prefix + k, [(lt, prefix + k)])                           # kind A
            else:
                m.tensor_blob(prefix + k, [(lt, prefix + k)], writer="mlx", metadata=MF.qmeta(qt, GROUP[qt]),
                              seed=len(tensors))                                        # kind B
            tensors[k] = qt
        for gp, parts in sorted(groups.items()):                                       # kind C homogeneous
            qts = {qt for _, _, qt in parts}
            if len(qts) > 1:   # mixed precisions: one blob per projection (x/create's homogeneousExpertBlobs)
                for k, lt, qt in parts:
                    if qt is None:   # a projection kept at source precision (its rows not a multiple of the group)
                        m.tensor_blob(k, [(lt, k)])
                    else:
                        m.tensor_blob(k, [(lt, k)], writer="mlx", metadata=MF.qmeta(qt, GROUP[qt]), seed=len(tensors))
                continue
            qt = qts.pop()
            if qt is None:
                m.tensor_blob(prefix + gp, [(lt, k) for k, lt, _ in parts])
            else:
                m.tensor_blob(prefix + gp, [(lt, k) for k, lt, _ in parts], writer="mlx", metadata=MF.qmeta(qt, GROUP[qt]),
                              seed=7)
        return lts, tensors

    def json_files(self, kind, mutate=None):
        files = {}
        for f in ("config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"):
            with open(os.path.join(self.hf(kind), f), "rb") as fh:
                files[f] = fh.read()
        if mutate:
            mutate(files)
        return files

    def import_model(self, kind, quant, name=None, mutate=None, about=None, draft=None, draft_mutate=None):
        """Imports HF model `kind` quantized as `quant` into model `name`; `mutate(files)` may change the JSON
        files. `draft=(kind, quant)` imports a speculative-decoding draft with it, as `ollama create` with a
        DRAFT line and --draft-quantize does (x/create/client/create.go, FORMATS.md §4.3 H): tensors and blobs
        prefixed "draft.", the draft's JSON files as draft/<file>, the config blob's "draft" object; the draft
        is expected as the model folder <model>/draft (`draft_mutate` may change its JSON files)."""
        name = name or NAMES.get(kind, f"synth-{kind}")
        tag = "latest" if quant == "bf16" else quant
        m = self.fx.model("registry.ollama.ai", "library", name, tag,
                          about or f"hf_models {kind} imported as Ollama {quant}")
        lts, tensors = self.write_tensors(m, kind, quant)
        files = self.json_files(kind, mutate)
        for f, data in files.items():
            m.json_layer(f, raw=data)
        extra = {}
        if draft:
            dlts, dtensors = self.write_tensors(m, draft[0], draft[1], prefix="draft.", draft=True)
            dfiles = self.json_files(draft[0], draft_mutate)
            for f, data in dfiles.items():
                m.json_layer("draft/" + f, raw=data)
            dcfg = json.loads(dfiles["config.json"])
            extra["draft"] = {"model_format": "safetensors", "architecture": (dcfg.get("architectures") or [""])[0],
                              "tensor_prefix": "draft.", "config": "draft/config.json"}
        vision = "vision_config" in json.loads(files["config.json"])   # x/create's detectCapabilities
        m.set_config(MF.st_config("" if quant == "bf16" else quant, capabilities=("completion", "vision") if vision
                                  else ("completion",), **extra))
        m.finish()
        self.expect(m.dir, kind, quant, lts, tensors, files, mutate is None)
        if draft:
            self.expect(m.dir + "/draft", draft[0], draft[1], dlts, dtensors, dfiles, draft_mutate is None)
        return m.dir

    def expect(self, d, kind, quant, lts, tensors, files, unchanged):
        """The expected model.gguf of the model folder `d` (FORMATS.md §7.5)."""
        hf = self.hf(kind)
        cfg = text_config(json.loads(files["config.json"]))
        n_layers = cfg["num_hidden_layers"]
        perm = {}
        if kind in PERMUTED:
            perm = {"q_proj": cfg["num_attention_heads"], "k_proj": cfg.get("num_key_value_heads", cfg["num_attention_heads"])}
        expected = {}
        per_expert = {}
        if kind == "gemma4_vlm" or kind in Q35.PUBLISHED:   # the text model's tensors under its names; the towers are mmproj's
            text = "model.language_model."   # other model.* tensors are the towers'; lm_head stays

            def textual(d):
                return {"model." + k[len(text):] if k.startswith(text) else k: v for k, v in d.items()
                        if k.startswith(text) or not k.startswith("model.")}
            lts, tensors = textual(lts), textual(tensors)
        if kind in Q35.KINDS:   # the MTP head, which --no-mtp leaves out
            lts = {k: v for k, v in lts.items() if not k.startswith("mtp.")}
        for k, lt in lts.items():
            fused = next(((m, parts) for rx, parts in FUSED.items() if (m := rx.fullmatch(k))), None)
            if fused:   # each part: the same type as the whole, its rows of every expert
                typ, exact, vals = expected_tensor(lt, k, None)
                full = None if exact else expected_tensor(lt, k, None, rounded=False)[2]
                for i, (v, f) in enumerate(zip(np.split(vals, len(fused[1]), axis=1),
                                               np.split(full, len(fused[1]), axis=1) if full is not None else [None] * len(fused[1]))):
                    g = f"blk.{fused[0].group(1)}.{fused[1][i]}.weight"
                    expected[g] = {"type": typ, "exact": exact, "hf_name": k, "stored": tensors[k] or "BF16",
                                   "shape": [int(x) for x in v.shape], "oracle": self.fx.oracle(d, g, v)}
                    if f is not None:
                        expected[g]["values"] = self.fx.oracle(d, g + ".f32", f)
                continue
            x = MIXTRAL_EXPERT.fullmatch(k)
            if x:
                per_expert.setdefault(gguf_name(kind, f"layers.{x.group(1)}.feed_forward.experts.{x.group(3)}.weight",
                                                n_layers), {})[int(x.group(2))] = (k, lt)
                continue
            rw = Q35.Rewrite(k, cfg, n_layers) if kind in Q35.KINDS else None
            g = rw.gguf if rw and rw.gguf else gguf_name(kind, k, n_layers)
            heads = next((h for p, h in perm.items() if f".self_attn.{p}." in k), None)
            shift = NORM_SHIFT.get(kind, 0.0) if k.endswith("norm.weight") else 0.0
            typ, exact, vals = expected_tensor(lt, g, heads, shift=shift, rewrite=rw)
            expected[g] = {"type": typ, "exact": exact, "hf_name": k, "stored": tensors[k] or "BF16",
                           "shape": [int(x) for x in vals.shape], "oracle": self.fx.oracle(d, g, vals)}
            if not exact:   # the values before model.gguf's BF16 rounding, for the fp32/fp16 variants
                _, _, full = expected_tensor(lt, g, heads, rounded=False, shift=shift, rewrite=rw)
                expected[g]["values"] = self.fx.oracle(d, g + ".f32", full)
        for g, by_e in per_expert.items():   # stacked expert after expert, all of one type (FORMATS.md §7.5)
            parts = [by_e[e] for e in sorted(by_e)]
            typed = [expected_tensor(lt, g, None) for _, lt in parts]
            if len({t for t, _, _ in typed}) > 1:   # int4 experts not all f16-exact: every expert BF16
                typed = [("BF16", False, bf16_round(v)) for _, _, v in (expected_tensor(lt, g, None, rounded=False)
                                                                        for _, lt in parts)]
            typ, exact = typed[0][0], typed[0][1]
            vals = np.stack([v for _, _, v in typed])
            stored = {tensors[k] or "BF16" for k, _ in parts}
            expected[g] = {"type": typ, "exact": exact, "hf_name": parts[0][0], "stored": "+".join(sorted(stored)),
                           "shape": [int(x) for x in vals.shape], "oracle": self.fx.oracle(d, g, vals)}
            if not exact:
                full = np.stack([expected_tensor(lt, g, None, rounded=False)[2] for _, lt in parts])
                expected[g]["values"] = self.fx.oracle(d, g + ".f32", full)
        rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
        full = rope.get("full_attention") or {}
        if full.get("rope_type") == "proportional":   # llama.cpp's Gemma4Model.generate_extra_tensors: 1 per rotated pair, 1e30 after
            hd = cfg.get("global_head_dim") or next(c["head_dim"] for i, c in sorted(cfg["per_layer_config"].items())
                                                    if cfg["layer_types"][int(i)] == "full_attention" and "head_dim" in c)
            n_rot = int(hd * full["partial_rotary_factor"] / 2)
            vals = np.array([1.0] * n_rot + [1e30] * (hd // 2 - n_rot), dtype=np.float32)
            expected["rope_freqs.weight"] = {"type": "F32", "exact": True, "hf_name": "config.json rope_parameters.full_attention",
                                             "stored": "config.json", "shape": [int(vals.shape[0])],
                                             "oracle": self.fx.oracle(d, "rope_freqs.weight", vals)}
        for g, field in COMPUTED.items():   # F32 as the config lists them (FORMATS.md §7.3)
            if rope.get("rope_type") == "longrope" and field in rope:
                vals = np.asarray(rope[field], dtype=np.float32)
                expected[g] = {"type": "F32", "exact": True, "hf_name": f"config.json rope_parameters.{field}",
                               "stored": "config.json", "shape": [int(vals.shape[0])], "oracle": self.fx.oracle(d, g, vals)}
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(hf)
        self.exp["models"][d] = {
            "kind": kind, "quant": quant, "arch": gguf_arch_name(kind),
            "tensors": expected,
            "texts": H.SAMPLE_TEXTS,
            "hf_tokens": [tok.encode(t, add_special_tokens=False) for t in H.SAMPLE_TEXTS],
            "special_texts": H.special_texts("gemma4" if kind.startswith("gemma4") else kind),
            # llama.cpp through the reference tokenizes as HF does, except for the Llama-2-style tokenizer.json
            # without tokenizer.model: the converter's LlamaHfVocab scores every piece -1000 and llama.cpp then
            # merges left to right (modelfs's merge-rank scores follow HF, FORMATS.md §7.5), so HF is its oracle
            "ref_tokenization": kind not in H.SPM_KINDS,
            "n_vocab": cfg["vocab_size"],
            "chat_template": json.loads(files["tokenizer_config.json"]).get("chat_template"),
            # paths relative to OUT (the tests' fixture cache generates OUT under another name, then renames it)
            "ref_gguf": os.path.relpath(self.reference(kind), self.out) if quant == "bf16" and unchanged and self.llama_src
            else None,
        }
        if d.endswith("/draft") and quant == "bf16":   # the folder as stored is the source model: from_pretrained(d)
            self.exp["models"][d]["hf_source"] = os.path.relpath(hf, self.out)

    def hostile(self, name, why, mutate, reason_contains, kind="qwen3"):
        d = self.import_model(kind, "bf16", name=name, mutate=mutate, about=why)
        del self.exp["models"][d]
        self.exp["hostile"][d] = {"why": why, "reason_contains": reason_contains}

    def finish(self):
        self.fx.finish()
        with open(os.path.join(self.out, "gguf_expected.json"), "w", encoding="utf-8") as f:
            json.dump(self.exp, f, indent=1, ensure_ascii=False)
            f.write("\n")


def text_config(cfg):
    """The text model's config of a multimodal config.json (its text_config), else the config itself."""
    return cfg.get("text_config") or cfg


def make_gemma4_vlm(d):
    """dialect_gemma4's Gemma4ForConditionalGeneration (text with a vision tower), its weights in BF16 as published
    checkpoints store them (an Ollama import of BF16 safetensors keeps BF16)."""
    import torch
    from safetensors.torch import load_file, save_file
    import dialect_gemma4
    dialect_gemma4.make_gemma4(d)
    p = os.path.join(d, "model.safetensors")
    save_file({k: v.to(torch.bfloat16).contiguous() for k, v in load_file(p).items()}, p, metadata={"format": "pt"})


def _json_edit(key, fn):
    def mutate(files):
        obj = json.loads(files[key])
        fn(obj)
        files[key] = (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode()
    return mutate


def _dup_token(files):
    """Two vocabulary entries with the same string (a JSON object with a repeated key)."""
    tj = json.loads(files["tokenizer.json"])
    items = sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1])
    a, b = items[100], items[101]
    text = json.dumps(tj, ensure_ascii=False)
    text = text.replace(json.dumps(b[0], ensure_ascii=False) + ": " + str(b[1]),
                        json.dumps(a[0], ensure_ascii=False) + ": " + str(b[1]), 1)
    assert text.count(json.dumps(a[0], ensure_ascii=False) + ": ") >= 2
    files["tokenizer.json"] = text.encode()


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    llama_src = argv[2] if len(argv) == 3 else os.environ.get("MODELFS_LLAMA_CPP_SRC")
    b = Builder(argv[1], llama_src)
    for kind, quants in IMPORTS.items():
        for q in quants:
            b.import_model(kind, q)
    # drafts imported with their target (FORMATS.md §4.3 H): a llama draft of a qwen3 target, BF16 and int4
    b.import_model("qwen3", "bf16", name="synth-qwen3-draft", draft=("llama", "bf16"),
                   about="qwen3 BF16 with a llama BF16 draft (draft. tensors, draft/ JSON files)")
    b.import_model("qwen3", "int4", name="synth-qwen3-draft", draft=("llama", "int4"),
                   about="qwen3 int4 with a llama int4 draft (--draft-quantize int4)")
    # a draft architecture llama.cpp does not run (Ollama's DFlash drafter): draft/ without model.gguf
    d = b.import_model("qwen3", "bf16", name="synth-dflash-draft", draft=("llama", "bf16"),
                       draft_mutate=_json_edit("config.json", lambda c: c.update(architectures=["DFlashDraftModel"])),
                       about="qwen3 BF16 with a draft whose config.json names DFlashDraftModel")
    del b.exp["models"][d + "/draft"]
    b.exp["draft_refused"][d] = {"why": "the draft's architecture is DFlashDraftModel", "reason_contains": "DFlashDraftModel"}
    b.hostile("synth-bad-shapes", "config.json says intermediate_size 256, the tensors have 128",
              _json_edit("config.json", lambda c: c.update(intermediate_size=256)), "shape")
    b.hostile("synth-bad-tokjson", "tokenizer.json is not JSON",
              lambda files: files.update({"tokenizer.json": b"{\"model\": {not json"}), "tokenizer.json")
    b.hostile("synth-bad-vocab", "tokenizer.json has a token id beyond config.json's vocab_size",
              _json_edit("tokenizer.json", lambda t: t["added_tokens"].append(
                  {"id": 400, "content": "<|extra|>", "single_word": False, "lstrip": False, "rstrip": False,
                   "normalized": False, "special": True})), "vocab_size")
    b.hostile("synth-dup-tokens", "two vocabulary entries with the same string", _dup_token, "tokenizer.json")
    b.hostile("synth-gemma3n", "config.json names Gemma3nForCausalLM (not mapped: its own tensors and value changes)",
              _json_edit("config.json", lambda c: c.update(architectures=["Gemma3nForCausalLM"], model_type="gemma3n_text")),
              "gemma")
    b.finish()
    print(f"gguf fixture written to {b.out}: {len(b.exp['models'])} models, {len(b.exp['hostile'])} hostile")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
