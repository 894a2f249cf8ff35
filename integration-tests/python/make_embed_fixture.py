#!/usr/bin/env python3
"""Embedding models (issue 34) as Ollama stores them, for the Hugging Face + sentence-transformers folder.

    make_embed_fixture.py OUT

writes
    OUT/src/<case>/        the source: a tiny random model made by transformers' own class, with a trained
                           tokenizer, saved as a SentenceTransformer (Transformer, Pooling, Normalize): the oracle
    OUT/store/             an Ollama store: each source converted by llama.cpp's convert_hf_to_gguf.py (run
                           in-process from MODELFS_LLAMA_CPP_SRC, F32), some re-encoded as Q8_0/F16 with that
                           converter's own gguf-py,
                           stored as one model layer with a GGUF config blob, as Ollama stores a GGUF model
    OUT/expected.json      make_fixture's schema; "embed": {<model dir>: {"source", "kind", "pooling", "ggml_type"}}

Cases: bert (BertModel, WordPiece, mean pooling; all-minilm; mxbai-embed-large and snowflake-arctic-embed are
BERT with CLS pooling, which xlmr covers), nomic (NomicBertModel, mean; nomic-embed-text), xlmr (XLMRobertaModel with a
SentencePiece Unigram tokenizer, CLS; bge-m3) and qwen3 (Qwen3 with last-token pooling and an appended
<|endoftext|>; qwen3-embedding). llama.cpp's converter reads the pooling type from the source's modules.json.

nomic: the converter's NomicBertModel reads nomic's remote-code checkpoint (config n_embd/n_positions/
activation_function/rotary_emb_*, tensors encoder.layers.N.attn.Wqkv, mlp.fc11/fc12/fc2, norm1/norm2, emb_ln);
transformers' native NomicBertModel saves neither, so the converter is given that form, written here from the
native model by the inverse of transformers' own conversion_mapping.py rules for nomic_bert. The native config
names stay in it too: the converter loads config.json with AutoConfig, and transformers 5 (which knows nomic_bert)
then ignores n_embd/n_layer/n_head/n_inner and fills NomicBertConfig's defaults (768/12/12/3072; nomic-embed-text
v1.5's own sizes, so only other sizes are misread).
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import runpy
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

HIDDEN = 64
# (case, kind, pooling, GGUF tensor types to store)
CASES = [
    ("bert", "bert", "mean", ("F32", "Q8_0", "F16")),
    ("nomic", "nomic", "mean", ("F32",)),
    ("xlmr", "xlmr", "cls", ("F32",)),
    ("qwen3", "qwen3", "lasttoken", ("F32",)),
]
MODEL_NAME = {"bert": "all-minilm-tiny", "nomic": "nomic-embed-tiny",
              "xlmr": "bge-m3-tiny", "qwen3": "qwen3-embedding-tiny"}
FAMILY = {"bert": "bert", "nomic": "nomic-bert", "xlmr": "bert", "qwen3": "qwen3"}
SPECIAL_TEXTS = {"bert": ["[CLS] hello [SEP] world [MASK] 42", "A [SEP]B[PAD]"],
                 "nomic": ["[CLS] hello [SEP] world [MASK] 42", "A [SEP]B[PAD]"],
                 "xlmr": ["<s> hello </s> world 42", "a</s>b<pad>"],
                 "qwen3": ["<|im_start|>user\nHi 42 café 🦙<|im_end|>", "a<|endoftext|>b"]}


def wordpiece_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(H._corpus(), trainers.WordPieceTrainer(vocab_size=320, special_tokens=specials, show_progress=False))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                                   cls_token="[CLS]", mask_token="[MASK]", model_max_length=128)


def unigram_tokenizer(work):
    """XLM-RoBERTa's: a SentencePiece Unigram model trained here (sentencepiece.bpe.model, as bge-m3 ships it),
    read by transformers' XLMRobertaTokenizer."""
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer
    corpus = os.path.join(work, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(H._corpus() + ["日本語 の テキスト ☃ 🦙 ünïcödé — café naïve"] * 5))
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(work, "sp"), vocab_size=300, hard_vocab_limit=False,
                                   model_type="unigram", character_coverage=1.0, minloglevel=2)
    d = os.path.join(work, "xlmr-tok")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(work, "sp.model"), os.path.join(d, "sentencepiece.bpe.model"))
    return XLMRobertaTokenizer.from_pretrained(d, model_max_length=128)


def make_source(kind, pooling, out, work):
    """The source model saved as a SentenceTransformer in `out` (also the converter's input, except for nomic)."""
    import torch
    import transformers as T
    from sentence_transformers import SentenceTransformer, models as M
    torch.manual_seed(0)
    if kind == "bert":
        tok = wordpiece_tokenizer()
        model = T.BertModel(T.BertConfig(vocab_size=len(tok), hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
                                         intermediate_size=128, max_position_embeddings=128, pad_token_id=0),
                            add_pooling_layer=False)
    elif kind == "nomic":
        tok = wordpiece_tokenizer()
        model = T.NomicBertModel(T.NomicBertConfig(vocab_size=len(tok), hidden_size=HIDDEN, num_hidden_layers=2,
                                                   num_attention_heads=4, intermediate_size=128, max_position_embeddings=2048,
                                                   rope_parameters={"rope_type": "default", "rope_theta": 1000.0}))
    elif kind == "xlmr":
        tok = unigram_tokenizer(work)
        model = T.XLMRobertaModel(T.XLMRobertaConfig(vocab_size=len(tok), hidden_size=HIDDEN, num_hidden_layers=2,
                                                     num_attention_heads=4, intermediate_size=128, max_position_embeddings=130,
                                                     pad_token_id=1, bos_token_id=0, eos_token_id=2, type_vocab_size=1),
                                  add_pooling_layer=False)
    elif kind == "qwen3":
        tok = H.train_qwen_tokenizer()
        from tokenizers import processors
        eot = tok.convert_tokens_to_ids("<|endoftext|>")
        backend = tok.backend_tokenizer
        backend.post_processor = processors.Sequence([
            processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
            processors.TemplateProcessing(single="$A <|endoftext|>", pair="$A <|endoftext|> $B:1 <|endoftext|>:1",
                                          special_tokens=[("<|endoftext|>", eot)])])
        tok.chat_template = None   # else sentence-transformers 6 embeds a plain string as a chat message
        cfg = H.model_config("qwen3", len(tok), tok)
        cfg.tie_word_embeddings = True
        model = T.Qwen3ForCausalLM(cfg)
    else:
        raise ValueError(kind)
    with torch.no_grad():   # LayerNorm/RMSNorm weights near 1, not exactly 1; weights large enough to matter
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_((1.0 if "weight" in name and "norm" in name.lower() else 0.0) + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.08)
    hf = os.path.join(work, f"hf-{os.path.basename(out)}")
    model.save_pretrained(hf)
    tok.save_pretrained(hf)
    transformer = M.Transformer(hf)
    st = SentenceTransformer(modules=[transformer, M.Pooling(model.config.hidden_size, pooling_mode=pooling), M.Normalize()],
                             device="cpu")
    st.save(out)
    if kind == "xlmr":   # the converter reads sentencepiece.bpe.model, as for bge-m3
        shutil.copy(os.path.join(work, "xlmr-tok", "sentencepiece.bpe.model"), out)
    return model


def nomic_original(src, out):
    """`src` (a native NomicBertModel ST folder) in nomic's remote-code form, which llama.cpp's converter reads."""
    import torch
    from safetensors.torch import load_file, save_file
    shutil.copytree(src, out)
    with open(os.path.join(src, "config.json")) as f:
        c = json.load(f)
    w = load_file(os.path.join(src, "model.safetensors"))
    o = {}
    for k, v in w.items():
        n = k
        for a, b in (("self_attn.o_proj", "attn.out_proj"), ("mlp.up_proj", "mlp.fc11"), ("mlp.gate_proj", "mlp.fc12"),
                     ("mlp.down_proj", "mlp.fc2"), ("post_attention_layernorm", "norm1"), ("post_mlp_layernorm", "norm2"),
                     ("embeddings.LayerNorm", "emb_ln")):
            n = n.replace(a, b)
        if n.startswith("layers."):
            n = "encoder." + n
        if ".self_attn.q_proj." in n:
            base = k.rsplit(".self_attn.q_proj.", 1)[0]
            n = "encoder." + base + ".attn.Wqkv.weight"
            v = torch.cat([w[base + ".self_attn.q_proj.weight"], w[base + ".self_attn.k_proj.weight"],
                           w[base + ".self_attn.v_proj.weight"]], dim=0)
        elif ".self_attn.k_proj." in n or ".self_attn.v_proj." in n:
            continue
        o[n] = v.contiguous()
    save_file(o, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    theta = (c.get("rope_parameters") or {}).get("rope_theta", 1000.0)
    c.update({"n_embd": c["hidden_size"], "n_head": c["num_attention_heads"], "n_layer": c["num_hidden_layers"],
              "n_inner": c["intermediate_size"], "n_positions": 8192, "max_trained_positions": 2048,
              "activation_function": "swiglu", "causal": False, "qkv_proj_bias": False, "mlp_fc1_bias": False,
              "mlp_fc2_bias": False, "prenorm": False, "rotary_emb_fraction": 1.0, "rotary_emb_interleaved": False,
              "rotary_emb_scale_base": None, "rotary_emb_base": theta, "layer_norm_epsilon": c["layer_norm_eps"]})
    # the native names stay: the converter reads config.json through AutoConfig, which (transformers 5 knows
    # nomic_bert) would otherwise fill NomicBertConfig's defaults (768 wide, 12 layers) instead of n_embd, n_layer
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=2)


def use_llama_cpp_gguf():
    """Puts llama.cpp's converter and its own gguf-py first on the path, before anything imports gguf: this process
    converts in-process (one Python start-up less) and re-encodes with that gguf-py's quantizer (the checker reads the
    files with the pinned gguf package, in its own process)."""
    import hf_gguf_fixtures as HG
    if "gguf" in sys.modules:
        raise RuntimeError("gguf imported before llama.cpp's gguf-py was put on the path")
    src = HG.llama_cpp_src()
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    sys.path.insert(0, src)
    return src


def convert(src, pairs):
    """llama.cpp's convert_hf_to_gguf.py --outtype f32 for each (dir, out, pre), in this process."""
    import contextlib
    import io
    import conversion.base as B
    for hf_dir, out_path, pre in pairs:
        B.TextModel.get_vocab_base_pre = lambda self, tokenizer, pre=pre: pre   # home-made tokenizers have no known hash
        sys.argv = [os.path.join(src, "convert_hf_to_gguf.py"), hf_dir, "--outtype", "f32", "--outfile", out_path]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit as e:
            if e.code:
                raise


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = use_llama_cpp_gguf()
    import hf_gguf_fixtures as HG
    import make_fixture as MF
    out = os.path.abspath(argv[1])
    fx = MF.Fixture(out)
    work = tempfile.mkdtemp(prefix="modelfs-embed-")
    try:
        pairs, srcs = [], {}
        for case, kind, pooling, _ in CASES:
            d = os.path.join(out, "src", case)
            make_source(kind, pooling, d, work)
            conv = d
            if kind == "nomic":
                conv = os.path.join(work, "nomic-original")
                nomic_original(d, conv)
            srcs[case] = d
            pairs.append((conv, os.path.join(work, case + ".f32.gguf"), "qwen2" if kind == "qwen3" else "default"))
        convert(src, pairs)
        fx.embed = {}
        for case, kind, pooling, types in CASES:
            f32 = os.path.join(work, case + ".f32.gguf")
            for tname in types:
                path = f32
                if tname != "F32":
                    path = os.path.join(work, f"{case}.{tname}.gguf")
                    HG.requantize(f32, path, tname)
                with open(path, "rb") as f:
                    data = f.read()
                m = fx.model("registry.ollama.ai", "library", MODEL_NAME[case], tname.lower(),
                             f"GGUF ({tname}) converted by llama.cpp from a tiny {kind} embedding model ({pooling} pooling)")
                m.set_config(MF.gguf_config(FAMILY[kind], "1M", tname))
                m.layer(MF.MT_MODEL, data)
                m.finish()
                fx.embed[m.dir] = {"source": os.path.relpath(srcs[case], out), "kind": kind, "pooling": pooling,
                                   "ggml_type": tname, "special_texts": SPECIAL_TEXTS[kind]}
        fx.finish()
        with open(os.path.join(out, "expected.json"), encoding="utf-8") as f:
            exp = json.load(f)
        exp["embed"] = fx.embed
        with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as f:
            json.dump(exp, f, indent=1, ensure_ascii=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(fx.tmp, ignore_errors=True)
    print(f"embedding fixture written to {out}: {len(fx.embed)} model dirs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
