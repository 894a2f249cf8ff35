#!/usr/bin/env python3
"""Tiny diffusers pipelines imported the way Ollama's image importer wrote them (issue 20).

    make_diffusers_fixture.py OUT

writes
    OUT/src/<pipeline>/        ZImagePipeline and Flux2KleinPipeline with random weights and tiny configs
                               (diffusers' own test configs, widened so that every linear layer can be
                               quantized), a byte-level BPE tokenizer trained here with a chat template,
                               saved with save_pretrained in bfloat16
    OUT/store/                 the Ollama store: every pipeline imported five times (tags below)
    OUT/ref/<model dir>/       per quantized tag: the source folder with every quantized tensor replaced by
                               the values decoded in numpy from the stored codes (FORMATS 5.3), as bf16
    OUT/wrong/<model dir>/     the same decoded with a wrong code order (each U32 word's codes reversed):
                               the negative control
    OUT/expected.json          make_fixture.py's schema (check_tree.py, check_views.py)
    OUT/diffusers.json         per model dir: pipeline, the folder to load on the mount, the reference
                               folder, the negative control, the call (check_diffusers.py)

The importers are transcriptions of Ollama's, cited per tag (docs/FORMATS.md 4.3 E/F, 4.4):
    v014-bf16, v014-fp8   x/imagegen/create.go + client/create.go + client/quantize.go at v0.14.2:
                          one "data"-keyed blob per tensor; --quantize fp8 = MLX affine 8-bit group 32 as
                          three "data" layers <name>, <name>_scale, <name>_qbias (MLX writer, no metadata);
                          model_index.json rewritten (architecture, parameter_count, quantization FP8/BF16)
    bf16, int4, int8      x/create/imagegen.go + client/quantize.go at v0.16.0: unquantized blobs keyed by
                          the bare tensor name (Go writer), quantized ones keyed by <component>/<name>
                          with .scale/.bias and __metadata__ {quant_type, group_size} (MLX writer);
                          int4 = affine 4-bit group 32 (v0.16-v0.17), int8 = affine 8-bit group 64
Only linear weights outside the VAE are quantized (ShouldQuantize), and only where the last dimension
is a multiple of the group size (canQuantizeShape, v0.15.5+; v0.14 had no check and failed on such
shapes, so the v0.14 fp8 tag skips them the same way).
"""
from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402
import make_fixture as M  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PROMPT = "a red fox jumps over the lazy dog"
CHAT_TEMPLATE = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
                 "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
                 "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
                 "{% endif %}")
COMPONENTS = ("text_encoder", "transformer", "vae")          # the importer's fixed list, in its order
CONFIG_FILES = ("model_index.json", "text_encoder/config.json", "text_encoder/generation_config.json",
                "transformer/config.json", "vae/config.json", "scheduler/scheduler_config.json",
                "tokenizer/tokenizer.json", "tokenizer/tokenizer_config.json", "tokenizer/vocab.json")
# tag -> (layout, quantize, bits, group)
TAGS = {"v014-bf16": ("v0.14", None, None, None), "v014-fp8": ("v0.14", "fp8", 8, 32),
        "bf16": ("v0.16", None, None, None), "int4": ("v0.16", "int4", 4, 32), "int8": ("v0.16", "int8", 8, 64)}
# the pipelines' calls: seeded, two steps, tiny images
CALLS = {"ZImagePipeline": {"height": 32, "width": 32, "guidance_scale": 0.0, "max_sequence_length": 32},
         "Flux2KleinPipeline": {"height": 32, "width": 32, "guidance_scale": 1.0, "max_sequence_length": 32,
                                "text_encoder_out_layers": [1]}}


def train_tokenizer():
    """A byte-level BPE (Qwen2's pre-tokenizer family) trained on a few sentences, with Qwen's chat tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = [PROMPT, "a dog is dancing", "dance monkey", "bad quality", "the quick brown fox", "a cat holding a sign"]
    tok.train_from_iterator(corpus * 40, trainer)
    t = Qwen2Tokenizer(tokenizer_object=tok, unk_token=None, bos_token=None, eos_token="<|im_end|>",
                       pad_token="<|endoftext|>")
    t.chat_template = CHAT_TEMPLATE
    return t


def save_tokenizer(tok, folder):
    """As the published pipelines store it: the chat template inside tokenizer_config.json (Ollama's
    importer kept only tokenizer/*.json, so a chat_template.jinja would be lost on import)."""
    tok.save_pretrained(folder, save_jinja_files=False)
    jinja = os.path.join(folder, "chat_template.jinja")
    if os.path.exists(jinja):
        os.unlink(jinja)


def build_zimage(tok, out):
    import torch
    from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, ZImagePipeline, ZImageTransformer2DModel
    from transformers import Qwen3Config, Qwen3Model
    torch.manual_seed(0)
    transformer = ZImageTransformer2DModel(all_patch_size=(2,), all_f_patch_size=(1,), in_channels=16, dim=64,
                                           n_layers=2, n_refiner_layers=1, n_heads=2, n_kv_heads=2, norm_eps=1e-5,
                                           qk_norm=True, cap_feat_dim=64, rope_theta=256.0, t_scale=1000.0,
                                           axes_dims=[8, 12, 12], axes_lens=[256, 32, 32])
    with torch.no_grad():   # torch.empty in the constructor: fixed values (diffusers' own test does this)
        transformer.x_pad_token.copy_(torch.ones_like(transformer.x_pad_token))
        transformer.cap_pad_token.copy_(torch.ones_like(transformer.cap_pad_token))
    torch.manual_seed(0)
    vae = AutoencoderKL(in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D", "DownEncoderBlock2D"],
                        up_block_types=["UpDecoderBlock2D", "UpDecoderBlock2D"], block_out_channels=[32, 64],
                        layers_per_block=1, latent_channels=16, norm_num_groups=32, sample_size=32,
                        scaling_factor=0.3611, shift_factor=0.1159)
    torch.manual_seed(0)
    te = Qwen3Model(Qwen3Config(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                                num_key_value_heads=2, head_dim=32, vocab_size=len(tok), max_position_embeddings=512))
    pipe = ZImagePipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=te, tokenizer=tok,
                          transformer=transformer)
    return save_pipeline(pipe, tok, out)


def build_flux2_klein(tok, out):
    import torch
    from diffusers import AutoencoderKLFlux2, FlowMatchEulerDiscreteScheduler, Flux2KleinPipeline, Flux2Transformer2DModel
    from transformers import Qwen3Config, Qwen3ForCausalLM
    torch.manual_seed(0)
    transformer = Flux2Transformer2DModel(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1,
                                          attention_head_dim=16, num_attention_heads=4, joint_attention_dim=64,
                                          timestep_guidance_channels=256, axes_dims_rope=[4, 4, 4, 4],
                                          guidance_embeds=False)
    torch.manual_seed(0)
    te = Qwen3ForCausalLM(Qwen3Config(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                                      num_key_value_heads=2, head_dim=32, vocab_size=len(tok),
                                      max_position_embeddings=512))
    torch.manual_seed(0)
    vae = AutoencoderKLFlux2(sample_size=32, in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",),
                             up_block_types=("UpDecoderBlock2D",), block_out_channels=(4,), layers_per_block=1,
                             latent_channels=1, norm_num_groups=1, use_quant_conv=False, use_post_quant_conv=False)
    pipe = Flux2KleinPipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=te, tokenizer=tok,
                              transformer=transformer)
    return save_pipeline(pipe, tok, out)


def save_pipeline(pipe, tok, out):
    import torch
    pipe.to(torch.bfloat16)
    pipe.save_pretrained(out, safe_serialization=True)
    save_tokenizer(tok, os.path.join(out, "tokenizer"))
    return out


# ---------------------------------------------------------------------------------------------
# Ollama's importers
# ---------------------------------------------------------------------------------------------

def source_tensors(src, component):
    """Every tensor of a component's *.safetensors files, files in directory order, tensors sorted by name
    (x/imagegen/safetensors/extractor.go ListTensors), as (name, safetensors dtype, float32 array)."""
    from safetensors import safe_open
    d = os.path.join(src, component)
    out = []
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".safetensors"):
            continue
        with safe_open(os.path.join(d, fn), framework="pt") as f:
            for k in sorted(f.keys()):
                t = f.get_tensor(k)
                dt = {"torch.bfloat16": "BF16", "torch.float32": "F32", "torch.float16": "F16",
                      "torch.int64": "I64"}[str(t.dtype)]
                out.append((k, dt, t.numpy() if dt == "I64" else t.float().numpy()))
    return out


def should_quantize(name, component, layout):
    """ShouldQuantize: x/imagegen/quantize.go (v0.14.2), x/create/create.go (v0.16.0)."""
    if component == "vae" or "embed" in name or "norm" in name:
        return False
    if layout == "v0.16" and ("ln_" in name or "layernorm" in name or name.endswith(".bias")):
        return False
    return name.endswith(".weight")


def rewritten_model_index(src, quantization, params):
    """create.go: _class_name -> architecture, _diffusers_version deleted, parameter_count and quantization
    added; Go's json.MarshalIndent(cfg, "", "    ") (map keys sorted)."""
    with open(os.path.join(src, "model_index.json")) as f:
        cfg = json.load(f)
    cfg["architecture"] = cfg.pop("_class_name")
    cfg.pop("_diffusers_version", None)
    cfg["parameter_count"] = params
    cfg["quantization"] = quantization
    return json.dumps(cfg, indent=4, sort_keys=True).encode()


def import_pipeline(fx, src, name, tag):
    layout, quantize, bits, group = TAGS[tag]
    m = fx.model("registry.ollama.ai", "x", name, tag,
                 f"tiny diffusers pipeline imported like Ollama {layout}" + (f" --quantize {quantize}" if quantize else ""))
    params, decoded = 0, {}
    for comp in COMPONENTS:
        if not os.path.isdir(os.path.join(src, comp)):
            continue
        for tname, dt, w in source_tensors(src, comp):
            params += w.size
            full = f"{comp}/{tname}"
            q = quantize and should_quantize(tname, comp, layout) and w.ndim == 2 and w.shape[-1] % group == 0
            if q:
                lt = M.lt_affine(full, w, bits, group, "BF16", None if layout == "v0.14" else quantize)
                decoded[full] = lt
            else:
                lt = M.lt_plain(full, w, dt)
            if layout == "v0.14":
                m.legacy_data_layers(full, lt)
            elif q:
                m.tensor_blob(full, [(lt, full)], writer="mlx", metadata=M.qmeta(quantize, group))
            else:
                m.tensor_blob(full, [(lt, tname)])
    with open(os.path.join(src, "text_encoder", "config.json")) as f:
        te = json.load(f)
    if layout == "v0.14":
        quantization = "FP8" if quantize == "fp8" else "BF16"
    else:
        quantization = quantize.upper() if quantize else te.get("torch_dtype") or te.get("dtype")
    for rel in CONFIG_FILES:
        p = os.path.join(src, rel)
        if not os.path.exists(p):
            continue
        if rel == "model_index.json":
            m.json_layer(rel, raw=rewritten_model_index(src, quantization, params))
        else:
            with open(p, "rb") as f:
                m.json_layer(rel, raw=f.read())
    m.set_config({"model_format": "safetensors", "capabilities": ["image"],
                  "requires": "0.14.0" if layout == "v0.14" else "0.16.0"})
    m.finish()
    return m.dir, decoded


def reversed_codes(packed, bits):
    """The negative control: each U32 word's codes in reverse order."""
    per = 32 // bits
    codes = L.unpack_codes(packed, bits, packed.shape[-1] * per)
    codes = codes.reshape(*codes.shape[:-1], -1, per)[..., ::-1].reshape(codes.shape)
    return L.pack_codes(codes, bits)


def write_decoded(src, dest, decoded, wrong):
    """dest = src with each quantized tensor replaced by its numpy decoding of the stored codes, as bf16."""
    import ml_dtypes
    import torch
    from safetensors.torch import load_file, save_file
    shutil.copytree(src, dest)
    for comp in COMPONENTS:
        d = os.path.join(dest, comp)
        if not os.path.isdir(d):
            continue
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".safetensors"):
                continue
            p = os.path.join(d, fn)
            sd = load_file(p)
            for k in list(sd):
                lt = decoded.get(f"{comp}/{k}")
                if lt is None:
                    continue
                q = lt.quant
                packed = np.frombuffer(lt.data, dtype="<u4").reshape(lt.shape)
                if wrong:
                    packed = reversed_codes(packed, q["bits"])
                sc = np.frombuffer(lt.comps[".scale"][2], dtype=ml_dtypes.bfloat16).reshape(lt.comps[".scale"][1])
                bi = np.frombuffer(lt.comps[".bias"][2], dtype=ml_dtypes.bfloat16).reshape(lt.comps[".bias"][1])
                f32 = L.dequant_affine(packed, sc, bi, q["bits"], q["group_size"], K=lt.logical_shape[-1])
                bf16 = f32.astype(ml_dtypes.bfloat16)          # one round-to-nearest-even (FORMATS 7.8)
                sd[k] = torch.from_numpy(bf16.view(np.uint16).astype(np.int16)).view(torch.bfloat16)
            save_file(sd, p, metadata={"format": "pt"})


def main(argv):
    if len(argv) != 2:
        print("usage: make_diffusers_fixture.py OUT", file=sys.stderr)
        return 2
    out = os.path.abspath(argv[1])
    if os.path.exists(out) and os.listdir(out):
        print(f"make_diffusers_fixture: {out} exists and is not empty", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(1)
    fx = M.Fixture(out)
    tok = train_tokenizer()
    meta = {}
    for name, build in (("z-image-tiny", build_zimage), ("flux2-klein-tiny", build_flux2_klein)):
        src = build(tok, os.path.join(out, "src", name))
        with open(os.path.join(src, "model_index.json")) as f:
            pipeline = json.load(f)["_class_name"]
        for tag in TAGS:
            d, decoded = import_pipeline(fx, src, name, tag)
            e = {"pipeline": pipeline, "prompt": PROMPT, "call": CALLS[pipeline], "source": os.path.relpath(src, out)}
            if decoded:
                for kind in ("ref", "wrong"):
                    write_decoded(src, os.path.join(out, kind, d), decoded, kind == "wrong")
                e.update(load="bf16", ref=f"ref/{d}", wrong=f"wrong/{d}", quantized=len(decoded))
            else:
                e.update(load="", ref=e["source"], wrong=None, quantized=0)
            meta[d] = e
    fx.finish()
    with open(os.path.join(out, "expected.json")) as f:
        exp = json.load(f)
    first = sorted(meta)[0]
    exp["readonly_probes"] = {"file": f"{first}/ollama/manifest.json", "dir": first}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "diffusers.json"), "w") as f:
        json.dump({"models": meta}, f, indent=1)
        f.write("\n")
    print(f"diffusers fixture written to {out}: {len(meta)} model dirs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
