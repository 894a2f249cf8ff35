"""Tiny vision-language models for hf_models.py (the kinds "qwen25vl", "qwen3vl", "mistral3"), whose text models
llama.cpp's converter writes as GGUF architectures qwen2vl, qwen3vl and mistral3 (the vision towers go to its
--mmproj file, not made here). The Hugging Face folder of such a GGUF is the text class transformers runs it with
(FOLDER), and its oracle is the source model's own text-only forward (input ids, no pixels): check_hf_gguf.py
compares the folder with the text half of the source (text_name: renamed, the vision tensors left out).

- qwen25vl: Qwen2_5_VLForConditionalGeneration, M-RoPE sections [2, 3, 3] of 16-wide heads, q/k/v biases;
- qwen3vl: Qwen3VLForConditionalGeneration, interleaved M-RoPE [6, 5, 5] of 32-wide heads, q/k norms;
- mistral3: Mistral3ForConditionalGeneration with a plain Mistral text model (as Mistral Small 3.1 / 3.2 ship it:
  text model_type mistral, no rope scaling, no sliding window) and a one-block Pixtral tower.
Each vision tower is as small as its class allows. Nothing here uses modelfs code.
"""
from __future__ import annotations

KINDS = ("qwen25vl", "qwen3vl", "mistral3")
# the GGUF architecture llama.cpp's converter writes, and the folder's class / model_type
GGUF_ARCH = {"qwen25vl": "qwen2vl", "qwen3vl": "qwen3vl", "mistral3": "mistral3"}
FOLDER = {"qwen25vl": ("Qwen2ForCausalLM", "qwen2"), "qwen3vl": ("Qwen3ForCausalLM", "qwen3"),
          "mistral3": ("MistralForCausalLM", "mistral")}
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
    raise ValueError(kind)


def model_class(kind: str):
    import transformers as T
    return {"qwen25vl": T.Qwen2_5_VLForConditionalGeneration, "qwen3vl": T.Qwen3VLForConditionalGeneration,
            "mistral3": T.Mistral3ForConditionalGeneration}[kind]


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
