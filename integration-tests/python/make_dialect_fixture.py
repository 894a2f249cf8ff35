#!/usr/bin/env python3
"""Models in Ollama's own GGUF dialect (docs/FORMATS.md §12), each with llama.cpp's reference conversion.

    make_dialect_fixture.py OUT [LLAMA_CPP_SRC]

For each case a tiny random model is made from transformers' own class and converted two ways:
  (a) by llama.cpp's convert_hf_to_gguf.py (and --mmproj), the reference: OUT/ref/<case>.gguf, OUT/ref/<case>-mmproj.gguf;
  (b) into Ollama's dialect, by this script following Ollama's converter (convert/convert_<arch>.go in
      Ollama's repository) point by point; each step names the Go function it follows.
The dialect file is the model layer of OUT/store (an Ollama store), model `dialect-<case>`.
OUT/dialect_expected.json lists per model the reference files, the sample texts and the dialect blob.
Nothing here uses modelfs code.

Case gemma3: Gemma3ForConditionalGeneration (the text model of Gemma 3 4B and larger, with linear rope
scaling 8, and a SigLIP vision tower with the Gemma 3 projector), written as F16 by both converters; and
dialect-gemma3-bad, the same with fewer tokens than embedding rows (refused, served as stored).
Case gemma4 (dialect_gemma4.py): Gemma4ForConditionalGeneration in E2B's form with a vision tower and an audio encoder,
written as F16 by both converters; and dialect-gemma4-bad, the same without tokenizer.ggml.merges (refused: llama.cpp's Gemma 4 tokenizer
needs them).
Case mistral3 (dialect_vision.py): Mistral3ForConditionalGeneration, Ministral 3 text with a Pixtral tower.
Case lfm2: Lfm2ForCausalLM (short convolutions and attention), written as Ollama's converter wrote LFM2 before it
adopted llama.cpp's tensor name (commit 01cf7445f of Ollama's repository).
Cases qwen35, qwen35moe: Qwen3_5ForConditionalGeneration (with a tiny vision tower) and Qwen3_5MoeForCausalLM,
written as Ollama's converter wrote the published Qwen 3.5 / 3.6 files (dialect_qwen35.py); qwen35's reference
also has its --mmproj conversion (OUT/ref/qwen35-mmproj.gguf).
Cases qwen25vl, qwen3vl (dialect_qwenvl.py): Qwen2_5_VLForConditionalGeneration and Qwen3VLForConditionalGeneration,
written as Ollama's convert_qwen25vl.go / convert_qwen3vl.go wrote the published qwen2.5vl and qwen3-vl files; their
references are llama.cpp's text and --mmproj conversions.
Case embeddinggemma (dialect_embeddinggemma.py): Gemma3TextModel with sentence-transformers Dense modules, written in
the layout of Ollama's published embeddinggemma files; compared by the embeddings llama.cpp computes.
Cases gptoss, olmo3: GptOssForCausalLM and Olmo3ForCausalLM, written as Ollama's converter wrote the published
gpt-oss and olmo3 files (dialect_gptoss.py, dialect_olmo3.py).
Case llama4 (dialect_llama4.py): Llama4ForConditionalGeneration (MoE text, vision tower and projector in one file), written
as Ollama's convert_llama4.go wrote the published llama4 files; the reference also has its --mmproj conversion.
Case glm4moelite (dialect_glm4moelite.py): Glm4MoeLiteForCausalLM (MLA, MoE), written as convert_glm4moelite.go wrote
GLM-4.7-Flash; checked by gguf-py only (node-llama-cpp's llama.cpp aborts on the reference deepseek2 GGUF itself).
Case glmocr (dialect_glmocr.py): GlmOcrForConditionalGeneration (GLM-4 text with M-RoPE, GLM4V vision tower and
projector in one file), written as convert_glmocr.go wrote the published glm-ocr files; reference text and --mmproj.
Case nemotron_h_moe (dialect_nemotron.py): NemotronHForCausalLM (Mamba-2, attention and latent MoE layers, an MTP head),
written as convert_nemotron_h.go writes Nemotron 3 Super; the reference is llama.cpp's --no-mtp conversion.
Case deepseekocr (dialect_deepseekocr.py): DeepSeek-OCR (no transformers class: the checkpoint written with numpy in the
published layout), text (deepseek2-ocr) and the SAM + CLIP projector, written as convert_deepseekocr.go writes them.
Case qwen3next (dialect_qwen3next.py): Qwen3NextForCausalLM, written as convert_qwen3next.go first wrote the published
qwen3-next files (commit 77eb2ca61).
Case gemma3n (dialect_gemma3n.py): Gemma3nForCausalLM in the published layout, written as convert_gemma3n.go first wrote the
published gemma3n files (commit 73b642e6f): the multimodal vocabulary in token_embd and the tokenizer, the text one per layer.
Case llama3 (dialect_llama3.py): LlamaForCausalLM with a Llama-3-style tokenizer (128256 tokens), written as Ollama's
convert/llama.go wrote Llama 3 in May 2024 (commit 2d315ba9a): no pre-tokenizer, eos <|end_of_text|>; upstream llama.cpp
loads it and mis-tokenizes ("raw_loads").
Case snowflake (dialect_snowflake.py): XLMRobertaModel with a SentencePiece unigram tokenizer, CLS pooling; the dialect is
llama.cpp's conversion with the precompiled charsmap as the published file holds it (one-character base64 strings).
Case qwen3vlmoe (dialect_qwen3vlmoe.py): Qwen3VLMoeForConditionalGeneration (fused experts in the published layout), written
as convert_qwen3vl.go wrote the published qwen3-vl MoE files (commit 7d25b9e19); text and --mmproj references.
Case laguna (dialect_laguna.py): LagunaForCausalLM, written as convert_laguna.go wrote the published laguna files (87288ced4).
Case nemotron_h_omni (dialect_nemotron_h_omni.py): Nemotron 3 Omni / Nano VL (no transformers class: NemotronHForCausalLM's
text under language_model., a one-block RADIO v2.5-h tower and the projector written with numpy), text and --mmproj references.
Case gemma3-spm (dialect_gemma3_spm.py): Gemma3ForCausalLM with Gemma's SentencePiece tokenizer.model, written as convert_gemma3.go
writes the 1B layout; upstream llama.cpp loads the raw file and tokenizes it otherwise (no add_space_prefix).
Case gemma4moe (dialect_gemma4moe.py): Gemma4ForConditionalGeneration (text) in the form of 26B-A4B and 31B: experts,
keys shared with values and a KV-head count of the full layers' own; and gemma4moe-split, its experts as separate gate and up
tensors (a moe.* checkpoint).
Case mllama (dialect_mllama.py): MllamaForConditionalGeneration (cross-attention layers, vision tower), written as
convert_mllama.go writes it; no reference (upstream llama.cpp has no mllama): the text model's folder against the source.
"""
from __future__ import annotations

import atexit
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402
import hf_models as H  # noqa: E402

MT_MODEL = "application/vnd.ollama.image.model"
MT_CONFIG = "application/vnd.docker.container.image.v1+json"
EXTRA_TOKENS = 4   # image tokens Ollama's published gemma3 files keep beyond token_embd's rows (handle_gemma3's comment)


def llama_cpp_src(argv) -> str:
    src = argv[2] if len(argv) > 2 else os.environ.get("MODELFS_LLAMA_CPP_SRC") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "node", "node_modules", ".llama.cpp-src")
    if not os.path.isfile(os.path.join(src, "convert_hf_to_gguf.py")):
        raise SystemExit(f"llama.cpp converter not found at {src}")
    return os.path.abspath(src)


# --- the source model ------------------------------------------------------------------------------

def make_gemma3(out_dir: str) -> None:
    """A tiny Gemma3ForConditionalGeneration saved with save_pretrained, its tokenizer (hf_models' byte-level
    BPE with the specials in the vocabulary) and a preprocessor_config.json as Gemma 3 ships one."""
    import torch
    import transformers as T
    tok = H.train_tokenizer("gemma3_4b")
    text = H.model_config("gemma3_4b", len(tok), tok)
    text.max_position_embeddings = 131072        # Ollama's converter writes 131072 for the multimodal models
    text.rms_norm_eps = 1e-6                     # the value handle_gemma3 injects, as Gemma 3 ships it
    vision = T.SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                  image_size=64, patch_size=4, layer_norm_eps=1e-6, vision_use_head=False)
    cfg = T.Gemma3Config(text_config=text.to_dict(), vision_config=vision.to_dict(), mm_tokens_per_image=16,
                         boi_token_index=1, eoi_token_index=2, image_token_index=0)
    torch.manual_seed(0)
    model = T.Gemma3ForConditionalGeneration(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and "vision_tower" not in name:   # Gemma norms scale by 1 + w: w a multiple of 2^-7
                p.copy_(torch.round(12.8 * torch.randn_like(p)) / 128)
            elif p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.08)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    published_layout(out_dir)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "image_seq_length": 16,
                   "size": {"height": 64, "width": 64}}, f, indent=1)


def published_layout(out_dir: str) -> None:
    """transformers 5 saves the SigLIP tower as vision_tower.*; Gemma 3's published checkpoints (and both
    converters) name it vision_tower.vision_model.*, which transformers reads as well."""
    from safetensors.numpy import load_file, save_file
    for f in os.listdir(out_dir):
        if f.endswith(".safetensors"):
            p = os.path.join(out_dir, f)
            sd = load_file(p)
            save_file({("vision_tower.vision_model." + k[len("vision_tower."):] if k.startswith("vision_tower.")
                        and not k.startswith("vision_tower.vision_model.") else k): v for k, v in sd.items()}, p,
                      metadata={"format": "pt"})


def checkpoint_tensors(hf_dir: str) -> dict:
    """Every tensor of the safetensors files in hf_dir (the checkpoint Ollama's converters read), by name, as numpy."""
    from safetensors.numpy import load_file
    sd = {}
    for f in sorted(os.listdir(hf_dir)):
        if f.endswith(".safetensors"):
            sd.update(load_file(os.path.join(hf_dir, f)))
    return sd


def run_alone(argv, build, prefix: str) -> int:
    """A dialect module's own main: build(src, out, work, store, expected) for its cases alone into OUT (argv[1]):
    OUT/store, OUT/ref and OUT/dialect_expected.json, as make_dialect_fixture.py lays them out."""
    import tempfile
    out = os.path.abspath(argv[1])
    src = llama_cpp_src(argv)
    os.makedirs(os.path.join(out, "ref"), exist_ok=True)
    expected = {"models": {}}
    work = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, work, True)   # the source checkpoints: nothing in OUT refers to them
    build(src, out, work, os.path.join(out, "store"), expected)
    with open(os.path.join(out, "dialect_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    return 0


def randomize(model, f16: bool = False, std: float = 0.25) -> None:
    """Random weights for a tiny fixture model: 1-D parameters (norms, biases) near 1, the others N(0, std) (0.25 is
    wide enough that greedy decoding does not settle on one token); with f16, every value one an F16 holds exactly."""
    import torch
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, std)
            if f16:
                p.copy_(p.half().float())


def add_as_kind(w, name: str, data) -> None:
    """Adds tensor name to the GGUFWriter w in the type Ollama's converter gives it (tensorBase.Kind(): F16 or F32)."""
    w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if ollama_kind(name, data.shape) == "F16" else np.float32)))


def finish(w) -> None:
    """Writes what was added to the GGUFWriter w (header, KVs, tensors, in WriteGGUF's order) and closes it."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# --- (a) the reference: llama.cpp's converter -------------------------------------------------------

def convert_reference(src: str, jobs) -> None:
    """convert_hf_to_gguf.py --outtype f16 for each job (pre-tokenizer name, HF folder, output, --mmproj or not, or
    "st": --sentence-transformers-dense-modules, "no-mtp": --no-mtp, or "f32": --outtype f32),
    in one child process (the converter needs its own gguf-py, not the pinned one this process imports)."""
    args = [x for pre, hf, out, mmproj in jobs for x in (pre, hf, out, mmproj if isinstance(mmproj, str) else "mmproj" if mmproj else "text")]
    subprocess.run([sys.executable, os.path.abspath(__file__), "--convert", src, *args], check=True, stdout=subprocess.DEVNULL)


def _convert_main(args) -> None:
    src = args[0]
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    sys.path.insert(0, src)
    import conversion.base as B
    import dialect_vision
    dialect_vision.patch_converter()
    for i in range(1, len(args), 4):
        pre, hf_dir, out, face = args[i:i + 4]
        # the fixtures' tokenizers are trained here, so the converter does not know their pre-tokenizer hash:
        # the name the real model's tokenizer has (run_convert.py does the same)
        for obj in vars(B).values():
            if isinstance(obj, type) and "get_vocab_base_pre" in vars(obj):
                obj.get_vocab_base_pre = lambda self, tokenizer, pre=pre: pre
        sys.argv = [os.path.join(src, "convert_hf_to_gguf.py"), hf_dir, "--outtype", "f32" if face == "f32" else "f16", "--outfile", out] + \
            (["--mmproj"] if face == "mmproj" else []) + (["--sentence-transformers-dense-modules"] if face == "st" else []) + \
            (["--no-mtp"] if face == "no-mtp" else [])   # a source without the MTP head its architecture may carry
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as e:
            if e.code:
                raise


# --- (b) Ollama's dialect: convert/convert_gemma3.go --------------------------------------------------

GEMMA3_REPLACEMENTS = [   # gemma3Model.Replacements(), in Go's order
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.norm", "output_norm",
    "vision_tower.vision_model.embeddings", "v",
    "vision_tower.vision_model", "v",
    "vision_model.vision_model.embeddings", "v",
    "vision_model.vision_model", "v",
    "language_model.", "",
    "model.layers", "blk",
    "encoder.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.k_proj", "attn_k",
    "self_attn.k_norm", "attn_k_norm",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "self_attn.out_proj", "attn_output",
    "mlp.gate_proj", "ffn_gate",
    "mlp.down_proj", "ffn_down",
    "mlp.up_proj", "ffn_up",
    "post_attention_layernorm", "post_attention_norm",
    "pre_feedforward_layernorm", "ffn_norm",
    "post_feedforward_layernorm", "post_ffw_norm",
    "input_projection_weight", "input_projection.weight",
    "multi_modal_projector", "mm",
]


def go_replace(name: str, pairs) -> str:
    """strings.NewReplacer(pairs...).Replace(name): left to right, at each position the first old string in
    argument order that matches is replaced, no rescanning of the output."""
    olds = pairs[0::2]
    news = pairs[1::2]
    out, i = [], 0
    while i < len(name):
        for o, n in zip(olds, news):
            if o and name.startswith(o, i):
                out.append(n)
                i += len(o)
                break
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def checkpoint_name(key: str) -> str:
    """The published checkpoints' layout (language_model.model.*, vision_tower.vision_model.*,
    multi_modal_projector.*), which gemma3Model.Replacements() is written for; a model.language_model.* key
    (transformers 5's module names) is read as such."""
    if key.startswith("model.language_model."):
        return "language_model.model." + key[len("model.language_model."):]
    if key.startswith("model."):
        return key[len("model."):]
    return key


def ollama_kind(name: str, shape) -> str:
    """tensorBase.Kind() (convert/reader.go) of an F16 conversion: the listed names and 1-D tensors F32, else F16."""
    if (name.endswith((".bias", ".ffn_gate_inp.weight", ".shortconv.conv.weight", ".ssm_conv1d.weight"))
            or name in ("token_types.weight", "v.position_embd.weight") or len(shape) == 1):
        return "F32"
    return "F16"


def ref_tokenizer_kvs(ref_path: str, arch: str = "gemma3"):
    """The vocabulary as Ollama's parseTokenizer reads tokenizer.json (tokens by id with the added tokens,
    types, merges, the special token ids and add_* flags); taken from the reference GGUF, which holds the same
    lists, with pinned gguf-py."""
    import gguf
    r = gguf.GGUFReader(ref_path)

    def val(k):
        f = r.fields.get(k)
        return None if f is None else f.contents()
    kv = {}
    for k in ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type",
              "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
              "tokenizer.ggml.padding_token_id", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token"):
        if val(k) is not None:
            kv[k] = val(k)
    return kv, int(r.fields[arch + ".context_length"].contents())


def model_parameters_kv(w, tok, tokens, types, merges=True) -> None:
    """ModelParameters.KV (convert/convert.go): file type F16, quantization version, the vocabulary."""
    w.add_uint32("general.file_type", 1)
    w.add_uint32("general.quantization_version", 2)
    w.add_string("tokenizer.ggml.model", tok["tokenizer.ggml.model"])
    w.add_string("tokenizer.ggml.pre", tok["tokenizer.ggml.pre"])
    w.add_array("tokenizer.ggml.tokens", list(tokens))
    w.add_array("tokenizer.ggml.scores", [0.0] * len(tokens))   # Vocabulary.Scores of a BPE tokenizer.json: zeros
    w.add_array("tokenizer.ggml.token_type", list(types))
    w.add_array("tokenizer.ggml.merges", list(tok["tokenizer.ggml.merges"]) if merges else [])
    for k in ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id"):
        if k in tok:
            w.add_uint32(k, int(tok[k]))
    for k in ("tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token"):
        if k in tok:
            w.add_bool(k, bool(tok[k]))


def gemma3_dialect(hf_dir: str, ref_text: str, out_path: str, keep_tokens: int | None = None) -> dict:
    """The dialect file; with keep_tokens, a hostile one whose vocabulary is cut to fewer tokens than
    token_embd has rows (a header that contradicts itself: served as stored)."""
    import gguf
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    text, vision = cfg["text_config"], cfg["vision_config"]
    tok, _ = ref_tokenizer_kvs(ref_text)
    w = gguf.GGUFWriter(out_path, "gemma3")   # general.architecture = "gemma3" (gemma3Model.KV)
    tokens = list(tok["tokenizer.ggml.tokens"]) + [f"<unused_image_{i}>" for i in range(EXTRA_TOKENS)]
    types = list(tok["tokenizer.ggml.token_type"]) + [4] * EXTRA_TOKENS
    if keep_tokens is not None:
        tokens, types = tokens[:keep_tokens], types[:keep_tokens]
    model_parameters_kv(w, tok, tokens, types, merges=keep_tokens is None)
    # gemma3Model.KV, the default (multimodal) branch: no rms epsilon, no rope freq bases, the vision keys.
    # head counts: the switch on block count gives them for the published 34/48/62-layer models; the tiny
    # model takes its text config's (the default branch reads top-level fields a Gemma3Config lacks)
    w.add_uint32("gemma3.block_count", text["num_hidden_layers"])
    w.add_uint32("gemma3.attention.head_count", text["num_attention_heads"])
    w.add_uint32("gemma3.attention.head_count_kv", text["num_key_value_heads"])
    w.add_uint32("gemma3.context_length", cfg.get("max_position_embeddings") or 131072)   # cmp.Or(MaxPositionEmbeddings, 131072)
    w.add_uint32("gemma3.embedding_length", text["hidden_size"])
    w.add_uint32("gemma3.feed_forward_length", text["intermediate_size"])
    w.add_uint32("gemma3.attention.sliding_window", text["sliding_window"])
    w.add_uint32("gemma3.vision.block_count", vision["num_hidden_layers"])
    w.add_uint32("gemma3.vision.embedding_length", vision["hidden_size"])
    w.add_uint32("gemma3.vision.feed_forward_length", vision["intermediate_size"])
    w.add_uint32("gemma3.vision.image_size", vision["image_size"])
    w.add_uint32("gemma3.vision.patch_size", vision["patch_size"])
    w.add_uint32("gemma3.vision.num_channels", vision.get("num_channels") or 3)
    w.add_uint32("gemma3.vision.attention.head_count", vision["num_attention_heads"])
    w.add_float32("gemma3.vision.attention.layer_norm_epsilon", vision.get("layer_norm_eps") or 1e-6)
    w.add_uint32("gemma3.attention.key_length", text.get("head_dim") or 256)
    w.add_uint32("gemma3.attention.value_length", text.get("head_dim") or 256)
    w.add_uint32("gemma3.mm.tokens_per_image", cfg["mm_tokens_per_image"])
    # gemma3Model.TensorsWithTokenizer: names by Replacements, +1 on text norms (gemmaModel.addOne),
    # token_embd cut to the vocabulary only when it has more rows (it has fewer here: no cut), kinds by Kind()
    sd = checkpoint_tensors(hf_dir)
    written = []
    for key in sorted(sd):
        name = go_replace(checkpoint_name(key), GEMMA3_REPLACEMENTS)
        if name == "output.weight" and cfg.get("tie_word_embeddings", text.get("tie_word_embeddings", True)):
            continue   # tied: Gemma 3 checkpoints carry no lm_head
        data = sd[key].astype(np.float32)
        if not name.startswith("v.") and name.endswith("_norm.weight"):
            data = data + 1.0                      # gemmaModel.addOne
        add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    finish(w)
    return {"tensors": written, "extra_tokens": EXTRA_TOKENS}


# --- lfm2: Ollama's converter as of commit 01cf7445f (convert/convert_lfm2.go, "model: add lfm2 architecture") ---

def make_lfm2(out_dir: str) -> None:
    """A tiny Lfm2ForCausalLM (short-convolution and attention layers) with hf_models' byte-level BPE tokenizer.
    block_auto_adjust_ff_dim makes the real FFN width (128) differ from intermediate_size (192), as in the
    published LFM2 files whose lfm2.feed_forward_length handle_lfm2 corrects."""
    import torch
    import transformers as T
    tok = H.train_tokenizer("qwen3")
    cfg = T.Lfm2Config(vocab_size=len(tok), hidden_size=64, intermediate_size=192, num_hidden_layers=4, num_attention_heads=4,
                       num_key_value_heads=2, max_position_embeddings=512, block_multiple_of=64, block_auto_adjust_ff_dim=True,
                       layer_types=["conv", "full_attention", "conv", "full_attention"], conv_L_cache=3,
                       eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(1)
    model = T.Lfm2ForCausalLM(cfg)
    randomize(model, std=0.08)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)


LFM2_REPLACEMENTS = [   # lfm2Model.Replacements() at 01cf7445f: the embedding norm written as output_norm
    "model.embed_tokens", "token_embd",
    "model.embedding_norm", "output_norm",
    "model.layers", "blk",
    "operator_norm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.out_proj", "attn_output",
    "self_attn.q_layernorm", "attn_q_norm",
    "self_attn.k_layernorm", "attn_k_norm",
    "conv.conv", "shortconv.conv",
    "conv.in_proj", "shortconv.in_proj",
    "conv.out_proj", "shortconv.out_proj",
    "feed_forward.w1", "ffn_gate",
    "feed_forward.w2", "ffn_down",
    "feed_forward.w3", "ffn_up",
    "ffn_norm", "ffn_norm",
]


def lfm2_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    tok, _ = ref_tokenizer_kvs(ref_text, "lfm2")
    w = gguf.GGUFWriter(out_path, "lfm2")
    model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    # lfm2Model.KV at 01cf7445f: feed_forward_length = intermediate_size, per-layer KV heads from layer_types;
    # rope_theta: published config.json files carry it at the top level (transformers 4), this one in rope_parameters
    n = cfg["num_hidden_layers"]
    w.add_uint32("lfm2.vocab_size", cfg["vocab_size"])
    w.add_uint32("lfm2.block_count", n)
    w.add_uint32("lfm2.embedding_length", cfg["hidden_size"])
    w.add_uint32("lfm2.feed_forward_length", cfg["intermediate_size"])
    w.add_uint32("lfm2.context_length", cfg["max_position_embeddings"])
    w.add_uint32("lfm2.attention.head_count", cfg["num_attention_heads"])
    w.add_array("lfm2.attention.head_count_kv", [cfg["num_key_value_heads"] if cfg["layer_types"][i] == "full_attention" else 0
                                                 for i in range(n)])
    w.add_uint32("lfm2.attention.key_length", cfg["hidden_size"] // cfg["num_attention_heads"])
    w.add_uint32("lfm2.attention.value_length", cfg["hidden_size"] // cfg["num_attention_heads"])
    w.add_float32("lfm2.attention.layer_norm_rms_epsilon", cfg["norm_eps"])
    w.add_float32("lfm2.rope.freq_base", cfg.get("rope_theta") or cfg["rope_parameters"]["rope_theta"])
    w.add_uint32("lfm2.shortconv.l_cache", cfg["conv_L_cache"])
    sd = checkpoint_tensors(hf_dir)
    written = []
    for key in sorted(sd):   # lfm2Model.Tensors: conv weights [D, 1, K] squeezed to [D, K]
        name = go_replace(key, LFM2_REPLACEMENTS)
        data = sd[key].astype(np.float32)
        if name.endswith("shortconv.conv.weight") and data.ndim == 3 and data.shape[1] == 1:
            data = data.reshape(data.shape[0], data.shape[2])
        add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    finish(w)
    return {"tensors": written}


# --- the store ---------------------------------------------------------------------------------------

def put_blob(store: str, data: bytes) -> str:
    h = L.sha256_hex(data)
    os.makedirs(os.path.join(store, "blobs"), exist_ok=True)
    with open(os.path.join(store, "blobs", "sha256-" + h), "wb") as f:
        f.write(data)
    return "sha256:" + h


def put_model(store: str, name: str, gguf_bytes: bytes, family: str) -> str:
    config = json.dumps({"model_format": "gguf", "model_family": family, "model_families": [family],
                         "model_type": "tiny", "file_type": "F16", "architecture": "amd64", "os": "linux"}).encode()
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": {"mediaType": MT_CONFIG, "digest": put_blob(store, config), "size": len(config)},
                "layers": [{"mediaType": MT_MODEL, "digest": put_blob(store, gguf_bytes), "size": len(gguf_bytes)}]}
    p = os.path.join(store, "manifests", "registry.ollama.ai", "library", name, "latest")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        json.dump(manifest, f)
    return manifest["layers"][0]["digest"]


def main(argv) -> int:
    if argv[1:2] == ["--convert"]:
        _convert_main(argv[2:])
        return 0
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out = os.path.abspath(argv[1])
    src = llama_cpp_src(argv)
    store = os.path.join(out, "store")
    os.makedirs(os.path.join(out, "ref"), exist_ok=True)
    expected = {"models": {}}
    work = tempfile.mkdtemp(prefix="modelfs-dialect-")
    atexit.register(shutil.rmtree, work, True)   # the source checkpoints: nothing in OUT refers to them
    hf = os.path.join(work, "gemma3")
    make_gemma3(hf)
    ref_text = os.path.join(out, "ref", "gemma3.gguf")
    ref_mmproj = os.path.join(out, "ref", "gemma3-mmproj.gguf")
    hf_lfm2 = os.path.join(work, "lfm2")
    make_lfm2(hf_lfm2)
    ref_lfm2 = os.path.join(out, "ref", "lfm2.gguf")
    import dialect_qwen35 as Q35
    import dialect_gemma4 as G4
    qwen35 = {arch: (os.path.join(work, arch), os.path.join(out, "ref", arch + ".gguf")) for arch in ("qwen35", "qwen35moe")}
    for arch, (hf_dir, _) in qwen35.items():
        Q35.make_qwen35(hf_dir, moe=arch == "qwen35moe")
    hf_g4 = os.path.join(work, "gemma4")
    G4.make_gemma4(hf_g4, audio=True, named_specials=True)
    ref_g4, ref_g4_mmproj = os.path.join(out, "ref", "gemma4.gguf"), os.path.join(out, "ref", "gemma4-mmproj.gguf")
    import dialect_gptoss as GO
    import dialect_olmo3 as O3
    # text-only cases, one module each: (handler, GGUF family, source maker, dialect writer, reference pre-tokenizer)
    simple = {"gptoss": (GO.make_gptoss, GO.gptoss_dialect, GO.REF_PRE), "olmo3": (O3.make_olmo3, O3.olmo3_dialect, O3.REF_PRE)}
    for case, (make, _, _) in simple.items():
        make(os.path.join(work, case))
    convert_reference(src, [("qwen2", hf, ref_text, False), ("qwen2", hf, ref_mmproj, True), ("lfm2", hf_lfm2, ref_lfm2, False),
                            ("gemma4", hf_g4, ref_g4, False), ("gemma4", hf_g4, ref_g4_mmproj, True)]
                      + [("qwen35", hf_dir, ref, False) for hf_dir, ref in qwen35.values()]
                      + [("qwen35", qwen35["qwen35"][0], os.path.join(out, "ref", "qwen35-mmproj.gguf"), True)]
                      + [(pre, os.path.join(work, case), os.path.join(out, "ref", case + ".gguf"), False)
                         for case, (_, _, pre) in simple.items()])
    dialect = os.path.join(work, "gemma3-dialect.gguf")
    info = gemma3_dialect(hf, ref_text, dialect)
    with open(dialect, "rb") as f:
        blob = f.read()
    with open(os.path.join(out, "ref", "gemma3-dialect.gguf"), "wb") as f:
        f.write(blob)
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-gemma3"] = {
        "handler": "gemma3", "ref_gguf": ref_text, "ref_mmproj": ref_mmproj, "dialect_file": os.path.join(out, "ref", "gemma3-dialect.gguf"),
        "blob": put_model(store, "dialect-gemma3", blob, "gemma3"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))],
        "hf_architecture": "Gemma3ForCausalLM", "mmproj": True, "promoted": ["v.patch_embd.weight", "v.position_embd.weight"],
        "mtmd_template": "gemma"}   # llama.cpp's built-in Gemma template for the image check (check_dialect.py --mtmd)
    lfm2_file = os.path.join(out, "ref", "lfm2-dialect.gguf")
    info = lfm2_dialect(hf_lfm2, ref_lfm2, lfm2_file)
    with open(lfm2_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf_lfm2)
    expected["models"]["dialect-lfm2"] = {
        "handler": "lfm2", "ref_gguf": ref_lfm2, "dialect_file": lfm2_file, "blob": put_model(store, "dialect-lfm2", blob, "lfm2"),
        "texts": H.SAMPLE_TEXTS, "mmproj": False}
    for arch, (hf_dir, ref) in qwen35.items():
        dialect_file = os.path.join(out, "ref", arch + "-dialect.gguf")
        info = Q35.qwen35_dialect(hf_dir, ref, dialect_file, arch)
        with open(dialect_file, "rb") as f:
            blob = f.read()
        tok = AutoTokenizer.from_pretrained(hf_dir)
        expected["models"]["dialect-" + arch] = {
            "handler": arch, "ref_gguf": ref, "dialect_file": dialect_file, "blob": put_model(store, "dialect-" + arch, blob, arch),
            "texts": H.SAMPLE_TEXTS, "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
            "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm.", "mtp."))],
            # the dense model carries the vision tower: mmproj.gguf against llama.cpp's --mmproj conversion
            "mmproj": arch == "qwen35", **({"ref_mmproj": os.path.join(out, "ref", "qwen35-mmproj.gguf"),
                                            "promoted": ["v.patch_embd.weight", "v.patch_embd.weight.1", "v.position_embd.weight"],
                                            "mtmd_template": "chatml"}
                                           if arch == "qwen35" else {}),
            # handle_qwen35 adds no recurrent_layers array (llama.cpp derives it from full_attention_interval), and
            # Ollama's Kind() stores the shared-expert gate as F16 where llama.cpp's converter keeps F32
            "ref_differences": [arch + ".attention.recurrent_layers"], "views_without_mtp_block": 4,
            # the text model's Hugging Face folder read through the translation (the conv and the router stay F32)
            **__import__("dialect_hf_folder").oracle(Q35.SOURCE_CLASS[arch], hf_dir, os.path.join(out, "ref", arch),
                                                     Q35.FOLDER_CLASS[arch], keep_f32=Q35.KEEP_F32),
            "f16_where_ref_f32": [n.replace("mtp.layers.0.", "blk.4.") for n in info["tensors"]
                                  if n.endswith(".ffn_gate_inp_shexp.weight")]}   # the MTP layer follows the 4 text blocks
    g4_file = os.path.join(out, "ref", "gemma4-dialect.gguf")
    info = G4.gemma4_dialect(hf_g4, g4_file)
    with open(g4_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf_g4)
    expected["models"]["dialect-gemma4"] = {
        "handler": "gemma4", "ref_gguf": ref_g4, "ref_mmproj": ref_g4_mmproj, "dialect_file": g4_file,
        "blob": put_model(store, "dialect-gemma4", blob, "gemma4"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm.", "a."))], "mmproj": True, "mtmd_template": "gemma",
        "mtmd_audio": True,   # mmproj.gguf holds the audio encoder too: llama-mtmd-cli --audio, mount against reference
        # the text model's Hugging Face folder, read through the translation: E2B's per-layer embeddings, KV sharing and
        # double-wide MLPs against the source's text-only logits, on more tokens than the sliding window
        **__import__("dialect_hf_folder").oracle("Gemma4ForConditionalGeneration", hf_g4, os.path.join(out, "ref", "gemma4"),
                                                 "Gemma4ForCausalLM", n=40),
        # handle_gemma4_clip promotes the patch embedding (Ollama's converter stores v.position_embd as F32); modelfs
        # also widens the audio SSCP projection, F16 in Ollama's file, F32 in llama.cpp's (the source is F16-exact)
        "promoted": ["v.patch_embd.weight", "a.input_projection.weight"],
        # the audio blocks' per_dim_scale is softplus of the checkpoint's, which Ollama's converter computes in float64
        # (softplusRepacker) and llama.cpp's in torch float32: the translation serves Ollama's bytes, 1 ulp apart at most
        "ulp_close": ["per_dim_scale.weight"],
        # KVs the translation leaves as Ollama's converter wrote them (FORMATS.md §12.6): Ollama's scores (the ids), no
        # add_space_prefix / add_sep_token, which llama.cpp's Gemma 4 BPE vocabulary does not read; the token types
        # are llama.cpp's (compared), the llama checks compare the tokenization of strings
        "ref_differences": ["tokenizer.ggml.scores", "tokenizer.ggml.add_space_prefix", "tokenizer.ggml.add_sep_token"]}
    # --- vision dialects (dialect_vision.py): one block per architecture ---
    import dialect_vision as V
    hf_m3 = os.path.join(work, "mistral3")
    V.make_mistral3(hf_m3)
    ref_m3, ref_m3_mmproj = os.path.join(out, "ref", "mistral3.gguf"), os.path.join(out, "ref", "mistral3-mmproj.gguf")
    convert_reference(src, [("tekken", hf_m3, ref_m3, False), ("tekken", hf_m3, ref_m3_mmproj, True)])
    m3_file = os.path.join(out, "ref", "mistral3-dialect.gguf")
    V.mistral3_dialect(hf_m3, ref_m3, m3_file)
    with open(m3_file, "rb") as f:
        blob = f.read()
    expected["models"]["dialect-mistral3"] = {
        "handler": "mistral3", "ref_gguf": ref_m3, "ref_mmproj": ref_m3_mmproj, "dialect_file": m3_file,
        "blob": put_model(store, "dialect-mistral3", blob, "mistral3"), "texts": H.SAMPLE_TEXTS, "mmproj": True,
        "mtmd_template": "mistral-v7",
        # the text model's folder against the source's text-only logits, on more tokens than yarn's original context
        **__import__("dialect_hf_folder").oracle("Mistral3ForConditionalGeneration", hf_m3, os.path.join(out, "ref", "mistral3"),
                                                 "Ministral3ForCausalLM", n=520),
        # handle_mistral3_clip copies these two, which llama.cpp's converter does not write (clip.cpp's defaults are the same)
        "clip_extra": ["clip.rope.freq_base", "clip.vision.num_channels"]}
    # --- end of the vision dialects ---
    import dialect_llama4 as L4   # llama4 (text + vision): its own module, reference converted in its own child
    L4.build(src, out, work, store, expected)
    import dialect_glm4moelite as GLM   # glm4moelite (GLM-4.7-Flash, translated to deepseek2)
    GLM.build(src, out, work, store, expected)
    import dialect_glmocr as GOCR   # glmocr (GLM-OCR: glm4 text with the gate/up halves fused, glm4v projector)
    GOCR.build(src, out, work, store, expected)
    import dialect_nemotron as NEMO   # nemotron_h_moe (latent MoE + MTP head, as Nemotron 3 Super), text only
    NEMO.build(src, out, work, store, expected)
    import dialect_deepseekocr as DSOCR   # deepseekocr (DeepSeek-OCR: deepseek2-ocr text + the deepseekocr projector)
    DSOCR.build(src, out, work, store, expected)
    import dialect_qwen3next as Q3N   # qwen3next (Qwen3-Next: gated delta net + MoE), as Ollama's first qwen3next converter wrote it
    Q3N.build(src, out, work, store, expected)
    import dialect_gemma3n as G3N   # gemma3n (text: AltUp, LAuReL, per-layer inputs), as Ollama's first gemma3n converter wrote it
    G3N.build(src, out, work, store, expected)
    import dialect_llama3 as L3   # llama with Ollama's May 2024 Llama 3 tokenizer metadata (no pre-tokenizer, eos <|end_of_text|>)
    L3.build(src, out, work, store, expected)
    import dialect_snowflake as SF   # snowflake-arctic-embed2 (bert, T5 tokenizer): the charsmap as base64 digits; compared by embedding
    SF.build(src, out, work, store, expected)
    import dialect_qwen3vlmoe as VLM   # qwen3vlmoe (text MoE + vision tower in one file): text and mmproj, as convert_qwen3vl.go wrote it
    VLM.build(src, out, work, store, expected)
    import dialect_laguna as LG   # laguna (gated attention, SWA + YaRN, MoE with a shared expert), as convert_laguna.go wrote it
    LG.build(src, out, work, store, expected)
    import dialect_nemotron_h_omni as NHO   # nemotron_h_omni (Nemotron-H text + RADIO tower in one file; no transformers class)
    NHO.build(src, out, work, store, expected)
    import dialect_gemma3_spm as G3S   # gemma3 text-only (1B layout) with Gemma's SentencePiece tokenizer: add_space_prefix
    G3S.build(src, out, work, store, expected)
    import dialect_gemma4moe as G4M   # gemma4 as 26B-A4B / 31B (experts, keys shared with values), and its split-expert variant
    G4M.build(src, out, work, store, expected)
    # the differences from llama.cpp's conversion that stay after translation (the handler fixes none of them, and
    # llama.cpp reads none of them differently): gpt-oss's file type 4 (MXFP4 in Ollama's enumeration), the token ids
    # of gpt-oss's own vocabulary (out of this vocabulary's range: llama.cpp ignores them), the YaRN betas Ollama's
    # converter did not write (the llama.cpp defaults, 32 and 1, are gpt-oss's values); OLMo 3's sliding-window rope
    # base, which llama.cpp's converter writes and llama.cpp defaults to the rope base (the same value)
    simple_differences = {"gptoss": ["general.file_type", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "gpt-oss.rope.scaling.yarn_beta_fast",
                                     "gpt-oss.rope.scaling.yarn_beta_slow"], "olmo3": ["olmo2.rope.freq_base_swa"]}
    for case, (_, dialect_writer, _) in simple.items():
        ref, dialect_file = os.path.join(out, "ref", case + ".gguf"), os.path.join(out, "ref", case + "-dialect.gguf")
        dialect_writer(os.path.join(work, case), ref, dialect_file)
        with open(dialect_file, "rb") as f:
            blob = f.read()
        expected["models"]["dialect-" + case] = {
            "handler": case, "ref_gguf": ref, "dialect_file": dialect_file, "blob": put_model(store, "dialect-" + case, blob, case),
            "texts": H.SAMPLE_TEXTS, "mmproj": False, "ref_differences": simple_differences[case],
            # gpt-oss: the folder read through the translation against the source (router and expert biases F32 in both files)
            **(__import__("dialect_hf_folder").oracle("GptOssForCausalLM", os.path.join(work, case), os.path.join(out, "ref", case),
                                                      "GptOssForCausalLM", n=40, keep_f32=("mlp.router.weight", "_bias"))
               if case == "gptoss" else {}),
            # gpt-oss: generation_config.json's stops, looked up by text in the source tokenizer (Ollama's eos ids are gpt-oss's own)
            **({"hf_stop_ids": GO.stop_ids(__import__("transformers").AutoTokenizer.from_pretrained(os.path.join(work, case)))}
               if case == "gptoss" else {})}
    import dialect_qwenvl as VL   # qwen25vl, qwen3vl: text + mmproj, their own reference conversions
    VL.add_cases(src, work, out, store, expected)
    # embeddinggemma (dialect_embeddinggemma.py): Gemma3TextModel + sentence-transformers Dense modules, compared by embedding
    import dialect_embeddinggemma as EG
    hf_eg, ref_eg, eg_file = os.path.join(work, "embeddinggemma"), os.path.join(out, "ref", "embeddinggemma.gguf"), os.path.join(out, "ref", "embeddinggemma-dialect.gguf")
    EG.make_embeddinggemma(hf_eg)
    convert_reference(src, [(EG.REF_PRE, hf_eg, ref_eg, "st")])
    info = EG.embeddinggemma_dialect(hf_eg, ref_eg, eg_file)
    with open(eg_file, "rb") as f:
        expected["models"]["dialect-embeddinggemma"] = {
            "handler": "embeddinggemma", "ref_gguf": ref_eg, "dialect_file": eg_file, "texts": H.SAMPLE_TEXTS, "mmproj": False,
            "blob": put_model(store, "dialect-embeddinggemma", f.read(), "gemma3"), "embedding": 64,
            "dropped": [n for n in info["tensors"] if n.startswith(("v.", "mm."))]}   # none: no tower in an embedding model
    bad = os.path.join(work, "gemma3-bad.gguf")
    gemma3_dialect(hf, ref_text, bad, keep_tokens=300)
    with open(bad, "rb") as f:
        expected["refused"] = {"dialect-gemma3-bad": {"blob": put_model(store, "dialect-gemma3-bad", f.read(), "gemma3"),
                                                      "reason": "tokenizer.ggml.tokens has 300 entries for 400"}}
    bad = os.path.join(work, "qwen35moe-bad.gguf")
    reason = Q35.qwen35moe_expert_gap(bad)
    with open(bad, "rb") as f:
        expected["refused"]["dialect-qwen35moe-bad"] = {"blob": put_model(store, "dialect-qwen35moe-bad", f.read(), "qwen35moe"),
                                                        "reason": reason}
    bad = os.path.join(work, "gemma4-bad.gguf")
    G4.gemma4_dialect(hf_g4, bad, merges=False)
    with open(bad, "rb") as f:
        expected["refused"]["dialect-gemma4-bad"] = {"blob": put_model(store, "dialect-gemma4-bad", f.read(), "gemma4"),
                                                     "reason": "no tokenizer.ggml.merges"}
    # llama3.2-vision's architecture, which upstream llama.cpp cannot run (`modelfs show` says so): MllamaForConditionalGeneration
    # written as convert_mllama.go writes it, its text model's Hugging Face folder checked against the source
    import dialect_mllama as ML
    ML.build(src, out, work, store, expected)
    with open(os.path.join(out, "dialect_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    print(json.dumps({k: v["blob"] for k, v in expected["models"].items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
