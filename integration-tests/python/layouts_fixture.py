"""Models of the integration fixture for the tensor-blob layouts of docs/FORMATS.md §4.3 that Ollama's
x/create writes (or wrote) beyond the basic kinds: mixed blobs with per-tensor quant metadata only, and
NVIDIA ModelOpt NVFP4 checkpoints stored under their source names (.weight_scale / .weight_scale_2).
Draft tensors (kind H) are in make_fixture.build_tiny_st and make_gguf_fixture.py.

Each blob is written byte for byte as the Ollama code cited below writes it (fixture_lib's Go and MLX
safetensors writers); the expected values come from the numpy quantizers/dequantizers of fixture_lib
(FORMATS.md §5), never from modelfs.
"""
from __future__ import annotations

import numpy as np

import fixture_lib as L
import make_fixture as MF


def _model(fx, name, seed, about):
    """A new library model with a BF16 embedding (kind A); returns it and its gaussian generator."""
    rng = np.random.default_rng(seed)
    g = lambda *s: MF.gaussian(rng, s)  # noqa: E731
    m = fx.model("registry.ollama.ai", "library", name, "latest", about)
    emb = MF.lt_plain("model.embed_tokens.weight", g(32, 64), "BF16")
    m.tensor_blob(emb.name, [(emb, emb.name)])
    return m, g


def build_mixed(fx):
    """v0.21.0-v0.31.1 packed expert-group blobs whose tensors got different types: the MLX writer, no
    blob-level quant_type/group_size, per-tensor `<name>.quant_type`/`<name>.group_size` for each
    quantized tensor only, unquantized tensors in the same blob (ollama/ollama
    x/create/client/quantize.go quantizePackedGroup at 964ea42c0^; the metadata rule is unchanged in
    today's x/create/quantize.go quantizeBlobLocked)."""
    m, g = _model(fx, "layouts-mixed", 2104,
                  "mixed blobs (v0.21-v0.31 packed shared_experts groups): per-tensor quant metadata only, "
                  "int4 g64 + int8 g64, nvfp4 g16 + mxfp8 g32 (U8 scales) + an unquantized tensor")
    # --quantize int4: gate/up int4, down_proj promoted to int8 (FORMATS.md §5.9 rule 8)
    p = "model.layers.0.mlp.shared_experts"
    parts, md = [], {}
    for proj, bits in (("gate_proj", 4), ("up_proj", 4), ("down_proj", 8)):
        name = f"{p}.{proj}.weight"
        qt = "int4" if bits == 4 else "int8"
        parts.append((MF.lt_affine(name, g(64, 128), bits, 64, "BF16", qt), name))
        md[name + ".quant_type"], md[name + ".group_size"] = qt, "64"
    m.tensor_blob(p, parts, writer="mlx", metadata=md, seed=3)
    # --quantize nvfp4 with mxfp8 promotion, and a projection whose last dim (48) fits no group: kept BF16
    p = "model.layers.1.mixer.shared_experts"
    up, down = f"{p}.up_proj.weight", f"{p}.down_proj.weight"
    gate = f"{p}.gate_proj.weight"
    parts = [(MF.lt_nvfp4(up, g(64, 64)), up), (MF.lt_mxfp8(down, g(32, 64)), down),
             (MF.lt_plain(gate, g(64, 48), "BF16"), gate)]
    md = {up + ".quant_type": "nvfp4", up + ".group_size": "16", down + ".quant_type": "mxfp8", down + ".group_size": "32"}
    m.tensor_blob(p, parts, writer="mlx", metadata=md, seed=5)
    m.json_layer("config.json", MF.llm_config())
    m.set_config(MF.st_config("int4"))
    m.finish()


def build_modelopt(fx):
    """An NVIDIA ModelOpt NVFP4 checkpoint as Ollama before v0.22.0 stored it: no fusion, every source
    tensor passed through under its own name (`<b>.weight` U8 [out, in/2], `<b>.weight_scale` F8_E4M3
    [out, in/16], `<b>.weight_scale_2` F32 scalar, `<b>.input_scale` F32 scalar); single tensors one per
    blob (Go writer), per-expert tensors in one packed group blob (ollama/ollama x/create/create.go at
    v0.21.0: no `.scales` companion, so createPrequantizedLayer declines and the tensors are copied).
    Ollama's runner reads these names (x/mlxrunner/model/linear.go `weight_scale_2`)."""
    m, g = _model(fx, "layouts-modelopt", 2205,
                  "ModelOpt NVFP4 under its source names (pre-v0.22 pass-through): .weight U8, "
                  ".weight_scale F8_E4M3, .weight_scale_2 F32, .input_scale; one blob each and a packed expert blob")

    def raw(lt):
        """The ModelOpt source entries of a fused nvfp4 LT: (key, dtype, shape, bytes) per suffix."""
        base = lt.name[:-len(".weight")]
        out, k = {}, lt.shape[-1]
        out[""] = (lt.name, "U8", lt.shape[:-1] + [k * 4], lt.data)           # U32 words relabelled as bytes
        dt, sh, b = lt.comps[".scale"]
        out[".scale"] = (base + ".weight_scale", "F8_E4M3", [int(x) for x in sh], b)
        if ".global_scale" in lt.comps:
            dt, sh, b = lt.comps[".global_scale"]
            out[".global_scale"] = (base + ".weight_scale_2", "F32", [], b)
        return out

    def register(lt, entries, digests):
        for suf, (key, _, _, _) in entries.items():
            lt.src[suf] = {"blob": digests[suf], "key": key}
        m.lts.append(lt)

    for i, (name, gs) in enumerate((("model.layers.0.self_attn.q_proj.weight", 0.0123),
                                    ("model.layers.0.self_attn.o_proj.weight", 0.5))):
        lt = MF.lt_nvfp4(name, g(32, 64) * 40, global_scale=gs)
        entries, digests = raw(lt), {}
        for suf, e in entries.items():
            digests[suf] = m.layer(MF.MT_TENSOR, L.st_go([e]), name=e[0])
        base = name[:-len(".weight")]
        m.layer(MF.MT_TENSOR, L.st_go([(base + ".input_scale", "F32", [], np.float32(0.25 + i).tobytes())]),
                name=base + ".input_scale")
        register(lt, entries, digests)
    # packed expert group (Go writer, no metadata): experts 0 and 1, the second without weight_scale_2
    p = "model.layers.0.mlp.experts"
    lts, all_entries = [], []
    for e, gs in ((0, 0.75), (1, None)):
        lt = MF.lt_nvfp4(f"{p}.{e}.down_proj.weight", g(16, 64) * 20, global_scale=gs)
        entries = raw(lt)
        lts.append((lt, entries))
        all_entries += list(entries.values())
        all_entries.append((f"{p}.{e}.down_proj.input_scale", "F32", [], np.float32(1.5).tobytes()))
    d = m.layer(MF.MT_TENSOR, L.st_go(all_entries), name=p)
    for lt, entries in lts:
        register(lt, entries, {suf: d for suf in entries})
    q = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
         "exclude_modules": ["lm_head"], "kv_cache_quant_algo": None}
    m.json_layer("config.json", MF.llm_config(quantization_config=q))
    m.set_config(MF.st_config(""))
    m.finish()


def build_nvfp4_experts(fx):
    """Compressed-tensors NVFP4 experts as v0.22.0-v0.31.1 stored them: per-expert weights stacked into
    `<layer>.mlp.switch_mlp.<proj>.weight` U32 [E, out, in/8] with `.weight.scale` U8 [E, out, in/16] and
    one global scale per expert, `.weight.global_scale` F32 [E, 1, 1] (the reciprocal of each source
    `weight_global_scale`), in one Go-written blob per expert group with blob-level and per-tensor
    quant metadata (ollama/ollama x/create/create.go at 964ea42c0^ stackPackedNVFP4ExpertGroup)."""
    m, g = _model(fx, "layouts-nvfp4-experts", 2206,
                  "stacked compressed-tensors nvfp4 experts (v0.22-v0.31.1): switch_mlp, global scale per expert [E,1,1]")
    p = "model.layers.0.mlp.switch_mlp"
    parts, md = [], {"quant_type": "nvfp4", "group_size": "16"}
    for proj, shape, gs in (("down_proj", (3, 32, 64), (0.5, 0.001, 3.0)), ("gate_proj", (3, 64, 32), (0.125, 2.0, 0.03)),
                            ("up_proj", (3, 64, 32), (1.0, 0.25, 8.0))):
        name = f"{p}.{proj}.weight"
        w = g(*shape) * 30
        packed, sc = L.quantize_nvfp4(w)
        G = np.array(gs, dtype=np.float32).reshape(-1, 1, 1)
        per = L.dequant_nvfp4(packed, sc, 16, None, K=shape[-1]).reshape(shape)
        oracle = (per * G).astype(np.float32)          # E2M1*E4M3 rounded to f32, then times the expert's G (FORMATS 5.4)
        lt = MF.LT(name, "U32", packed.shape, packed.tobytes(), oracle=oracle,
                   oracle_from="numpy FORMATS 5.4 nvfp4: E2M1*E4M3 then *global_scale of the expert",
                   quant={"mode": "nvfp4", "bits": 4, "group_size": 16, "quant_type": "nvfp4"},
                   comps={".scale": ("U8", sc.shape, sc.tobytes()), ".global_scale": ("F32", [3, 1, 1], G.tobytes())},
                   logical_shape=shape)
        parts.append((lt, name))
        md[name + ".quant_type"], md[name + ".group_size"] = "nvfp4", "16"
    m.tensor_blob("model.layers.0.mlp.experts", parts, writer="go", metadata=md)
    m.json_layer("config.json", MF.llm_config())
    m.set_config(MF.st_config(""))
    m.finish()
