#!/usr/bin/env python3
"""The Hugging Face folder of GGUF models on a modelfs mount (docs/SEMANTICS.md), against independent oracles.

    check_hf_gguf.py MOUNT OUT

For every model of expected.json "hf_gguf" (GGUFs that llama.cpp's converter made from tiny HF models,
hf_gguf_fixtures.py; the HF source is kept at OUT/<source>):
* the folder has config.json, generation_config.json, tokenizer.json, tokenizer_config.json,
  special_tokens_map.json, model.safetensors, model.{fp32,fp16,bf16}.safetensors, and the GGUF-named
  files under gguf/;
* tensor oracle: every GGUF tensor of MOUNT/<dir>/model.gguf dequantized by gguf-py, renamed to the HF
  source's names with gguf-py's own tensor name map, llama q/k rows un-permuted here with numpy, stacked
  experts sliced per expert, gemma/gemma2/gemma3 and qwen35 norm weights minus 1 (numpy f32), qwen35's gated
  delta-net tensors put back with numpy (hf_models_qwen35.oracle_tensor: V heads grouped again, A_log = log(-ssm_a)). For F32 GGUFs the oracle must equal the HF source weights exactly;
* every tensor of model.safetensors and model.{fp32,fp16,bf16}.safetensors has the source's name set
  (no lm_head.weight when the source ties embeddings) and equals the oracle bit for bit (floats as
  stored: F32/F16 GGUF tensors keep their dtype, quantized ones are F32; variants = one
  round-to-nearest-even of the oracle);
* config.json read by transformers matches the source config on every field the model uses;
* AutoModelForCausalLM.from_pretrained(MOUNT/<dir>) (no gguf_file), float32: logits within 1e-5 of
  the source model with the oracle weights loaded (for F32 GGUFs: the source model itself), and within
  1e-5 of transformers' own GGUF loader (from_pretrained(..., gguf_file="model.gguf"));
* a vision-language source (hf_models_vlm.py, F32 only): the folder is its text model as the text class, its
  tensors the source's text tensors renamed (model.language_model.X -> model.X), its config the source's
  text_config, and the logits the source model's own text-only forward;
* gemma2: the plain from_pretrained(MOUNT/<dir>) (no attn_implementation) runs eager attention (config.json
  says so; sdpa would ignore the attention soft-cap) and gives the eager logits on a sample longer than the window;
* AutoTokenizer.from_pretrained(MOUNT/<dir>) encodes hf_models.SAMPLE_TEXTS and chat strings with
  special tokens exactly like the source tokenizer, decodes them back the same, has the same special
  tokens, and apply_chat_template gives the same text and ids.
Prints one line per failed check and "N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import json
import os
import re
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402
import hf_gguf_moe as MOE  # noqa: E402
import hf_models_vlm as VLM  # noqa: E402
import hf_models_qwen35 as Q35  # noqa: E402
import hf_models as H  # noqa: E402

HF_FILES = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "special_tokens_map.json"]
VARIANT_NP = {"fp32": np.float32, "fp16": np.float16}
GGUF_ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "qwen3moe": "qwen3moe", "phi3": "phi3",
             "gemma3": "gemma3", "qwen2moe": "qwen2moe", "mixtral": "llama", "gemma3_4b": "gemma3",
             "gemma": "gemma", "gemma2": "gemma2",
             "olmo2": "olmo2", "phi3_longrope": "phi3", "granitemoe": "granitemoe", "gemma4": "gemma4", "gemma4_e2b": "gemma4", "gemma4_keqv": "gemma4", **MOE.GGUF_ARCH,
             **VLM.GGUF_ARCH, **Q35.GGUF_ARCH}
# kinds whose q/k rows llama.cpp permutes (LlamaModel.permute)
PERMUTED = ("llama", "mixtral", "granitemoe", "mistral3")
# kinds whose q/k rows llama.cpp's converter reorders from GLM's interleaved pairs to NeoX halves (Glm4Model.normal_to_neox,
# for M-RoPE over every dimension)
NEOX_PERMUTED = ("glmocr", "glmocr_mtp")
# HF tensors llama.cpp's converter splits into several GGUF tensors: per expert, the parts' rows in order
# (GraniteMoeModel.modify_tensors: input_linear = gate rows then up rows)
FUSED = {re.compile(r"model\.layers\.(\d+)\.block_sparse_moe\.input_linear\.weight"): ("ffn_gate_exps", "ffn_up_exps")}
# llama.cpp's converter stores these architectures' norm weights as 1 + w (Gemma's RMSNorm scales by 1 + w)
NORM_SHIFT = {"gemma3": 1.0, "gemma3_4b": 1.0, "gemma": 1.0, "gemma2": 1.0, "qwen35": 1.0, "qwen35moe": 1.0}
# per-expert HF names -> slice of the stacked GGUF blk.N.ffn_{gate,up,down}_exps (Mixtral: w1 gate, w3 up, w2 down)
EXPERT = re.compile(r"model\.layers\.(\d+)\.(?:mlp|block_sparse_moe)\.experts\.(\d+)\.(gate_proj|up_proj|down_proj|w1|w3|w2)\.weight")
EXPERT_PROJ = {"gate_proj": "gate", "up_proj": "up", "down_proj": "down", "w1": "gate", "w3": "up", "w2": "down"}
CHAT = {"llama": ["<s>[INST] Hi 42 café 🦙 [/INST] ok</s>", "[INST]x</s><s>y"],
        "qwen": ["<|im_start|>user\nHi 42 café 🦙<|im_end|>\n<|im_start|>assistant\n",
                 "a<|endoftext|>b<|im_end|>c"]}
MESSAGES = [{"role": "user", "content": "Hello there, 3.14 café 🦙"},
            {"role": "assistant", "content": "Hi!"},
            {"role": "user", "content": "numbers 333 and naïve"}]


def variant_dtype(v):
    if v == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return VARIANT_NP[v]


def unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """GGUF row h*D + 2t + half holds HF row h*D + half*D/2 + t (docs/FORMATS.md 7.2)."""
    rows = w.shape[0]
    d = rows // heads
    return w.reshape(heads, d // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def neox_to_normal(w: np.ndarray, heads: int) -> np.ndarray:
    """The inverse of normal_to_neox with full rotation: HF row h*D + 2t + half is GGUF row h*D + half*D/2 + t."""
    d = w.shape[0] // heads
    return w.reshape(heads, 2, d // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def oracle(gguf_path, src_names, kind, cfg):
    """{HF name: f32 array} from the GGUF, using gguf-py's name map (independent of modelfs)."""
    import gguf
    rd = gguf.GGUFReader(gguf_path)
    deq = {}
    for t in rd.tensors:
        a = gguf.quants.dequantize(t.data, t.tensor_type)
        deq[t.name] = np.asarray(a, dtype=np.float32).reshape([int(n) for n in reversed(t.shape)])
    arch = next(k for k, v in gguf.MODEL_ARCH_NAMES.items() if v == GGUF_ARCH[kind])
    tmap = gguf.get_tensor_name_map(arch, cfg.num_hidden_layers)
    types = {t.name: t.tensor_type.name for t in rd.tensors}
    out, stored = {}, {}
    for name in src_names:
        fused = next(((m, parts) for rx, parts in FUSED.items() if (m := rx.fullmatch(name))), None)
        if fused:   # Granite's input_linear: every expert's gate rows, then its up rows
            gs = [f"blk.{fused[0].group(1)}.{p}.weight" for p in fused[1]]
            out[name] = np.concatenate([deq[g] for g in gs], axis=1)
            stored[name] = types[gs[0]]   # an assembled tensor keeps its first source's float type (FORMATS §7.3)
            continue
        split = MOE.oracle_tensor(name, deq, types)   # gpt-oss / DeepSeek tensors the converter split or transposed
        if split is None and kind in Q35.KINDS:        # Qwen 3.5's gated delta-net: V heads, A_log, conv
            split = Q35.oracle_tensor(name, deq, types, cfg)
        if split is not None:
            out[name], stored[name] = split
            continue
        m = EXPERT.fullmatch(name)
        if m:
            g = f"blk.{m.group(1)}.ffn_{EXPERT_PROJ[m.group(3)]}_exps.weight"
            out[name], stored[name] = deq[g][int(m.group(2))], types[g]
            continue
        g = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        if g is not None and g not in deq and g + ".weight" in deq:   # gemma4's layer_scalar: GGUF layer_output_scale.weight
            g += ".weight"
        if g is None or g not in deq:
            raise KeyError(f"no GGUF tensor for {name} (gguf-py name {g})")
        a = deq[g]
        if kind in PERMUTED and (".attn_q." in g or ".attn_k." in g):
            a = unpermute(a, cfg.num_attention_heads if ".attn_q." in g else cfg.num_key_value_heads)
        if kind in NEOX_PERMUTED and (".attn_q." in g or ".attn_k." in g):
            a = neox_to_normal(a, cfg.num_attention_heads if ".attn_q." in g else cfg.num_key_value_heads)
        if kind in NORM_SHIFT and g.endswith("norm.weight"):
            a = a - np.float32(NORM_SHIFT[kind])
        out[name], stored[name] = a, types[g]
    return out, stored


def logits_of(model, ids):
    import torch
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].float().numpy()


def load(path, **kw):
    import torch
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager", **kw)
    return m.eval()


def check_tensors(r, d, mdir, orc, stored_types, src_names):
    from safetensors import safe_open
    for rel, variant in [("model.safetensors", None)] + [(f"{v}/model.safetensors", v) for v in ("fp32", "fp16", "bf16")]:
        p = os.path.join(mdir, rel)
        try:
            with safe_open(p, framework="np") as f:
                keys = set(f.keys())
                r.ok(keys == set(src_names), f"{d}/{rel}: tensor names differ from the HF source: "
                                             f"extra {sorted(keys - set(src_names))[:5]}, missing {sorted(set(src_names) - keys)[:5]}")
                r.ok((f.metadata() or {}).get("format") == "pt", f"{d}/{rel}: __metadata__ format is not pt")
                for k in sorted(keys & set(src_names)):
                    got = f.get_tensor(k)
                    want = orc[k]
                    if variant is None:
                        gt = stored_types.get(k)
                        want = want.astype(np.float16) if gt == "F16" else want
                    else:
                        want = want.astype(variant_dtype(variant))
                    ok = got.shape == want.shape and got.dtype == want.dtype and \
                        np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
                    r.ok(ok, f"{d}/{rel}: {k} {got.dtype}{list(got.shape)} differs from the oracle "
                             f"{want.dtype}{list(want.shape)}")
        except Exception as ex:  # noqa: BLE001
            r.fail(f"{d}/{rel}: cannot read with safetensors: {type(ex).__name__}: {ex}")


def check_config(r, d, mdir, src, kind=None):
    from transformers import AutoConfig
    a, b = AutoConfig.from_pretrained(mdir), AutoConfig.from_pretrained(src)
    if kind in VLM.KINDS:   # a vision-language source: the folder is its text model, as the text class (hf_models_vlm.py)
        r.ok((a.architectures, a.model_type) == ([VLM.FOLDER[kind][0]], VLM.FOLDER[kind][1]),
             f"{d}/config.json: {a.architectures} {a.model_type}, not the text class {VLM.FOLDER[kind]}")
        r.ok(a.tie_word_embeddings == b.tie_word_embeddings, f"{d}/config.json: tie_word_embeddings {a.tie_word_embeddings}")
        b = b.text_config
        b.architectures, b.model_type = a.architectures, a.model_type
        b.tie_word_embeddings = a.tie_word_embeddings
        b.rope_parameters = {k: v for k, v in (b.rope_parameters or {}).items() if k not in VLM.MROPE_KEYS}
        for f, v in VLM.FOLDER_ONLY.get(kind, {}).items():   # the folder's class has it, the source's text config not
            r.ok(getattr(a, f, None) == v, f"{d}/config.json: {f} = {getattr(a, f, None)!r}, not {v!r}")
            object.__setattr__(b, f, v)
    fields = ["model_type", "architectures", "hidden_size", "intermediate_size", "num_hidden_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "rms_norm_eps", "max_position_embeddings",
              "vocab_size", "tie_word_embeddings", "eos_token_id", "bos_token_id", "attention_bias",
              "num_experts", "num_experts_per_tok", "moe_intermediate_size", "norm_topk_prob", "num_local_experts",
              "shared_expert_intermediate_size", "qkv_bias", "decoder_sparse_step", "mlp_only_layers"]
    if b.model_type == "granitemoe":   # the multipliers
        fields += ["embedding_multiplier", "residual_multiplier", "attention_multiplier", "logits_scaling"]
    if b.model_type in ("phi3", "gemma3_text", "gemma", "gemma2"):   # what these architectures' attention reads besides the above
                                                                      # (rope_parameters, compared below, hold Phi-3's LongRoPE factors)
        fields += ["original_max_position_embeddings", "partial_rotary_factor", "sliding_window", "layer_types",
                   "query_pre_attn_scalar", "hidden_activation", "final_logit_softcapping", "attn_logit_softcapping"]
    fields += MOE.CONFIG_FIELDS.get(b.model_type, []) + Q35.CONFIG_FIELDS.get(b.model_type, [])
    if b.model_type == "gemma4_text":   # head_dim and the KV heads are per layer (per_layer_config): compared as saved
        fields = [f for f in fields if f not in ("head_dim", "num_key_value_heads")]
        da, db = a.to_dict(), b.to_dict()
        for f in ("head_dim", "num_key_value_heads", "per_layer_config", "sliding_window", "layer_types", "hidden_activation",
                  "final_logit_softcapping", "hidden_size_per_layer_input", "num_kv_shared_layers", "attention_k_eq_v",
                  "enable_moe_block", "use_double_wide_mlp", "use_bidirectional_attention"):
            r.ok(da.get(f) == db.get(f), f"{d}/config.json: {f} = {da.get(f)!r}, source has {db.get(f)!r}")
    for f in fields:
        if hasattr(b, f):
            va, vb = getattr(a, f, None), getattr(b, f)
            if f == "rms_norm_eps":
                va, vb = float(np.float32(va)), float(np.float32(vb))
            if f == "head_dim" and vb is None:   # MixtralConfig leaves it None: hidden / heads
                vb = b.hidden_size // b.num_attention_heads
            r.ok(va == vb, f"{d}/config.json: {f} = {va!r}, source has {vb!r}")
    ta = (getattr(a, "rope_parameters", None) or {}).get("rope_theta", getattr(a, "rope_theta", None))
    tb = (getattr(b, "rope_parameters", None) or {}).get("rope_theta", getattr(b, "rope_theta", None))
    r.ok(ta == tb, f"{d}/config.json: rope_theta {ta}, source has {tb}")
    ra, rb = getattr(a, "rope_parameters", None) or {}, getattr(b, "rope_parameters", None) or {}
    for k in sorted(rb):
        r.ok(ra.get(k) == rb[k], f"{d}/config.json: rope parameter {k} = {ra.get(k)!r}, source has {rb[k]!r}")
    with open(os.path.join(mdir, "generation_config.json")) as fh:
        gen = json.load(fh)
    want = b.eos_token_id
    if kind == "gptoss":   # every stop of the harmony format, looked up by text in the source tokenizer
        import dialect_gptoss as GO
        from transformers import AutoTokenizer
        want = GO.stop_ids(AutoTokenizer.from_pretrained(src))
        r.ok(len(want) == 3, f"{d}: the source tokenizer lacks some of {GO.STOPS}: {want}")
        r.ok(a.eos_token_id == want[0], f"{d}/config.json: eos_token_id {a.eos_token_id}, not <|return|> {want[0]} (the published config's)")
    r.ok(gen.get("eos_token_id") == want, f"{d}/generation_config.json: eos_token_id {gen.get('eos_token_id')}, not {want}")


def check_tokenizer(r, d, mdir, src, kind):
    from transformers import AutoTokenizer
    tm, ts = AutoTokenizer.from_pretrained(mdir), AutoTokenizer.from_pretrained(src)
    for attr in ("bos_token", "eos_token", "unk_token"):
        r.ok(getattr(tm, attr) == getattr(ts, attr), f"{d}: tokenizer {attr} {getattr(tm, attr)!r}, source {getattr(ts, attr)!r}")
    texts = list(H.SAMPLE_TEXTS) + CHAT["llama" if kind in H.SPM_KINDS else "qwen"] + ["", " ", "x"]
    for text in texts:
        for special in (True, False):
            a, b = tm(text, add_special_tokens=special).input_ids, ts(text, add_special_tokens=special).input_ids
            r.ok(a == b, f"{d}: encode({text!r}, add_special_tokens={special}) = {a}, source {b}")
        ids = ts(text).input_ids
        for skip in (False, True):
            a, b = tm.decode(ids, skip_special_tokens=skip), ts.decode(ids, skip_special_tokens=skip)
            r.ok(a == b, f"{d}: decode(skip_special_tokens={skip}) of {text!r} = {a!r}, source {b!r}")
    try:
        a = tm.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
        b = ts.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
        r.ok(a == b, f"{d}: apply_chat_template text {a!r}, source {b!r}")
        r.ok(tm(a, add_special_tokens=False).input_ids == ts(b, add_special_tokens=False).input_ids,
             f"{d}: chat template tokens differ")
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: apply_chat_template failed: {type(ex).__name__}: {ex}")


def check_model(r, d, mdir, src, e, out_dir):
    import torch
    from safetensors import safe_open
    from transformers import AutoConfig
    kind = e["kind"]
    variants = ("fp32", "fp16", "bf16")
    for rel in HF_FILES + ["model.safetensors", "gguf/model.safetensors", "model.gguf"] \
            + [f"{v}/{f}" for v in variants for f in HF_FILES + ["model.safetensors"]] \
            + [f"gguf/{v}/model.safetensors" for v in variants]:
        r.ok(os.path.isfile(os.path.join(mdir, rel)), f"{d}/{rel}: missing")
    for v in variants:   # the variant folders are complete HF folders: the same JSON files, config.json's dtype theirs
        for f in HF_FILES:
            a, b = os.path.join(mdir, f), os.path.join(mdir, v, f)
            if os.path.isfile(a) and os.path.isfile(b):
                with open(a, "rb") as fa, open(b, "rb") as fb:
                    problem = L.variant_copy_problem(fa.read(), fb.read(), f, v)
                    r.ok(problem is None, f"{d}/{v}/{f}: {problem} ({d}/{f})")
    with safe_open(os.path.join(src, "model.safetensors"), framework="pt") as f:
        src_names = sorted(f.keys()) if kind not in Q35.KINDS else Q35.source_names(sorted(f.keys()))   # no MTP head
        src_w = {k: f.get_tensor(k).float().numpy() for k in src_names}
    cfg = AutoConfig.from_pretrained(src)
    if kind in VLM.KINDS:   # a vision-language source: its text half under the folder's names
        src_w = VLM.text_tensors(kind, src_w)
        src_names, cfg = sorted(src_w), cfg.text_config
    orc, stored_by_hf = oracle(os.path.join(mdir, "model.gguf"), src_names, kind, cfg)
    if e["ggml_type"] == "F32":
        for k in src_names:
            if kind in Q35.KINDS and k.endswith(".A_log"):   # log(-(-exp(A_log))) in float32: within an ulp or two
                r.ok(np.allclose(orc[k], src_w[k], rtol=1e-6, atol=1e-7), f"{d}: oracle {k} is not the source's A_log")
                continue
            r.ok(np.array_equal(orc[k], src_w[k]), f"{d}: oracle {k} differs from the HF source (converter chain)")
    check_tensors(r, d, mdir, orc, stored_by_hf, src_names)
    check_config(r, d, mdir, src, kind)
    check_tokenizer(r, d, mdir, src, kind)
    # logits
    from transformers import AutoTokenizer
    ids = AutoTokenizer.from_pretrained(src)(H.SAMPLE_TEXTS[0]).input_ids[:24]
    if kind in MOE.GGUF_ARCH and e["ggml_type"] == "F32":   # once per source model
        MOE.check_features(r, d, src, kind, ids)
    try:
        got = logits_of(load(mdir), ids)
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: from_pretrained(mount dir) + forward failed: {type(ex).__name__}: {ex}")
        return
    if kind == "gemma2":   # config.json makes the plain from_pretrained eager (sdpa would ignore the attention soft-cap)
        check_plain_gemma2(r, d, mdir, ids, got)
    # the reference: the source folder with the oracle weights, loaded by transformers like the source
    import shutil
    import tempfile
    from safetensors.numpy import save_file
    if kind in VLM.KINDS:   # the source model's own text-only forward (F32 GGUFs only: the oracle is its weights, above)
        r.ok(e["ggml_type"] == "F32", f"{d}: a vision-language case must be F32 (its oracle is the source model itself)")
        import torch
        torch.manual_seed(0)
        want = logits_of(VLM.model_class(kind).from_pretrained(src, dtype=torch.float32, attn_implementation="eager").eval(), ids)
    else:
        with tempfile.TemporaryDirectory() as ref:
            shutil.copy(os.path.join(src, "config.json"), ref)
            save_file({k: np.ascontiguousarray(v) for k, v in orc.items()}, os.path.join(ref, "model.safetensors"),
                      metadata={"format": "pt"})
            want = logits_of(load(ref), ids)
    diff = float(np.abs(got - want).max())
    r.ok(got.shape == want.shape and diff <= 1e-5, f"{d}: max |logits - oracle model logits| = {diff:.3g} > 1e-5")
    try:   # fp32/ holds the same f32 values as the top folder (F16 tensors widened exactly)
        got32 = logits_of(load(os.path.join(mdir, "fp32")), ids)
        r.ok(np.array_equal(got32, got), f"{d}: from_pretrained(fp32/) logits differ from the top folder's")
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: from_pretrained(mount dir/fp32) + forward failed: {type(ex).__name__}: {ex}")
    print(f"{d}: max |logits - source/oracle model| = {diff:.3g}")
    if not e.get("gguf_loader", True):
        import hf_gguf_fixtures as HG
        print(f"{d}: not compared with transformers' GGUF loader: {HG.NO_GGUF_LOADER.get(tuple(d.split(':', 1)))}")
        return
    try:
        # transformers' GGUF loader does not read head_dim for qwen3 (it keeps Qwen3Config's 128): pass the source's
        extra = {"head_dim": cfg.head_dim} if kind.startswith("qwen3") and getattr(cfg, "head_dim", None) else {}
        tg = load(mdir, gguf_file="model.gguf", **extra)
        gl = logits_of(tg, ids)
        gd = float(np.abs(got - gl).max())
        r.ok(gl.shape == got.shape and gd <= 1e-5, f"{d}: max |logits - transformers GGUF loader| = {gd:.3g} > 1e-5")
        print(f"{d}: max |logits - transformers' GGUF loader| = {gd:.3g}")
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: transformers' GGUF loader failed: {type(ex).__name__}: {ex}")


def check_plain_gemma2(r, d, mdir, ids, eager):
    import torch
    from transformers import AutoModelForCausalLM
    r.ok(len(ids) > sliding_window(mdir), f"{d}: the sample ({len(ids)} tokens) is not longer than the sliding window")
    plain = AutoModelForCausalLM.from_pretrained(mdir, dtype=torch.float32)
    r.ok(plain.config._attn_implementation == "eager",
         f"{d}: plain from_pretrained attention is {plain.config._attn_implementation}, not eager")
    got = logits_of(plain.eval(), ids)
    diff = float(np.abs(got - eager).max())
    r.ok(diff <= 1e-5, f"{d}: plain from_pretrained logits differ from eager attention's by {diff:.3g}")


def sliding_window(mdir):
    from transformers import AutoConfig
    return AutoConfig.from_pretrained(mdir).sliding_window


def main():
    return L.check_listed_models(__doc__, "check_hf_gguf", "hf_gguf", 8, check_model)


if __name__ == "__main__":
    sys.exit(main())
