"""Tiny random Hugging Face LLMs with real trained tokenizers, for the GGUF <-> HF view tests.

    import hf_models as H
    info = H.save_model("qwen3", "/tmp/q3")      # config.json, model.safetensors, tokenizer.json,
                                                 # tokenizer_config.json, generation_config.json
    H.KINDS                                      # ("llama", "qwen2", "qwen3", "qwen3moe", "phi3", "gemma3",
                                                 #  "qwen2moe", "mixtral", "gemma3_4b", "gemma", "gemma2", "olmo2",
                                                 #  "phi3_longrope", "granitemoe", "gemma4", "gemma4_e2b", "gptoss", "deepseek3",
                                                 #  "qwen25vl", "qwen3vl", "mistral3", "qwen35", "qwen35moe")
    H.check_features(kind, model)                # each feature of FEATURES[kind] changes the logits (or raises)
    H.SAMPLE_TEXTS                               # strings to compare tokenizations on

Everything is made with the real libraries (transformers `*ForCausalLM` random init with a fixed
seed, saved with `save_pretrained` in bfloat16; tokenizers trained with the `tokenizers` library on a
fixed corpus), never with modelfs code, so the files are independent oracles. Deterministic: the same
call gives the same bytes (checked by `python hf_models.py --check-deterministic`).

Tokenizers:
- gemma/gemma2/gemma3/gemma4: Gemma's SentencePiece BPE (gemma_tokenizer.py): tokenizer.model kept beside
  tokenizer.json (llama.cpp's converter reads it), no dummy prefix, <bos> added, Gemma's special-token ids
  (<start_of_turn> 106, <end_of_turn> 107), added_tokens_decoder in tokenizer_config.json as Gemma's.
- qwen2/qwen3/qwen3moe/qwen2moe/phi3/gemma3_4b/olmo2/phi3_longrope/granitemoe/gptoss/deepseek3 (the last two: hf_models_moe.py): byte-level BPE as Qwen2 ships it: NFC normalizer, a `Split` pre-tokenizer
  with Qwen2's regex (llama.cpp `tokenizer.ggml.pre = "qwen2"`) followed by `ByteLevel(use_regex=False)`,
  ByteLevel decoder, added special tokens `<|endoftext|>`, `<|im_start|>`, `<|im_end|>`, a ChatML
  chat template, eos `<|im_end|>`, pad `<|endoftext|>`, no bos. gemma3_4b's tokenizer.json also lists
  the special tokens in its model vocabulary (ids 0-2), as a SentencePiece-derived tokenizer.json does.
- llama/mixtral: Llama-2-style BPE with byte fallback stored only as tokenizer.json (no tokenizer.model):
  `<unk>`=0, `<s>`=1, `</s>`=2, the 256 byte tokens `<0x00>`..`<0xFF>` = 3..258, then the trained
  merges' tokens; normalizer Prepend("▁") + Replace(" ", "▁") (the legacy Llama 2 form), decoder
  Replace/ByteFallback/Fuse/Strip, a post-processor adding `<s>`; add_bos_token true; a Llama-2
  `[INST]` chat template.
The config's vocab_size equals the tokenizer's length (llama.cpp requires n_vocab = token_embd rows).
save_model first checks that every feature a mapping could get wrong changes the source's logits
(FEATURES: OLMo 2's post-norms and whole-projection q/k norms, Granite's four multipliers and top-2 routing,
LongRoPE's long factors beyond original_max_position_embeddings and its attention factor), so that the
fixture can tell a model that lost one apart. Model sizes keep every input dimension a multiple of 64, so every MLX quantization (group 64 affine,
32 mxfp4/mxfp8, 16 nvfp4) and GGUF NVFP4 blocks (64) apply.
"""
from __future__ import annotations

import json
import os
import sys

KINDS = ("llama", "qwen2", "qwen3", "qwen3moe", "phi3", "gemma3", "qwen2moe", "mixtral", "gemma3_4b",
         "gemma", "gemma2", "olmo2", "phi3_longrope", "granitemoe",
         "gemma4", "gemma4_e2b", "gemma4_keqv")
# Gemma 4 text kinds: gemma4 (sliding and full layers), gemma4_e2b (E2B's per-layer embeddings, KV sharing, double-wide MLPs),
# gemma4_keqv (26B/31B's full layers: keys shared with values, their own KV-head count)
GEMMA4_KINDS = ("gemma4", "gemma4_e2b", "gemma4_keqv")
# gpt-oss and DeepSeek-V3 (hf_models_moe.py)
import hf_models_moe as _moe  # noqa: E402
KINDS += _moe.KINDS
# the text models of vision-language models (hf_models_vlm.py)
import hf_models_vlm as _vlm  # noqa: E402
KINDS += _vlm.KINDS
# Qwen 3.5 / 3.6 text (hf_models_qwen35.py): gated delta-net layers, an MTP head beside the model
import hf_models_qwen35 as _q35  # noqa: E402
KINDS += _q35.KINDS
# kinds whose tokenizer is the Llama-2-style SentencePiece BPE (the others: Qwen-style byte-level BPE)
SPM_KINDS = ("llama", "mixtral")
# kinds whose tokenizer is Gemma's: a SentencePiece BPE without dummy prefix, tokenizer.model kept (gemma_tokenizer.py)
GEMMA_SPM_KINDS = ("gemma3", "gemma", "gemma2", "gemma4", "gemma4_e2b", "gemma4_keqv")

SAMPLE_TEXTS = [
    "Hello world! The quick brown fox jumps over the lazy dog.",
    "Once upon a time",
    " Once upon a time, 2024 times",
    "numbers 3 33 333 3333 and 3.14159, it's time; don't stop",
    "  leading spaces\nnew line\ttab   and trailing  ",
    "café naïve — ünïcödé ☃ 日本語 🦙",
]

# strings with special tokens, per tokenizer family (special_texts(kind))
SPECIAL_TEXTS = {
    "llama": ["<s>[INST] Hi 42 café 🦙 [/INST] ok</s>", "[INST]x</s><s>y"],
    "qwen": ["<|im_start|>user\nHi 42 café 🦙<|im_end|>\n<|im_start|>assistant\n", "a<|endoftext|>b<|im_end|>c"],
    "gemma": ["<bos><start_of_turn>user\nHi 42 café 🦙<end_of_turn>\n<start_of_turn>model\n",
              "a<eos>b<end_of_turn> c<mask>"],
}


def special_texts(kind: str) -> list:
    """Strings with the special tokens of `kind`'s tokenizer."""
    return SPECIAL_TEXTS["llama" if kind in SPM_KINDS else "gemma" if kind in GEMMA_SPM_KINDS else "qwen"]


_CORPUS_LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world! Hello there, how are you today?",
    "It's a truth universally acknowledged that a model needs a tokenizer.",
    "I've been told he's there; they'll see, we'd go, you're sure.",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 2024 3.14159 333 3333",
    "def main():\n    print('hello')\n    return 0\n",
    "café naïve résumé façade über straße",
    "The lazy dog sleeps while the quick fox runs over the hill and the river.",
    "Language models read tokens, and tokens are pieces of words.",
    "A llama, an alpaca and a vicuna walk into a bar.",
]

QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN_CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
LLAMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ ' ' + message['content'] + eos_token }}"
    "{% endif %}{% endfor %}")

# Qwen2's tokenizer.json pre-tokenizer regex (llama.cpp: tokenizer.ggml.pre = "qwen2")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")


# per rotary frequency pair (head_dim 16: 8), exact in f32 so that a GGUF's F32 factors read back equal
LONGROPE = {"rope_type": "longrope", "long_factor": [1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0],
            "short_factor": [1.0, 1.0, 1.125, 1.25, 1.5, 1.75, 2.0, 2.5]}


def _corpus():
    return [line for _ in range(20) for line in _CORPUS_LINES]


def train_byte_level_bpe(regex: str, specials: list, vocab_size: int = 400, **fast_kwargs):
    """A byte-level BPE (NFC, the pre-tokenizer's split expression `regex`, then byte-level) trained on the sample
    corpus with `specials` in its vocabulary; returns a PreTrainedTokenizerFast made with `fast_kwargs`."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=specials)
    tok.train_from_iterator(_corpus(), trainer=trainer)
    tok.add_special_tokens(specials)
    return PreTrainedTokenizerFast(tokenizer_object=tok, **fast_kwargs)


def train_qwen_tokenizer(vocab_size: int = 400, specials_in_vocab: bool = False):
    """A byte-level BPE like Qwen2's; returns a transformers PreTrainedTokenizerFast. `specials_in_vocab`:
    the special tokens are also entries of the model vocabulary (ids 0-2), as in Gemma's tokenizer.json."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size if specials_in_vocab else vocab_size - len(QWEN_SPECIALS),
                                  show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=QWEN_SPECIALS if specials_in_vocab else [])
    tok.train_from_iterator(_corpus(), trainer=trainer)
    tok.add_special_tokens(QWEN_SPECIALS)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None, chat_template=QWEN_CHAT_TEMPLATE,
                                   add_bos_token=False, add_eos_token=False, model_max_length=4096)


def train_llama_tokenizer(vocab_size: int = 400):
    """A Llama-2-style BPE with byte fallback (tokenizer.json only); a PreTrainedTokenizerFast."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, processors, trainers
    from transformers import PreTrainedTokenizerFast
    specials = ["<unk>", "<s>", "</s>"]
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    # 1. learn merges on the normalized corpus ("▁" for spaces, prefixed)
    learner = Tokenizer(models.BPE(unk_token="<unk>"))
    learner.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(byte_tokens), show_progress=False,
                                  special_tokens=specials)
    learner.train_from_iterator(_corpus(), trainer=trainer)
    learned = json.loads(learner.to_str())["model"]
    # 2. the Llama 2 id layout: specials, byte tokens, then the learned tokens in their id order
    vocab = {t: i for i, t in enumerate(specials + byte_tokens)}
    for t, _ in sorted(learned["vocab"].items(), key=lambda kv: kv[1]):
        if t not in vocab:
            vocab[t] = len(vocab)
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.pre_tokenizer = None
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   chat_template=LLAMA_CHAT_TEMPLATE, add_bos_token=True, add_eos_token=False,
                                   model_max_length=4096, legacy=True)


def train_tokenizer(kind: str):
    if kind in GEMMA_SPM_KINDS:
        import shutil
        import tempfile
        import gemma_tokenizer as GT
        d = tempfile.mkdtemp(prefix="gemma-spm-")
        try:
            tok = GT.train(_corpus(), d)
            with open(os.path.join(d, "tokenizer.model"), "rb") as f:
                tok.spm_model_bytes = f.read()
        finally:
            shutil.rmtree(d, ignore_errors=True)
        return tok
    if kind in SPM_KINDS:
        return train_llama_tokenizer()
    if kind in _vlm.TOKENIZER_KINDS:
        return _vlm.train_tokenizer(kind)
    if kind in _moe.TOKENIZER_KINDS:
        return _moe.train_tokenizer(kind)
    return train_qwen_tokenizer(specials_in_vocab=kind == "gemma3_4b")


def model_config(kind: str, vocab_size: int, tokenizer):
    """The transformers config object of a tiny model of `kind`."""
    import transformers as T
    common = dict(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                  rms_norm_eps=1e-5, tie_word_embeddings=False,
                  eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                  pad_token_id=tokenizer.pad_token_id)
    if kind == "llama":
        return T.LlamaConfig(**common, rope_theta=10000.0)
    if kind == "qwen2":
        return T.Qwen2Config(**common, rope_theta=1000000.0)
    if kind == "qwen3":
        return T.Qwen3Config(**common, head_dim=32, rope_theta=1000000.0)
    if kind == "qwen3moe":
        return T.Qwen3MoeConfig(**common, head_dim=32, num_experts=4, num_experts_per_tok=2,
                                moe_intermediate_size=64, decoder_sparse_step=1, norm_topk_prob=True,
                                rope_theta=1000000.0)
    if kind == "phi3":   # fused qkv_proj / gate_up_proj; original_max_position_embeddings = the context
        return T.Phi3Config(**common, rope_theta=10000.0, original_max_position_embeddings=512)
    if kind == "gemma3":  # text only; tied embeddings as Gemma 3 ships; the query scale llama.cpp assumes
        g = dict(common, tie_word_embeddings=True, num_hidden_layers=6)
        return T.Gemma3TextConfig(**g, head_dim=32, query_pre_attn_scalar=32, sliding_window=8)
    if kind == "gemma3_4b":  # the text model of Gemma 3 4B and larger: linear rope scaling 8 on the global layers
        g = dict(common, tie_word_embeddings=True, num_hidden_layers=6)
        return T.Gemma3TextConfig(**g, head_dim=32, query_pre_attn_scalar=32, sliding_window=8, rope_parameters={
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
    if kind == "gemma":   # Gemma 1 / CodeGemma: tied embeddings, two norms a layer
        return T.GemmaConfig(**dict(common, tie_word_embeddings=True), head_dim=32, hidden_activation="gelu_pytorch_tanh")
    if kind == "gemma2":  # soft-caps small enough and a window short enough that each changes the logits (gemma2_features)
        return T.Gemma2Config(**dict(common, tie_word_embeddings=True, num_hidden_layers=4), head_dim=32,
                              query_pre_attn_scalar=32, sliding_window=8, attn_logit_softcapping=GEMMA2_ATTN_CAP,
                              final_logit_softcapping=GEMMA2_FINAL_CAP, hidden_activation="gelu_pytorch_tanh")
    if kind == "qwen2moe":  # routed experts plus a shared expert with its sigmoid gate; q/k/v biases
        return T.Qwen2MoeConfig(**common, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=64,
                                shared_expert_intermediate_size=128, decoder_sparse_step=1, norm_topk_prob=False,
                                rope_theta=1000000.0)
    if kind == "mixtral":   # llama attention, experts block_sparse_moe.experts.E.w1/w2/w3
        return T.MixtralConfig(**common, num_local_experts=4, num_experts_per_tok=2, rope_theta=1000000.0)
    if kind == "olmo2":     # post-norms only, q/k norms over the whole projection
        return T.Olmo2Config(**common, rope_theta=500000.0)
    if kind == "granitemoe":   # multipliers of the embeddings, residuals, attention and logits; 4 experts, top 2
        return T.GraniteMoeConfig(**common, rope_theta=10000.0, num_local_experts=4, num_experts_per_tok=2,
                                  embedding_multiplier=12.0, residual_multiplier=0.22, attention_multiplier=0.015625,
                                  logits_scaling=8.0)
    if kind == "phi3_longrope":   # the 128k variants' LongRoPE: long factors beyond 8 positions, attention factor sqrt(2)
        return T.Phi3Config(**dict(common, max_position_embeddings=64), original_max_position_embeddings=8,
                            rope_parameters=dict(LONGROPE, rope_theta=10000.0))
    if kind == "gemma4":  # Gemma 4 text: a sliding layer (head_dim 32) then a global one (global_head_dim 64, proportional
        # rope rotating a quarter of it), no per-layer embeddings; a final soft-cap small enough to change the logits
        return T.Gemma4TextConfig(**dict(common, tie_word_embeddings=True, rms_norm_eps=1e-6), head_dim=32, global_head_dim=64,
                                  sliding_window=8, layer_types=["sliding_attention", "full_attention"],
                                  hidden_size_per_layer_input=0, vocab_size_per_layer_input=vocab_size,
                                  final_logit_softcapping=GEMMA2_FINAL_CAP)
    if kind == "gemma4_keqv":  # Gemma 4 26B/31B's full layers (attention_k_eq_v): no v_proj, V is k_proj's output, and one
        # KV head there (num_global_key_value_heads) against the sliding layer's two
        return T.Gemma4TextConfig(**dict(common, tie_word_embeddings=True, rms_norm_eps=1e-6), head_dim=32, global_head_dim=64,
                                  sliding_window=8, layer_types=["sliding_attention", "full_attention"],
                                  hidden_size_per_layer_input=0, vocab_size_per_layer_input=vocab_size,
                                  attention_k_eq_v=True, num_global_key_value_heads=1, final_logit_softcapping=GEMMA2_FINAL_CAP)
    if kind == "gemma4_e2b":  # Gemma 4 E2B's form (google/gemma-4-E2B: per-layer inputs, the last layers sharing KV, their
        # MLPs double-wide), shrunk: sliding, full, then a sliding and a full layer reading layers 0 and 1's keys; inputs of 16
        return T.Gemma4TextConfig(**dict(common, tie_word_embeddings=True, rms_norm_eps=1e-6, num_hidden_layers=4), head_dim=32,
                                  global_head_dim=64, sliding_window=8, layer_types=["sliding_attention", "full_attention"] * 2,
                                  hidden_size_per_layer_input=16, vocab_size_per_layer_input=vocab_size, num_kv_shared_layers=2,
                                  use_double_wide_mlp=True, final_logit_softcapping=GEMMA2_FINAL_CAP)
    if kind in _moe.KINDS:
        return _moe.config(kind, common)
    if kind in _vlm.KINDS:
        return _vlm.config(kind, common)
    if kind in _q35.KINDS:
        return _q35.config(kind, common)
    raise ValueError(kind)


GEMMA2_ATTN_CAP = 2.0
GEMMA2_FINAL_CAP = 3.0


def gemma2_features(model, tokenizer, min_change: float = 1e-2) -> dict:
    """How much each Gemma 2 feature changes the logits of a sample longer than the window (eager attention):
    the same weights without the attention soft-cap, without the final soft-cap, with no sliding window.
    Raises when one changes them by less than `min_change` (the fixture would not test it)."""
    import copy
    import torch
    ids = torch.tensor([tokenizer.encode(SAMPLE_TEXTS[0], add_special_tokens=False)[:24]])
    assert ids.shape[1] > model.config.sliding_window

    def logits(change):
        cfg = copy.deepcopy(model.config)
        change(cfg)
        m = type(model)(cfg)
        m.load_state_dict(model.state_dict())
        m = m.float().eval()
        m.config._attn_implementation = "eager"
        with torch.no_grad():
            return m(ids).logits
    base = logits(lambda c: None)
    out = {"attn_logit_softcapping": logits(lambda c: setattr(c, "attn_logit_softcapping", None)),
           "final_logit_softcapping": logits(lambda c: setattr(c, "final_logit_softcapping", None)),
           "sliding_window": logits(lambda c: setattr(c, "layer_types", ["full_attention"] * c.num_hidden_layers))}
    diffs = {k: float((v - base).abs().max()) for k, v in out.items()}
    weak = {k: d for k, d in diffs.items() if d < min_change}
    if weak:
        raise AssertionError(f"gemma2 fixture: these features barely change the logits: {weak}")
    return diffs


def model_class(kind: str):
    import transformers as T
    if kind in _moe.KINDS:
        return _moe.model_class(kind)
    if kind in _vlm.KINDS:
        return _vlm.model_class(kind)
    if kind in _q35.KINDS:
        return _q35.model_class(kind)
    return {"llama": T.LlamaForCausalLM, "qwen2": T.Qwen2ForCausalLM, "qwen3": T.Qwen3ForCausalLM,
            "qwen3moe": T.Qwen3MoeForCausalLM, "phi3": T.Phi3ForCausalLM, "gemma3": T.Gemma3ForCausalLM,
            "gemma3_4b": T.Gemma3ForCausalLM, "qwen2moe": T.Qwen2MoeForCausalLM, "mixtral": T.MixtralForCausalLM,
            "gemma": T.GemmaForCausalLM, "gemma2": T.Gemma2ForCausalLM,
            "olmo2": T.Olmo2ForCausalLM, "phi3_longrope": T.Phi3ForCausalLM,
            "granitemoe": T.GraniteMoeForCausalLM, "gemma4": T.Gemma4ForCausalLM, "gemma4_e2b": T.Gemma4ForCausalLM,
            "gemma4_keqv": T.Gemma4ForCausalLM}[kind]


def make_model(kind: str, seed: int = 0):
    """(model, tokenizer): a random-init bfloat16 model of `kind` and its trained tokenizer."""
    import torch
    tokenizer = train_tokenizer(kind)
    cfg = model_config(kind, len(tokenizer), tokenizer)
    torch.manual_seed(seed)
    model = model_class(kind)(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():   # norms around 1 (not exactly 1), weights larger than
            if p.dim() == 1 and kind.startswith("gemma") and kind not in GEMMA4_KINDS:  # Gemma scales by 1 + w: w near 0, a multiple of 2^-7
                p.copy_(torch.round(12.8 * torch.randn_like(p)) / 128)   # so that 1 + w is exact in bf16
            elif p.dim() == 1:                      # the default 0.02 so greedy generation is not flat
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.08)
        if kind in _moe.KINDS:
            _moe.init_buffers(kind, model)
        if kind in _q35.KINDS:
            _q35.init(model)
        if kind in GEMMA4_KINDS:   # the per-layer output scalars (buffers, saved with the weights) away from 1
            for i, layer in enumerate(model.model.layers):
                layer.layer_scalar.fill_(0.5 + 0.25 * i)
    model = model.to(torch.bfloat16)
    if kind == "gemma2":
        gemma2_features(model, tokenizer)
    return model, tokenizer


def _set_params(pattern: str, value: float):
    """A mutation: every parameter whose name contains `pattern` filled with `value`."""
    def mutate(model):
        for name, p in model.named_parameters():
            if pattern in name:
                p.data.fill_(value)
    return mutate


def _set_config(**fields):
    def mutate(model):
        for k, v in fields.items():
            setattr(model.config, k, v)
    return mutate


def _set_attr(name: str, value):
    """A mutation: attribute `name` (copied from the config at construction) set to `value` in every module having it."""
    def mutate(model):
        hit = [m for m in model.modules() if hasattr(m, name) and not isinstance(getattr(m, name), __import__("torch").nn.Module)]
        if not hit:
            raise AssertionError(f"no module has {name}")
        for m in hit:
            setattr(m, name, value)
    return mutate


def _set_rope(**fields):
    def mutate(model):
        model.config.rope_parameters.update(fields)
        from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
        for m in model.modules():   # the rotary embedding computed its frequencies at construction: again
            if hasattr(m, "rope_type") and hasattr(m, "inv_freq") and hasattr(m, "attention_scaling"):
                inv_freq, m.attention_scaling = ROPE_INIT_FUNCTIONS[m.rope_type](model.config, None)
                m.inv_freq, m.original_inv_freq = inv_freq, inv_freq.clone()
    return mutate


# the features of each kind that a mapping could get wrong, as mutations that must change the logits
# (issue 34: "make the model big enough that each feature changes the output, and check that it does")
FEATURES = {
    "olmo2": {"post-attention norms": _set_params("post_attention_layernorm", 1.0),
              "post-feed-forward norms": _set_params("post_feedforward_layernorm", 1.0),
              "q norms over the whole projection": _set_params("q_norm", 1.0),
              "k norms over the whole projection": _set_params("k_norm", 1.0)},
    "granitemoe": {"embedding multiplier": _set_attr("embedding_multiplier", 1.0),
                   "residual multiplier": _set_attr("residual_multiplier", 1.0),
                   "attention multiplier (not 1/sqrt(head_dim))": _set_attr("scaling", 0.25),
                   "logits scaling": _set_config(logits_scaling=1.0),
                   "top-2 routing of 4 experts": _set_attr("top_k", 4)},
    "phi3_longrope": {"long factors (positions beyond original_max_position_embeddings)":
                      _set_rope(long_factor=LONGROPE["short_factor"]),
                      "attention factor": _set_rope(attention_factor=1.0)},
}
FEATURES["gemma4"] = {"layer scalars": lambda m: [layer.layer_scalar.fill_(1.0) for layer in m.model.layers],
                      "final logit soft-cap": _set_config(final_logit_softcapping=None),
                      "sliding window": _set_config(sliding_window=4096)}
FEATURES["gemma4_e2b"] = dict(FEATURES["gemma4"], **{
    "per-layer embeddings": _set_params("embed_tokens_per_layer", 0.0),
    "per-layer input gates": _set_params("per_layer_input_gate", 0.0),
    "per-layer model projection": _set_params("per_layer_model_projection", 0.0)})
FEATURES["gemma4_keqv"] = FEATURES["gemma4"]
FEATURE_PROMPT = list(range(3, 45))


def check_features(kind: str, model) -> dict:
    """{feature: max |logits change|} for `kind`'s FEATURES, each applied to a copy of `model` (made float32) on
    FEATURE_PROMPT; raises when a feature leaves the logits unchanged (the fixture could not tell it apart)."""
    import copy
    import torch
    base = model.float().eval()
    copies = {feature: copy.deepcopy(base) for feature in FEATURES.get(kind, {})}   # before a forward caches frequencies
    ids = torch.tensor([FEATURE_PROMPT])
    with torch.no_grad():
        want = base(ids).logits
    out = {}
    for feature, mutate in FEATURES.get(kind, {}).items():
        m = copies[feature]
        mutate(m)
        with torch.no_grad():
            out[feature] = float((m(ids).logits - want).abs().max())
        if not out[feature] > 1e-3:
            raise AssertionError(f"{kind}: {feature} does not change the logits ({out[feature]:.3g}); make the model bigger")
    return out


def tokenizer_config_alone(out_dir: str):
    """Leaves tokenizer.json + tokenizer_config.json only (the chat template goes inside tokenizer_config.json, as
    transformers 4 wrote it and as Ollama's importer reads it): the other files save_pretrained writes removed;
    (the path of tokenizer_config.json, its content) for the caller to complete and write_tokenizer_config."""
    for extra in ("special_tokens_map.json", "tokenizer.model", "chat_template.jinja"):
        p = os.path.join(out_dir, extra)
        if os.path.exists(p):
            os.remove(p)
    tc_path = os.path.join(out_dir, "tokenizer_config.json")
    with open(tc_path, encoding="utf-8") as f:
        return tc_path, json.load(f)


def write_tokenizer_config(tc_path: str, tc: dict) -> None:
    with open(tc_path, "w", encoding="utf-8") as f:
        json.dump(tc, f, indent=2, ensure_ascii=False, sort_keys=True)
        f.write("\n")


def save_model(kind: str, out_dir: str, seed: int = 0) -> dict:
    """Saves model + tokenizer of `kind` to `out_dir` with save_pretrained; returns a summary."""
    model, tokenizer = make_model(kind, seed)
    if kind in FEATURES:
        import copy
        check_features(kind, copy.deepcopy(model))
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    if kind in _vlm.KINDS:
        _vlm.after_save(kind, out_dir)
    tokenizer.save_pretrained(out_dir)
    if kind in _q35.KINDS:
        _q35.after_save(kind, out_dir)
    tc_path, tc = tokenizer_config_alone(out_dir)
    tc["add_bos_token"] = kind in SPM_KINDS or kind in GEMMA_SPM_KINDS
    tc["add_eos_token"] = False
    tc["chat_template"] = LLAMA_CHAT_TEMPLATE if kind in SPM_KINDS else QWEN_CHAT_TEMPLATE
    if kind in GEMMA_SPM_KINDS:   # Gemma ships tokenizer.model beside tokenizer.json (llama.cpp's converter reads it)
        import gemma_tokenizer as GT
        tc["chat_template"] = GT.CHAT_TEMPLATE
        with open(os.path.join(out_dir, "tokenizer.json"), encoding="utf-8") as f:   # as Gemma's (transformers 4) lists them
            tc["added_tokens_decoder"] = {str(a["id"]): {k: a[k] for k in ("content", "lstrip", "normalized", "rstrip",
                                                                           "single_word", "special")}
                                          for a in json.load(f)["added_tokens"]}
        with open(os.path.join(out_dir, "tokenizer.model"), "wb") as f:
            f.write(tokenizer.spm_model_bytes)
    if kind in GEMMA4_KINDS:   # Gemma 4's tokenizer declares its turn markers special: llama.cpp's converter (LlamaHfVocab)
        tc["extra_special_tokens"] = ["<start_of_turn>", "<end_of_turn>"]   # marks exactly the special ids CONTROL
    write_tokenizer_config(tc_path, tc)
    return {"kind": kind, "dir": out_dir, "vocab_size": len(tokenizer),
            "architectures": model.config.architectures, "files": sorted(os.listdir(out_dir))}


def _main(argv):
    import hashlib
    import tempfile
    if argv[1:2] == ["--check-deterministic"]:
        for kind in KINDS:
            digests = []
            for _ in range(2):
                d = tempfile.mkdtemp()
                save_model(kind, d)
                digests.append({f: hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
                                for f in sorted(os.listdir(d))})
            print(kind, "deterministic" if digests[0] == digests[1] else f"NOT deterministic: {digests}")
        return 0
    if len(argv) != 3 or argv[1] not in KINDS:
        print(f"usage: hf_models.py {{{'|'.join(KINDS)}}} OUT_DIR | --check-deterministic", file=sys.stderr)
        return 2
    print(json.dumps(save_model(argv[1], argv[2]), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
