"""A tiny Gemma-style tokenizer: a SentencePiece BPE model (tokenizer.model) and the tokenizer.json that
transformers' GemmaConverter would make of it, for the gemma fixtures.

    import gemma_tokenizer as GT
    tok = GT.train(corpus, "/tmp/d")     # writes /tmp/d/tokenizer.model; returns a PreTrainedTokenizerFast

As Gemma's: byte fallback, no dummy prefix (so llama.cpp's converter writes add_space_prefix = false),
digits split, no normalization; ids <pad>=0 <eos>=1 <bos>=2 <unk>=3, then <mask>, [multimodal],
<unused0>..<unused99>, <start_of_turn>=106, <end_of_turn>=107 (user-defined pieces, special in tokenizer.json),
the 256 byte pieces, the trained merges.
tokenizer.json (tokenizers library): BPE with byte_fallback over the SentencePiece vocabulary, merges in
the order of the merged piece's score (SentencePiece's BPE ranks), normalizer Replace(" ", "▁"),
pre-tokenizer Split(" ", merged_with_previous), a post-processor adding <bos>, the Gemma decoder.
`train` checks that it encodes the sample strings exactly as SentencePiece itself does. The sentencepiece
and tokenizers libraries make everything; nothing here uses modelfs code.
"""
from __future__ import annotations

import io
import os

SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
# Gemma's layout: <start_of_turn> = 106 and <end_of_turn> = 107, the ids llama.cpp's Gemma converter hard-codes as eot
USER_DEFINED = ["<mask>", "[multimodal]"] + [f"<unused{i}>" for i in range(100)] + ["<start_of_turn>", "<end_of_turn>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\\n' + message['content'] "
    "+ '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}")
CHECK = ["<start_of_turn>user\nHi 42<end_of_turn>\n", "  two  spaces", "\ttab", "x" * 3 + " 12345"]


def _merges(vocab: dict, scores: dict, skip: set) -> list:
    """Every split of a piece into two pieces of the vocabulary, ordered by the merged piece's score
    (higher first, as SentencePiece's BPE applies them), then by the ids of the parts."""
    out = []
    for piece, pid in vocab.items():
        if piece in skip or len(piece) < 2:
            continue
        pairs = [(piece[:i], piece[i:]) for i in range(1, len(piece)) if piece[:i] in vocab and piece[i:] in vocab]
        pairs.sort(key=lambda p: (vocab[p[0]], vocab[p[1]]))
        out.extend((-scores[piece], pid, a, b) for a, b in pairs)
    out.sort(key=lambda m: (m[0], m[1]))
    return [(a, b) for _, _, a, b in out]


def train(corpus: list, out_dir: str, vocab_size: int = 560):
    import sentencepiece as spm
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus), model_writer=buf, model_type="bpe", vocab_size=vocab_size,
        byte_fallback=True, add_dummy_prefix=False, split_digits=True, normalization_rule_name="identity",
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True, character_coverage=1.0,
        pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>", eos_piece="<eos>", bos_piece="<bos>",
        unk_piece="<unk>", user_defined_symbols=USER_DEFINED, hard_vocab_limit=False, num_threads=1,
        minloglevel=2)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "tokenizer.model")
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    sp = spm.SentencePieceProcessor(model_file=path)
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    scores = {sp.id_to_piece(i): sp.get_score(i) for i in range(sp.get_piece_size())}
    skip = set(SPECIALS + USER_DEFINED) | {p for p in vocab if sp.is_byte(vocab[p])}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=_merges(vocab, scores, skip), unk_token="<unk>", byte_fallback=True,
                               fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(" ", "merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS + USER_DEFINED])
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", pair="<bos> $A <bos> $B",
                                                       special_tokens=[("<bos>", 2)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", unk_token="<unk>",
                                   pad_token="<pad>", mask_token="<mask>", chat_template=CHAT_TEMPLATE,
                                   add_bos_token=True, add_eos_token=False, model_max_length=4096)
    import hf_models as H
    for s in H.SAMPLE_TEXTS + CHECK:
        want = [i for part in _split_specials(s) for i in (sp.encode(part) if part not in vocab else [vocab[part]])]
        got = fast.encode(s, add_special_tokens=False)
        if got != want:
            raise AssertionError(f"tokenizer.json encodes {s!r} as {got}, SentencePiece as {want}")
    return fast


def _split_specials(s: str) -> list:
    """s cut around the user-defined pieces (SentencePiece matches them first)."""
    parts = [s]
    for u in USER_DEFINED:
        nxt = []
        for p in parts:
            if p in USER_DEFINED:
                nxt.append(p)
                continue
            pieces = p.split(u)
            for i, q in enumerate(pieces):
                if i:
                    nxt.append(u)
                if q:
                    nxt.append(q)
        parts = nxt
    return parts
