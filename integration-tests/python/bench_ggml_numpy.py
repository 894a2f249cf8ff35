#!/usr/bin/env python3
"""Times gguf-py's numpy dequantizer (gguf.quants.dequantize) on the data sizes of the Java JMH
benchmark dev.modelfs.bench.GgmlDequantBench: random blocks (f16 scale fields set to N(0, 0.01)
values, as in the Java benchmark) that dequantize to 16 MiB of f32 per call. Prints GB/s of f32
output (GB = 10^9 bytes), best and median of the timed calls, so the two can be reported side by side.

Usage: python bench_ggml_numpy.py [--repeat N] [TYPE ...]     (default types: Q4_0 Q8_0 Q4_K Q6_K)
Needs: numpy, gguf (tested with numpy 2.4.6, gguf 0.19.0). Single-threaded like numpy itself here.
"""
import argparse
import statistics
import sys
import time

import numpy as np

try:
    import gguf
    from gguf import GGMLQuantizationType as T
    from gguf.quants import dequantize
except ImportError as e:  # pragma: no cover
    sys.exit(f"bench_ggml_numpy.py needs the 'gguf' package (pip install gguf==0.19.0): {e}")

OUT_BYTES = 16 << 20
# byte offsets of the f16 scale fields inside one block (docs/FORMATS.md 6.4)
F16_FIELDS = {"Q4_0": [0], "Q8_0": [0], "Q4_K": [0, 2], "Q6_K": [208],
              "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q5_K": [0, 2], "Q2_K": [80, 82], "Q3_K": [108],
              "IQ4_NL": [0], "IQ4_XS": [0]}


def make_data(name, rng):
    qt = T[name]
    block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qt]
    blocks = OUT_BYTES // (4 * block_elems)
    data = rng.integers(0, 256, size=(blocks, block_bytes), dtype=np.uint8)
    for off in F16_FIELDS[name]:
        scale = (rng.standard_normal(blocks) * 0.01).astype(np.float16)
        data[:, off:off + 2] = scale.view(np.uint8).reshape(blocks, 2)
    return qt, data.reshape(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("types", nargs="*", default=["Q4_0", "Q8_0", "Q4_K", "Q6_K"])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    import importlib.metadata as md
    print(f"gguf-py {md.version('gguf')} quants.dequantize, numpy {np.__version__}, "
          f"16 MiB f32 output per call (GB = 10^9 bytes)")
    print(f"{'type':6} {'ms/call best':>13} {'GB/s best':>10} {'GB/s median':>12}")
    for name in args.types:
        qt, data = make_data(name, rng)
        y = dequantize(data, qt)  # warm-up (also checks the size)
        assert y.dtype == np.float32 and y.nbytes == OUT_BYTES, (y.dtype, y.nbytes)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            dequantize(data, qt)
            times.append(time.perf_counter() - t0)
        best, med = min(times), statistics.median(times)
        print(f"{name:6} {best * 1e3:13.1f} {OUT_BYTES / best / 1e9:10.3f} {OUT_BYTES / med / 1e9:12.3f}")


if __name__ == "__main__":
    main()
