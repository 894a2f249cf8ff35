#!/usr/bin/env python3
"""Runs llama.cpp's own convert_hf_to_gguf.py (the independent oracle) on an HF model directory.

    run_convert.py LLAMA_CPP_SRC HF_DIR OUT.gguf [PRE [NAME]] [-- CONVERTER_ARGS...]

The fixtures' tokenizers are trained for the test, so llama.cpp's converter does not know the hash
of their pre-tokenizer output; PRE (default "qwen2", the regex the byte-level fixtures use) is
returned by a monkeypatched get_vocab_base_pre, as the converter's own update script would add it.
NAME is written as general.name (--model-name). Phi-3 models without a tokenizer.model (the fixtures' byte-level BPE) are read as byte-level BPE, the
way the converter reads Phi-4's (its Phi-3 reader requires a SentencePiece tokenizer.model).
Arguments after "--" go to the converter as they are (--no-mtp for a Qwen 3.5 without an MTP head).
"""
import os
import runpy
import sys


def main(argv):
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    if len(argv) not in (4, 5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    src, hf, out = argv[1:4]
    pre = argv[4] if len(argv) >= 5 else "qwen2"
    sys.path.insert(0, src)
    sys.path.insert(1, os.path.join(src, "gguf-py"))
    import conversion.base as base  # noqa: E402
    patched = 0
    for obj in vars(base).values():
        if isinstance(obj, type) and "get_vocab_base_pre" in vars(obj):
            obj.get_vocab_base_pre = lambda self, tokenizer: pre
            patched += 1
    if not patched:
        print("run_convert: no get_vocab_base_pre to patch in conversion.base", file=sys.stderr)
        return 1
    if not os.path.isfile(os.path.join(hf, "tokenizer.model")):
        import conversion.phi as phi  # noqa: E402
        phi.Phi3MiniModel.set_vocab = lambda self: self._set_vocab_gpt2()
    sys.argv = ["convert_hf_to_gguf.py", hf, "--outtype", "bf16", "--outfile", out] + \
        (["--model-name", argv[5]] if len(argv) == 6 else []) + extra
    runpy.run_path(os.path.join(src, "convert_hf_to_gguf.py"), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
