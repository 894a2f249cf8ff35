"""The oracle of a dialect model's Hugging Face folder (check_dialect.py, docs/SEMANTICS.md "Hugging Face folder of
GGUF models"): the source transformers model's own logits on a token sample, computed here by transformers with the
weights the reference GGUF holds (llama.cpp's --outtype f16 conversion: every tensor of two or more dimensions rounded
once to F16, the 1-D ones kept F32), so that the folder modelfs rebuilds from the translated GGUF must give them.

    import dialect_hf_folder as F
    entry.update(F.oracle("Qwen2_5_VLForConditionalGeneration", hf_dir, out_prefix, "Qwen2ForCausalLM", n=40))

For a vision-language source the forward is text-only (input ids, no pixels), which is what its text model's folder
stands for. Nothing here uses modelfs code.
"""
from __future__ import annotations

import numpy as np

import hf_models as H

# strings with the special tokens of the fixtures' Qwen-style vocabularies, beside hf_models.SAMPLE_TEXTS
CHAT = ["<|im_start|>user\nHi 42 café 🦙<|im_end|>\n<|im_start|>assistant\n", "a<|endoftext|>b<|im_end|>c"]


def oracle(source_class: str, hf_dir: str, out_prefix: str, hf_architecture: str, n: int = 40, keep_f32=()) -> dict:
    """The dialect_expected.json fields of the folder check: its class, the token ids (n of them, cycling over the
    vocabulary from id 3), the path of the source's float32 logits (out_prefix + "-logits.npy"), and the source
    tokenizer's ids of sample strings (without, then with special tokens added). Parameters whose name contains one of
    `keep_f32` are not rounded to F16 (tensors of two or more dimensions the dialect stores as F32)."""
    import torch
    import transformers as T
    model = getattr(T, source_class).from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="eager").eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 and not any(k in name for k in keep_f32):
                p.copy_(p.half().float())
    vocab = model.get_input_embeddings().weight.shape[0]
    ids = [3 + (7 * i) % (vocab - 3) for i in range(n)]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float().numpy()
    path = out_prefix + "-logits.npy"
    np.save(path, logits)
    tok = T.AutoTokenizer.from_pretrained(hf_dir)
    texts = list(H.SAMPLE_TEXTS) + CHAT
    return {"hf_architecture": hf_architecture, "hf_ids": ids, "hf_logits": path, "hf_folder_texts": texts,
            "hf_folder_tokens": [[tok(t, add_special_tokens=s)["input_ids"] for s in (False, True)] for t in texts]}
