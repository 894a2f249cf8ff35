"""Vision models in Ollama's GGUF dialect for make_dialect_fixture.py (docs/FORMATS.md §12): each a tiny random model
from transformers' own class, its dialect file written by following Ollama's converter for that architecture step by
step (each step names the Go function it follows), next to llama.cpp's reference conversion (text + --mmproj), made
by make_dialect_fixture.py. Nothing here uses modelfs code.

mistral3: Mistral3ForConditionalGeneration with a Ministral 3 text model (YaRN rope, the Llama 4 attention
temperature) and a Pixtral vision tower, written as Ollama's convert/convert_mistral.go wrote it at commit a838421ea
("conversion and hyperparameter fixes for ministral and devstral", the converter of the published Ministral 3 and
Devstral files): rope.scaling.beta_fast/beta_slow/mscale_all_dim and rope.scaling_beta, which Ollama's
handle_mistral3 maps to llama.cpp's names.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

# --- mistral3 ----------------------------------------------------------------------------------------

MISTRAL3_IMAGE_TOKENS = ["[IMG]", "[IMG_BREAK]", "[IMG_END]"]   # Pixtral's image tokens, added to the tiny vocabulary
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]


def make_mistral3(out_dir: str) -> None:
    """A tiny Mistral3ForConditionalGeneration as Ministral 3 ships it (text: ministral3 with YaRN and
    llama_4_scaling_beta; vision: Pixtral with SiLU, spatial merge 2), hf_models' byte-level BPE tokenizer with
    Pixtral's image tokens, and a preprocessor_config.json with Pixtral's (CLIP) image statistics."""
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = H.train_qwen_tokenizer(specials_in_vocab=True)
    tok.add_special_tokens({"additional_special_tokens": MISTRAL3_IMAGE_TOKENS})
    ids = {t: tok.convert_tokens_to_ids(t) for t in MISTRAL3_IMAGE_TOKENS}
    text = T.Ministral3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=2048,
                              rms_norm_eps=1e-5, tie_word_embeddings=False, eos_token_id=tok.eos_token_id,
                              pad_token_id=tok.pad_token_id, bos_token_id=None,
                              rope_parameters={"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                                               "original_max_position_embeddings": 512, "beta_fast": 32.0,
                                               "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                               "llama_4_scaling_beta": 0.1})
    # 3 layers: the converter maps multi_modal_projector.linear_{bid} through the block numbers, linear_2 needs block 2
    vision = T.PixtralVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
                                   head_dim=16, image_size=64, patch_size=8, num_channels=3, hidden_act="silu",
                                   rope_parameters={"rope_theta": 10000.0, "rope_type": "axial"})
    cfg = T.Mistral3Config(text_config=text.to_dict(), vision_config=vision.to_dict(), image_token_index=ids["[IMG]"],
                           spatial_merge_size=2, vision_feature_layer=-1, projector_hidden_act="gelu",
                           multimodal_projector_bias=False)
    torch.manual_seed(2)
    model = T.Mistral3ForConditionalGeneration(cfg)
    M.randomize(model, f16=True)   # F16 values: the reference's F32 img_break row equals the dialect's F16 token_embd row
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    tekken_pre_tokenizer(os.path.join(out_dir, "tokenizer.json"))
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_processor_type": "PixtralImageProcessor", "image_mean": CLIP_MEAN, "image_std": CLIP_STD,
                   "patch_size": {"height": 8, "width": 8}, "size": {"longest_edge": 64}}, f, indent=1)


# the pre-tokenizer regex of Mistral's tekken tokenizer.json files (Mistral Nemo, Small 3.x, Ministral 3), as llama.cpp's
# llama-vocab.cpp quotes it for tokenizer.ggml.pre "tekken"
TEKKEN_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
                r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def tekken_pre_tokenizer(path: str) -> None:
    """The saved tokenizer.json's Split regex replaced by tekken's, so that the source tokenizer is what the name the
    reference conversion is given ("tekken") says (the vocabulary is the trained one)."""
    with open(path, encoding="utf-8") as f:
        t = json.load(f)
    splits = [p for p in t["pre_tokenizer"].get("pretokenizers", [t["pre_tokenizer"]]) if p.get("type") == "Split"]
    assert len(splits) == 1, t["pre_tokenizer"]
    splits[0]["pattern"] = {"Regex": TEKKEN_REGEX}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(t, f, ensure_ascii=False, indent=2)


MISTRAL3_REPLACEMENTS = [   # mistral3Model.Replacements(), in Go's order
    "language_model.model.norm", "output_norm",
    "language_model.model.", "",
    "language_model.", "",
    "layers", "blk",
    "transformer.layers", "blk",
    "vision_tower", "v",
    "ln_pre", "encoder_norm",
    "input_layernorm", "attn_norm",
    "post_attention_layernorm", "ffn_norm",
    "embed_tokens", "token_embd",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "mlp.down_proj", "ffn_down",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "attention.q_proj", "attn_q",
    "attention.k_proj", "attn_k",
    "attention.v_proj", "attn_v",
    "attention.o_proj", "attn_output",
    "attention_norm", "attn_norm",
    "feed_forward.gate_proj", "ffn_gate",
    "feed_forward.down_proj", "ffn_down",
    "feed_forward.up_proj", "ffn_up",
    "multi_modal_projector", "mm",
    "ffn_norm", "ffn_norm",
    "lm_head", "output",
]


def mistral3_checkpoint_name(key: str) -> str:
    """The published checkpoints' layout (language_model.model.*, language_model.lm_head, vision_tower.*,
    multi_modal_projector.*), which mistral3Model.Replacements() is written for, from transformers 5's names."""
    if key.startswith("model.language_model."):
        return "language_model.model." + key[len("model.language_model."):]
    if key == "lm_head.weight":
        return "language_model.lm_head.weight"
    if key.startswith("model."):
        return key[len("model."):]
    return key


def llama_permute(w: np.ndarray, heads: int) -> np.ndarray:
    """mistral3Model.repack: reshape (heads, 2, rows/heads/2, ...), swap axes 1 and 2, reshape back."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def mistral3_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import make_dialect_fixture as M
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    text, vision, rope = cfg["text_config"], cfg["vision_config"], cfg["text_config"]["rope_parameters"]
    tok, _ = M.ref_tokenizer_kvs(ref_text, "mistral3")
    # parseTokenizer: Mistral's tekken pre-tokenizer hash is none Ollama knows, so Pre stays "default"
    tok["tokenizer.ggml.pre"] = "default"
    w = gguf.GGUFWriter(out_path, "mistral3")   # mistral3Model.KV: general.architecture = "mistral3"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    # mistral3Model.KV at a838421ea, text configuration
    w.add_uint32("mistral3.vocab_size", text["vocab_size"])
    w.add_uint32("mistral3.block_count", text["num_hidden_layers"])
    w.add_uint32("mistral3.context_length", text["max_position_embeddings"])
    w.add_uint32("mistral3.embedding_length", text["hidden_size"])
    w.add_uint32("mistral3.feed_forward_length", text["intermediate_size"])
    w.add_uint32("mistral3.attention.head_count", text["num_attention_heads"])
    w.add_uint32("mistral3.attention.head_count_kv", text["num_key_value_heads"])
    w.add_float32("mistral3.attention.layer_norm_rms_epsilon", text["rms_norm_eps"])
    w.add_uint32("mistral3.attention.key_length", text["head_dim"])
    w.add_uint32("mistral3.attention.value_length", text["head_dim"])
    w.add_uint32("mistral3.rope.dimension_count", text["head_dim"] or text["hidden_size"] // text["num_attention_heads"])
    w.add_float32("mistral3.rope.freq_base", text.get("rope_theta") or rope["rope_theta"])
    w.add_float32("mistral3.rope.scaling.factor", rope["factor"])
    w.add_string("mistral3.rope.scaling.type", rope["rope_type"])
    w.add_float32("mistral3.rope.scaling.beta_fast", rope["beta_fast"])
    w.add_float32("mistral3.rope.scaling.beta_slow", rope["beta_slow"])
    w.add_float32("mistral3.rope.scaling.mscale", rope["mscale"])                   # Mscale != nil
    w.add_float32("mistral3.rope.scaling.mscale_all_dim", rope["mscale_all_dim"])   # MscaleAllDim != nil
    w.add_uint32("mistral3.rope.scaling.original_context_length", rope["original_max_position_embeddings"])
    w.add_float32("mistral3.rope.scaling_beta", rope["llama_4_scaling_beta"])        # Llama4ScalingBeta != nil
    # vision configuration
    w.add_uint32("mistral3.vision.block_count", vision["num_hidden_layers"])
    w.add_uint32("mistral3.vision.embedding_length", vision["hidden_size"])
    w.add_uint32("mistral3.vision.feed_forward_length", vision["intermediate_size"])
    w.add_uint32("mistral3.vision.attention.head_count", vision["num_attention_heads"])
    w.add_uint32("mistral3.vision.attention.key_length", vision["head_dim"])
    w.add_uint32("mistral3.vision.image_size", vision["image_size"])
    w.add_uint32("mistral3.vision.patch_size", vision["patch_size"])
    w.add_uint32("mistral3.vision.num_channels", vision["num_channels"])
    w.add_float32("mistral3.vision.rope.freq_base", vision.get("rope_theta") or vision["rope_parameters"]["rope_theta"])
    # multimodal configuration
    w.add_uint32("mistral3.image_token_index", cfg["image_token_index"])
    w.add_uint32("mistral3.spatial_merge_size", cfg["spatial_merge_size"])
    w.add_bool("mistral3.mm.projector_bias", cfg["multimodal_projector_bias"])
    if cfg.get("projector_hidden_act"):
        w.add_string("mistral3.mm.projector_hidden_act", cfg["projector_hidden_act"])
    # mistral3Model.Tensors: names by Replacements; text attn_q/attn_k (not v.*) through repack; kinds by Kind()
    sd = M.checkpoint_tensors(hf_dir)
    written = []
    for key in sorted(sd):
        name = M.go_replace(mistral3_checkpoint_name(key), MISTRAL3_REPLACEMENTS)
        data = sd[key].astype(np.float32)
        if not name.startswith("v."):
            if name.endswith(".attn_q.weight"):
                data = llama_permute(data, text["num_attention_heads"])
            elif name.endswith(".attn_k.weight"):
                data = llama_permute(data, text["num_key_value_heads"] or text["num_attention_heads"])
        M.add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def patch_converter() -> None:
    """Works around a gap of the bundled converter (called in its child process, convert_hf_to_gguf.py imported):
    MmprojModel.filter_tensors drops every language_model.* tensor before LlavaVisionModel.modify_tensors can take
    the [IMG_BREAK] row of embed_tokens, so its Pixtral mmproj lacks v.token_embd.img_break, which clip.cpp
    requires. The embedding is let through; LlavaVisionModel.modify_tensors then writes that one row and skips the
    rest, as it is written to."""
    import conversion.base as B
    import conversion.llava as LV
    original = LV.LlavaVisionModel.filter_tensors.__func__

    def keep_embedding(cls, item):
        if item[0].endswith("embed_tokens.weight"):
            return B.ModelBase.filter_tensors.__func__(cls, item)
        return original(cls, item)
    LV.LlavaVisionModel.filter_tensors = classmethod(keep_embedding)
