#!/usr/bin/env python3
"""Writes fs/src/main/java/dev/modelfs/quant/ggml/GgmlIqTables.java.

The lattice tables of ggml's IQ quantization types (iq2xxs_grid, iq2xs_grid, iq2s_grid,
iq3xxs_grid, iq3s_grid, iq1s_grid, ksigns_iq2xs, kmask_iq2xs) are defined in ggml-org/ggml
src/ggml-common.h (MIT License, Copyright (c) 2023-2024 The ggml authors). gguf-py (package
`gguf`, the Python library of ggml-org/llama.cpp, also MIT) ships the very same tables in a packed
form (2 or 3 bits per byte, `grid_hex` in gguf/quants.py). This script unpacks them mechanically
into the C layout of ggml-common.h (one uint64/uint32 per entry, byte j = element j) so that the
Java file can be diffed against ggml-common.h, and checks anchor entries copied from
ggml-common.h (first, middle and last entries of every table).

Run from anywhere with the gguf==0.19.0 venv:  python tools/gen_ggml_iq_tables.py [out.java]
(default: the GgmlIqTables.java of fs/src/main in this repository)
"""
import os
import sys

import numpy as np
import gguf.quants as q

# Entries copied verbatim from ggml-org/llama.cpp ggml/src/ggml-common.h (index: value).
ANCHORS = {
    "iq2xxs_grid": {0: 0x0808080808080808, 1: 0x080808080808082b, 7: 0x08080808082b0808,
                    128: 0x082b2b0808082b08, 131: 0x082b2b2b19081908,
                    254: 0x2b2b2b0819190808, 255: 0x2b2b2b1908081908},
    "iq2xs_grid": {0: 0x0808080808080808, 7: 0x080808080819192b, 509: 0x2b2b2b2b082b2b2b,
                   510: 0x2b2b2b2b2b190819, 511: 0x2b2b2b2b2b2b2b2b},
    "iq2s_grid": {0: 0x0808080808080808, 7: 0x080808080819192b, 1021: 0x2b2b2b2b082b2b08,
                  1022: 0x2b2b2b2b2b082b08, 1023: 0x2b2b2b2b2b2b2b2b},
    "iq3xxs_grid": {0: 0x04040404, 5: 0x04040c3e, 128: 0x141c3e04, 131: 0x14242c1c,
                    254: 0x3e2c1424, 255: 0x3e341c04},
    "iq3s_grid": {0: 0x01010101, 3: 0x0101010b, 256: 0x05090507, 259: 0x05090903,
                  510: 0x0f0d0703, 511: 0x0f0f0101},
    "iq1s_grid": {0: 0xffffffffffffffff, 1: 0xffffffffffffff01, 7: 0xffffffffff01ffff,
                  11: 0xffffffff00ff0000},
}
# ggml-common.h also has iq1s_grid_gpu (uint32, element j in nibble 2j for j<4, 2(j-4)+1 else,
# value+1); consecutive runs of it copied from ggml-common.h, with their start index.
IQ1S_GPU_RUNS = {
    232: [0x01110011, 0x01110012, 0x01110110, 0x01110111, 0x01110112, 0x01110211, 0x01120010, 0x01120111],
    1424: [0x12212120, 0x12212220, 0x12212222, 0x12222122, 0x20000000, 0x20000002, 0x20000200, 0x20000202],
    1504: [0x21011202, 0x21021001, 0x21021100, 0x21021201, 0x22011100, 0x22011201, 0x20001011, 0x20001211],
}
KSIGNS_HEAD = [0, 129, 130, 3, 132, 5, 6, 135, 136, 9, 10, 139, 12, 141, 142, 15]


def packed(cls):
    cls.init_grid()
    g = cls.grid.reshape(cls.grid_shape).astype(np.int64)
    out = []
    for row in g:
        v = 0
        for j, b in enumerate(row):
            v |= (int(b) & 0xFF) << (8 * j)
        out.append(v)
    return out, g


def main(out_path):
    tables = {
        "iq2xxs_grid": (q.IQ2_XXS, 64), "iq2xs_grid": (q.IQ2_XS, 64), "iq2s_grid": (q.IQ2_S, 64),
        "iq3xxs_grid": (q.IQ3_XXS, 32), "iq3s_grid": (q.IQ3_S, 32), "iq1s_grid": (q.IQ1_S, 64),
    }
    data = {}
    for name, (cls, bits) in tables.items():
        vals, g = packed(cls)
        for i, v in ANCHORS[name].items():
            assert vals[i] == v, (name, i, hex(vals[i]), hex(v))
        data[name] = (vals, bits)
        if name == "iq1s_grid":
            gpu = [sum((int(x) + 1) << (8 * j if j < 4 else 8 * (j - 4) + 4) for j, x in enumerate(r)) for r in g]
            for start, run in IQ1S_GPU_RUNS.items():
                assert gpu[start:start + len(run)] == run, start
    ksigns = list(q.IQ2_XXS.ksigns)
    assert len(ksigns) == 128 and ksigns[:16] == KSIGNS_HEAD
    # ksigns_iq2xs[i] = i | (parity(i) << 7): check the defining property as well
    assert all(k == (i | ((bin(i).count("1") & 1) << 7)) for i, k in enumerate(ksigns))

    L = []
    w = L.append
    w("/*")
    w(" * Lookup tables of ggml's IQ quantization types, copied from ggml-org/ggml src/ggml-common.h")
    w(" * (iq2xxs_grid, iq2xs_grid, iq2s_grid, iq3xxs_grid, iq3s_grid, iq1s_grid, ksigns_iq2xs, kmask_iq2xs).")
    w(" *")
    w(" * MIT License. Copyright (c) 2023-2024 The ggml authors.")
    w(" * Permission is hereby granted, free of charge, to any person obtaining a copy of this software and")
    w(" * associated documentation files (the \"Software\"), to deal in the Software without restriction,")
    w(" * including without limitation the rights to use, copy, modify, merge, publish, distribute,")
    w(" * sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is")
    w(" * furnished to do so, subject to the following conditions: The above copyright notice and this")
    w(" * permission notice shall be included in all copies or substantial portions of the Software.")
    w(" * THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT")
    w(" * NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND")
    w(" * NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,")
    w(" * DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT")
    w(" * OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.")
    w(" *")
    w(" * GENERATED by tools/gen_ggml_iq_tables.py; do not edit.")
    w(" * Same layout and values as ggml-common.h: entry i packs the 8 (or 4) bytes of grid point i,")
    w(" * byte j (little-endian) = element j; iq1s_grid bytes are signed (-1, 0, 1).")
    w(" */")
    w("package dev.modelfs.quant.ggml;")
    w("")
    w("/** ggml IQ lattice tables (see file header for source and license). Each table lives in its own")
    w(" *  holder class so that it is loaded only when its type is first used. */")
    w("final class GgmlIqTables {")
    w("    private GgmlIqTables() {}")
    w("")
    w("    /** {@code kmask_iq2xs}: bit j. */")
    w("    static final int[] KMASK_IQ2XS = {1, 2, 4, 8, 16, 32, 64, 128};")
    w("")
    w("    /** {@code ksigns_iq2xs[128]}: 7 sign bits plus an 8th parity bit. */")
    w("    static final int[] KSIGNS_IQ2XS = {")
    for i in range(0, 128, 16):
        w("        " + ", ".join("%3d" % k for k in ksigns[i:i + 16]) + ",")
    w("    };")
    w("")
    w("    /** {@code IQ1S_DELTA} and {@code IQ1M_DELTA}. */")
    w("    static final float IQ1S_DELTA = 0.125f;")
    w("    static final float IQ1M_DELTA = 0.125f;")
    holders = {"iq2xxs_grid": "Iq2xxs", "iq2xs_grid": "Iq2xs", "iq2s_grid": "Iq2s",
               "iq3xxs_grid": "Iq3xxs", "iq3s_grid": "Iq3s", "iq1s_grid": "Iq1s"}
    for name, (vals, bits) in data.items():
        jt = "long" if bits == 64 else "int"
        per = 4 if bits == 64 else 8
        w("")
        w("    /** {@code %s[%d]}. */" % (name, len(vals)))
        w("    static final class %s {" % holders[name])
        w("        private %s() {}" % holders[name])
        w("        static final %s[] GRID = {" % jt)
        for i in range(0, len(vals), per):
            if bits == 64:
                w("            " + " ".join("0x%016xL," % v for v in vals[i:i + per]))
            else:
                w("            " + " ".join("0x%08x," % v for v in vals[i:i + per]))
        w("        };")
        w("    }")
    w("}")
    with open(out_path, "w") as f:
        f.write("\n".join(L) + "\n")


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "fs", "src", "main", "java", "dev", "modelfs", "quant", "ggml",
                           "GgmlIqTables.java")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT)
