#!/usr/bin/env python3
"""Writes the store of bench/load_time.py into OUT/store: two Llama models of the same shape, stored as Ollama
stores them, with random weights (load time does not depend on their values):

  load-st   an `x/create` import: int4 g64 (MLX affine, bf16 scales and biases) q/k/v/o/gate/up/down, bf16 norms,
            embeddings and head, one tensor blob each, config.json; modelfs shows bf16/ (transformers) and a
            synthesized model.gguf (llama.cpp)
  load-gguf a GGUF blob (Q4_K matrices, Q6_K head, f32 norms, a 259+ token SPM vocabulary); modelfs shows it as
            model.gguf (kernel passthrough) and as a Hugging Face folder (f32/ for transformers)
  load-dialect the same Llama with a Llama 3 vocabulary (128,256 tokens) as Ollama's converter wrote Llama 3 files
            (its tokenizer metadata gap): modelfs shows model.gguf translated (the tensor data maps onto the blob,
            the header is new) and the blob as ollama/model.gguf
  load-image a Z-Image diffusers pipeline (transformer h*3/4 wide, Qwen3 text encoder h/2 wide, N layers each) imported
            as `x/create --quantize int4` imports image models; modelfs shows bf16/ for DiffusionPipeline

Usage: make_load_store.py OUT [--hidden H] [--layers N] [--vocab V]
  defaults: H 256, N 2, V 512 (a smoke size); ~1e9 parameters: --hidden 2048 --layers 16 --vocab 32000.
Writes manifests and blobs only (no expected tree: the benchmark compares the mount with local copies of its own
files, and the test suite checks the conversions).
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import make_fixture as F  # noqa: E402


def write_manifest(m):
    data = m.manifest_bytes("go")
    path = os.path.join(m.fx.store, m.manifest_rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def shapes(h, n, v, inter):
    kv = h          # no grouped-query attention: llama.cpp and transformers agree without extra keys
    out = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,), "lm_head.weight": (v, h)}
    for i in range(n):
        p = f"model.layers.{i}."
        out.update({p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
                    p + "self_attn.q_proj.weight": (h, h), p + "self_attn.k_proj.weight": (kv, h),
                    p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, h),
                    p + "mlp.gate_proj.weight": (inter, h), p + "mlp.up_proj.weight": (inter, h),
                    p + "mlp.down_proj.weight": (h, inter)})
    return out


def byte_level_tokenizer(v):
    """A byte-level BPE tokenizer.json of v tokens: <s>, </s>, the 256 byte symbols, then two-symbol merges."""
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    alphabet.sort()
    vocab = {"<s>": 0, "</s>": 1}
    for c in alphabet:
        vocab[c] = len(vocab)
    merges = []
    for a in alphabet:
        for b in alphabet:
            if len(vocab) >= v:
                break
            vocab[a + b] = len(vocab)
            merges.append((a, b))
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return json.loads(tok.to_str())


def build_st(fx, h, n, v, inter):
    rng = np.random.default_rng(7)
    m = fx.model("registry.ollama.ai", "library", "load-st", "latest", "load-time benchmark: x/create int4 Llama")
    for i, (k, shape) in enumerate(sorted(shapes(h, n, v, inter).items())):
        w = F.gaussian(rng, shape, 0.02 if len(shape) == 2 else 0.0) + (1.0 if len(shape) == 1 else 0.0)
        if k.endswith("_proj.weight"):
            m.tensor_blob(k, [(F.lt_affine(k, w, 4, 64, "BF16", "int4"), k)], writer="mlx", metadata=F.qmeta("int4", 64),
                          seed=i, register=False)
        else:
            m.tensor_blob(k, [(F.lt_plain(k, w, "BF16"), k)], register=False)
    m.json_layer("config.json", F.llm_config(hidden_size=h, num_hidden_layers=n, vocab_size=v, intermediate_size=inter,
                                              num_attention_heads=h // 64, num_key_value_heads=h // 64,
                                              max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=10000.0,
                                              tie_word_embeddings=False, hidden_act="silu"))
    m.json_layer("tokenizer.json", byte_level_tokenizer(v))
    m.json_layer("tokenizer_config.json", {"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True,
                                           "tokenizer_class": "PreTrainedTokenizerFast"})
    m.set_config(F.st_config("int4"))
    write_manifest(m)


def llama_gguf_tensors(rng, h, n, v, inter):
    """A Q4_K_M-style Llama's tensors in llama.cpp's names: Q4_K matrices, Q6_K head, f32 norms."""
    t = [F.ggml_tensor(rng, "token_embd.weight", [h, v], "Q4_K")]
    for i in range(n):
        b = f"blk.{i}."
        t += [F.ggml_tensor(rng, b + "attn_norm.weight", [h], "F32"), F.ggml_tensor(rng, b + "attn_q.weight", [h, h], "Q4_K"),
              F.ggml_tensor(rng, b + "attn_k.weight", [h, h], "Q4_K"), F.ggml_tensor(rng, b + "attn_v.weight", [h, h], "Q4_K"),
              F.ggml_tensor(rng, b + "attn_output.weight", [h, h], "Q4_K"), F.ggml_tensor(rng, b + "ffn_norm.weight", [h], "F32"),
              F.ggml_tensor(rng, b + "ffn_gate.weight", [h, inter], "Q4_K"), F.ggml_tensor(rng, b + "ffn_up.weight", [h, inter], "Q4_K"),
              F.ggml_tensor(rng, b + "ffn_down.weight", [inter, h], "Q4_K")]
    return t + [F.ggml_tensor(rng, "output_norm.weight", [h], "F32"), F.ggml_tensor(rng, "output.weight", [h, v], "Q6_K")]


def llama_hparams(name, h, n, inter):
    return [("general.name", "STRING", name), ("general.file_type", "UINT32", 15),
            ("llama.context_length", "UINT32", 2048), ("llama.embedding_length", "UINT32", h),
            ("llama.block_count", "UINT32", n), ("llama.feed_forward_length", "UINT32", inter),
            ("llama.attention.head_count", "UINT32", h // 64), ("llama.attention.head_count_kv", "UINT32", h // 64),
            ("llama.attention.layer_norm_rms_epsilon", "FLOAT32", 1e-5),
            ("llama.rope.dimension_count", "UINT32", 64), ("llama.rope.freq_base", "FLOAT32", 10000.0),
            ("general.quantization_version", "UINT32", 2)]


def build_gguf(fx, h, n, v, inter):
    rng = np.random.default_rng(8)
    m = fx.model("registry.ollama.ai", "library", "load-gguf", "latest", "load-time benchmark: Q4_K GGUF Llama")
    kvs = llama_hparams("load-gguf", h, n, inter) + F.llama_tokenizer_kvs(v)
    m.layer(F.MT_MODEL, fx.gguf_pywriter("llama", kvs, llama_gguf_tensors(rng, h, n, v, inter)))
    m.set_config(F.gguf_config("llama", "bench", "Q4_K_M"), newline=True)
    write_manifest(m)


LLAMA3_VOCAB = 128256


def llama3_tokenizer_kvs_as_ollama_wrote_them():
    """A Llama 3 byte-level BPE vocabulary (128,256 tokens: the 256 byte symbols first, filler words, then Llama 3's
    specials at 128000+) with the metadata gap Ollama's converter left in Llama 3 files (docs/FORMATS.md §12.4: no
    tokenizer.ggml.pre, end of sequence at <|end_of_text|> 128001): modelfs translates such a file (Llama3Tokenizer)."""
    from tokenizers import pre_tokenizers
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    words = [f"w{i}" for i in range(128000 - len(alphabet))]
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
                "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>",
                "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
    specials += [f"<|reserved_special_token_{i}|>" for i in range(3, 3 + LLAMA3_VOCAB - 128000 - len(specials))]
    toks = alphabet + words + specials
    return [("tokenizer.ggml.model", "STRING", "gpt2"),
            ("tokenizer.ggml.tokens", "ARRAY", toks, "STRING"),
            ("tokenizer.ggml.token_type", "ARRAY", [1] * 128000 + [3] * (LLAMA3_VOCAB - 128000), "INT32"),
            ("tokenizer.ggml.merges", "ARRAY", ["w 0", "w 1", "w 2"], "STRING"),
            ("tokenizer.ggml.bos_token_id", "UINT32", 128000),
            ("tokenizer.ggml.eos_token_id", "UINT32", 128001),
            ("tokenizer.chat_template", "STRING",
             "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}<|eot_id|>{% endfor %}")]


def build_dialect(fx, h, n, inter):
    """load-dialect: the Q4_K Llama with a Llama 3 vocabulary in Ollama's dialect; model.gguf is its translation."""
    rng = np.random.default_rng(9)
    m = fx.model("registry.ollama.ai", "library", "load-dialect", "latest", "load-time benchmark: Llama 3 in Ollama's dialect")
    kvs = llama_hparams("load-dialect", h, n, inter) + llama3_tokenizer_kvs_as_ollama_wrote_them()
    m.layer(F.MT_MODEL, fx.gguf_pywriter("llama", kvs, llama_gguf_tensors(rng, h, n, LLAMA3_VOCAB, inter)))
    m.set_config(F.gguf_config("llama", "bench", "Q4_K_M"), newline=True)
    write_manifest(m)


def build_image(fx, out, h, n):
    """load-image: a Z-Image pipeline (diffusers' ZImagePipeline: transformer, Qwen3 text encoder, VAE) with random
    weights, its transformer and text encoder about as wide as the Llamas (h * 3/4 and h / 2), imported as Ollama's
    `x/create --quantize int4` imports image models (make_diffusers_fixture.import_pipeline); modelfs shows bf16/
    (int4 converted to bf16) for DiffusionPipeline.from_pretrained. Returns the model's folder in the mount."""
    import torch
    from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, ZImagePipeline, ZImageTransformer2DModel
    from transformers import Qwen3Config, Qwen3Model
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import make_diffusers_fixture as D
    tok = D.train_tokenizer()
    dim, te_h = max(128, h * 3 // 4 // 64 * 64), max(64, h // 2 // 64 * 64)
    torch.manual_seed(0)
    transformer = ZImageTransformer2DModel(all_patch_size=(2,), all_f_patch_size=(1,), in_channels=16, dim=dim,
                                           n_layers=n, n_refiner_layers=1, n_heads=dim // 64, n_kv_heads=dim // 64,
                                           norm_eps=1e-5, qk_norm=True, cap_feat_dim=te_h, rope_theta=256.0,
                                           t_scale=1000.0, axes_dims=[16, 24, 24], axes_lens=[256, 32, 32])
    with torch.no_grad():
        transformer.x_pad_token.copy_(torch.ones_like(transformer.x_pad_token))
        transformer.cap_pad_token.copy_(torch.ones_like(transformer.cap_pad_token))
    vae = AutoencoderKL(in_channels=3, out_channels=3, down_block_types=["DownEncoderBlock2D", "DownEncoderBlock2D"],
                        up_block_types=["UpDecoderBlock2D", "UpDecoderBlock2D"], block_out_channels=[32, 64],
                        layers_per_block=1, latent_channels=16, norm_num_groups=32, sample_size=32,
                        scaling_factor=0.3611, shift_factor=0.1159)
    te = Qwen3Model(Qwen3Config(hidden_size=te_h, intermediate_size=te_h * 3, num_hidden_layers=n,
                                num_attention_heads=te_h // 64, num_key_value_heads=te_h // 64, head_dim=64,
                                vocab_size=len(tok), max_position_embeddings=512))
    pipe = ZImagePipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=te, tokenizer=tok,
                          transformer=transformer)
    src = D.save_pipeline(pipe, tok, os.path.join(out, "image-src"))
    d, _ = D.import_pipeline(fx, src, "load-image", "int4")
    shutil.rmtree(src)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=512)
    a = ap.parse_args()
    if a.hidden % 256:
        sys.exit("--hidden must be a multiple of 256 (Q4_K blocks, 64-wide heads)")
    inter = (a.hidden * 11 // 4 + 255) // 256 * 256
    fx = F.Fixture(a.out)
    build_st(fx, a.hidden, a.layers, a.vocab, inter)
    build_gguf(fx, a.hidden, a.layers, a.vocab, inter)
    build_dialect(fx, a.hidden, a.layers, inter)
    image = build_image(fx, a.out, a.hidden, a.layers)
    with open(os.path.join(a.out, "shape.json"), "w") as f:
        json.dump({"hidden": a.hidden, "layers": a.layers, "vocab": a.vocab, "intermediate": inter, "image": image}, f)
    print(f"load-time store written to {fx.store}")


if __name__ == "__main__":
    main()
