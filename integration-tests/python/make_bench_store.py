#!/usr/bin/env python3
"""Writes the benchmark store of bench/read_throughput.py into OUT: a GGUF model `big-gguf` (Q8_0 and
Q4_K tensors) and a safetensors model `big-st` (an int4 g64 tensor and a bf16 tensor), MIB MiB each.

Usage: make_bench_store.py OUT MIB
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import read_throughput  # noqa: E402

read_throughput.build_store(sys.argv[1], int(sys.argv[2]))
