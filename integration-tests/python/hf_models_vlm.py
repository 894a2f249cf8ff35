"""Tiny vision-language models for hf_models.py (the kinds "qwen25vl", "qwen3vl", "mistral3"), whose text models
llama.cpp's converter writes as GGUF architectures qwen2vl, qwen3vl and mistral3 (the vision towers go to its
--mmproj file, not made here). The Hugging Face folder of such a GGUF is the text class transformers runs it with
(FOLDER), and its oracle is the source model's own text-only forward (input ids, no pixels): check_hf_gguf.py
compares the folder with the text half of the source (text_name: renamed, the vision tensors left out).

- qwen25vl: Qwen2_5_VLForConditionalGeneration, M-RoPE sections [2, 3, 3] of 16-wide heads, q/k/v biases;
- qwen3vl: Qwen3VLForConditionalGeneration, interleaved M-RoPE [6, 5, 5] of 32-wide heads, q/k norms;
- mistral3: Mistral3ForConditionalGeneration with a plain Mistral text model (as Mistral Small 3.1 / 3.2 ship it:
  text model_type mistral, no rope scaling, no sliding window) and a one-block Pixtral tower;
- qwen3vlmoe: Qwen3VLMoeForConditionalGeneration, qwen3vl's text model with 4 experts (2 used) in both layers, saved
  with the experts fused in the published checkpoints' layout (after_save), which llama.cpp's converter splits;
- glmocr: GlmOcrForConditionalGeneration, GLM-4 text (sandwich norms, fused gate_up_proj, no q/k/v biases) with M-RoPE
  [2, 3, 3] over all of each 16-wide head (partial_rotary_factor 1.0, as GLM-OCR's config has it), a tokenizer with
  GLM's <|user|> (llama.cpp's Glm4Model.set_vocab requires it) whose bos, unk and eos are <|endoftext|>, as that
  converter writes them;
- glmocr_mtp: glmocr with the MTP layer GLM-OCR's published checkpoint carries after its text layers
  (text_config.num_nextn_predict_layers 1; model.language_model.layers.<n>.*: a decoder layer with eh_proj, enorm,
  hnorm, shared_head.norm, shared_head.head and embed_tokens, added after save_pretrained: transformers has no class
  for it and does not load it), which llama.cpp's converter writes as one more block; the folder leaves it out.
Each vision tower is as small as its class allows. Nothing here uses modelfs code.
"""
from __future__ import annotations

KINDS = ("qwen25vl", "qwen3vl", "mistral3", "qwen3vlmoe", "glmocr", "glmocr_mtp")
# the GGUF architecture llama.cpp's converter writes, and the folder's class / model_type
GGUF_ARCH = {"qwen25vl": "qwen2vl", "qwen3vl": "qwen3vl", "mistral3": "mistral3", "qwen3vlmoe": "qwen3vlmoe", "glmocr": "glm4",
            "glmocr_mtp": "glm4"}
FOLDER = {"qwen25vl": ("Qwen2ForCausalLM", "qwen2"), "qwen3vl": ("Qwen3ForCausalLM", "qwen3"),
          "mistral3": ("MistralForCausalLM", "mistral"), "qwen3vlmoe": ("Qwen3MoeForCausalLM", "qwen3_moe"),
          "glmocr": ("Glm4ForCausalLM", "glm4"), "glmocr_mtp": ("Glm4ForCausalLM", "glm4")}
# text config fields the folder's class has and the source's text config does not: their value in the folder
FOLDER_ONLY = {"qwen3vlmoe": {"norm_topk_prob": True}}   # Qwen3-VL-MoE's router always normalizes the top k
# kinds whose tokenizer is made here (the others: hf_models')
TOKENIZER_KINDS = ("glmocr", "glmocr_mtp")
GLM_SPECIALS = ["<|user|>", "<|assistant|>", "<|system|>"]
# rope parameters of the source's text config that only images use
MROPE_KEYS = ("mrope_section", "mrope_interleaved")


def config(kind: str, common: dict):
    """The transformers config of `kind` from hf_models' common fields (the text model's)."""
    import transformers as T
    text = dict(common)
    if kind == "qwen25vl":
        text.update(rope_parameters={"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [2, 3, 3]})
        vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=common["hidden_size"],
                      fullatt_block_indexes=[0])
        return T.Qwen2_5_VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=False,
                                  bos_token_id=common["pad_token_id"])   # the default 151643 is no id of the tiny vocabulary
    if kind == "qwen3vl":
        text.update(head_dim=32, rope_parameters={"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [6, 5, 5],
                                                  "mrope_interleaved": True})
        vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=common["hidden_size"],
                      num_position_embeddings=16, deepstack_visual_indexes=[0])
        return T.Qwen3VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=False)
    if kind == "mistral3":
        text = T.MistralConfig(**dict(common, head_dim=16), rope_theta=1000000000.0, sliding_window=None)
        vision = T.PixtralVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                       head_dim=16, image_size=64, patch_size=8)
        return T.Mistral3Config(text_config=text.to_dict(), vision_config=vision.to_dict(), spatial_merge_size=2,
                                vision_feature_layer=-1, multimodal_projector_bias=False, tie_word_embeddings=False)
    if kind == "qwen3vlmoe":
        # moe_intermediate_size and twice it != hidden_size: transformers tells the published expert layout from its own by
        # the shapes (a square gate_up_proj or down_proj loads untransposed)
        text.update(head_dim=32, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=48, decoder_sparse_step=1,
                    mlp_only_layers=[], rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                                                         "mrope_section": [6, 5, 5], "mrope_interleaved": True})
        vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=common["hidden_size"],
                      num_position_embeddings=16, deepstack_visual_indexes=[0])
        return T.Qwen3VLMoeConfig(text_config=text, vision_config=vision, tie_word_embeddings=False)
    if kind in ("glmocr", "glmocr_mtp"):
        if kind == "glmocr_mtp":   # as GLM-OCR's config.json: the MTP layer after the text layers
            text.update(num_nextn_predict_layers=1)
        text.update(rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3],
                                     "partial_rotary_factor": 1.0})
        vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, image_size=28, patch_size=14,
                      out_hidden_size=common["hidden_size"], spatial_merge_size=2, temporal_patch_size=2, rms_norm_eps=1e-5)
        return T.GlmOcrConfig(text_config=text, vision_config=vision, image_token_id=common["pad_token_id"],
                              video_token_id=common["pad_token_id"], tie_word_embeddings=False)
    raise ValueError(kind)


def train_tokenizer(kind: str):
    """glmocr: hf_models' Qwen-style tokenizer with GLM's role tokens, bos, unk and eos <|endoftext|>."""
    import hf_models as H
    tok = H.train_qwen_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": GLM_SPECIALS})
    tok.bos_token = tok.unk_token = tok.eos_token = "<|endoftext|>"
    return tok


def after_save(kind: str, out_dir: str) -> None:
    """qwen3vlmoe: the experts in the published checkpoints' layout (dialect_qwen3vlmoe.published_layout); glmocr_mtp:
    the MTP layer (add_glm_mtp)."""
    if kind == "qwen3vlmoe":
        import dialect_qwen3vlmoe as D
        D.published_layout(out_dir)
    if kind == "glmocr_mtp":
        add_glm_mtp(out_dir)


def add_glm_mtp(out_dir: str) -> None:
    """GLM-OCR's MTP layer as its published model.safetensors holds it (model.language_model.layers.16.* there): after
    the n text layers, layer n with a decoder layer's tensors (the shapes of layer 0's, fresh random values) and
    enorm, hnorm [hidden], eh_proj [hidden, 2 hidden], shared_head.norm [hidden], shared_head.head and embed_tokens
    [vocab, hidden]."""
    import json
    import os
    import torch
    from safetensors.torch import load_file, save_file
    with open(os.path.join(out_dir, "config.json")) as f:
        text = json.load(f)["text_config"]
    n, hidden, vocab = text["num_hidden_layers"], text["hidden_size"], text["vocab_size"]
    st = os.path.join(out_dir, "model.safetensors")
    sd = load_file(st)
    g = torch.Generator().manual_seed(16)
    first = "model.language_model.layers.0."
    mtp = f"model.language_model.layers.{n}."
    shapes = {mtp + k[len(first):]: v.shape for k, v in sd.items() if k.startswith(first)}
    shapes.update({mtp + "enorm.weight": (hidden,), mtp + "hnorm.weight": (hidden,), mtp + "eh_proj.weight": (hidden, 2 * hidden),
                   mtp + "shared_head.norm.weight": (hidden,), mtp + "shared_head.head.weight": (vocab, hidden),
                   mtp + "embed_tokens.weight": (vocab, hidden)})
    for name, shape in sorted(shapes.items()):
        w = 0.05 * torch.randn(shape, generator=g)
        sd[name] = (1.0 + w) if len(shape) == 1 else w
    save_file(sd, st, metadata={"format": "pt"})


def mtp_layers(weights: dict) -> set:
    """The layer indices of an MTP layer (glmocr_mtp: those with an eh_proj)."""
    import re
    return {m.group(1) for k in weights if (m := re.fullmatch(r"model\.language_model\.layers\.(\d+)\.eh_proj\.weight", k))}


def text_tensors(kind: str, weights: dict) -> dict:
    """The source's text tensors under the folder's names (text_name); qwen3vlmoe's fused experts per expert as
    save_pretrained writes Qwen3-MoE: gate_up_proj [E, hidden, 2 x I] -> experts.E.gate_proj / up_proj [I, hidden],
    down_proj [E, I, hidden] -> experts.E.down_proj [hidden, I]."""
    out = {}
    mtp = tuple(f"model.language_model.layers.{i}." for i in mtp_layers(weights))   # glmocr_mtp: not the folder's
    for k, v in weights.items():
        name = text_name(k)
        if name is None or (mtp and k.startswith(mtp)):
            continue
        if kind == "qwen3vlmoe" and name.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj")):
            base, proj = name.rsplit(".", 1)
            for e in range(v.shape[0]):
                if proj == "gate_up_proj":
                    half = v.shape[2] // 2
                    out[f"{base}.{e}.gate_proj.weight"] = v[e][:, :half].T.copy()
                    out[f"{base}.{e}.up_proj.weight"] = v[e][:, half:].T.copy()
                else:
                    out[f"{base}.{e}.down_proj.weight"] = v[e].T.copy()
            continue
        out[name] = v
    return out


def model_class(kind: str):
    import transformers as T
    return {"qwen25vl": T.Qwen2_5_VLForConditionalGeneration, "qwen3vl": T.Qwen3VLForConditionalGeneration,
            "mistral3": T.Mistral3ForConditionalGeneration, "qwen3vlmoe": T.Qwen3VLMoeForConditionalGeneration,
            "glmocr": T.GlmOcrForConditionalGeneration, "glmocr_mtp": T.GlmOcrForConditionalGeneration}[kind]


def text_name(name: str):
    """The folder's name of a source tensor, None for the vision tower and projector. save_pretrained writes each
    class's checkpoint layout: model.language_model.X (Qwen3-VL), model.X beside visual.* (Qwen2.5-VL),
    language_model.model.X and language_model.lm_head (Mistral 3); the folder's are model.X and lm_head."""
    for prefix, to in (("model.language_model.", "model."), ("language_model.model.", "model."),
                       ("language_model.lm_head.", "lm_head.")):
        if name.startswith(prefix):
            return to + name[len(prefix):]
    if name.startswith(("visual.", "vision_tower.", "multi_modal_projector.", "model.visual.", "model.vision_tower.",
                        "model.multi_modal_projector.")):
        return None
    return name if name.startswith(("model.", "lm_head.")) else None
