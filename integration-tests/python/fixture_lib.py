"""Shared helpers for the modelfs fixture generator and checkers.

Everything here is written from the byte-level specification (docs/FORMATS.md) and the reference
Python packages (numpy, ml_dtypes, safetensors, gguf-py); nothing is derived from the Java code.

Contents
  * Go-style JSON (compact, HTML-escaped) and sha256 helpers
  * safetensors: Go writer (sorted keys, dtype/shape/data_offsets, space padding to 8),
    MLX writer (unpadded, fields sorted, __metadata__ always present, shuffled data order),
    a strict parser (FORMATS 8.2) used by the checkers
  * MLX quantization (FORMATS 5): bit-stream packing for 2..8 bits, affine quantizer (5.3),
    nvfp4 / mxfp4 / mxfp8 encoders, and the float32 dequantization oracles
  * GGML (FORMATS 6): type table with the *current* ggml block sizes, random-but-valid block
    generators, dequantization (gguf-py where it implements the type, FORMATS 6.4 in numpy
    otherwise), a minimal GGUF writer (for type ids gguf-py does not know) and a strict reader
  * the Ollama Modelfile text (`ollama show --modelfile`)
  * a tiny pass/fail reporter for the checkers
"""
from __future__ import annotations

import decimal
import hashlib
import json
import math
import os
import struct

import ml_dtypes
import numpy as np

# ---------------------------------------------------------------------------------------------
# JSON / hashing
# ---------------------------------------------------------------------------------------------


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def go_json(obj, sort_keys: bool = False) -> bytes:
    """Go encoding/json style: compact, UTF-8, `<` `>` `&` U+2028 U+2029 escaped."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    s = (s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
         .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return s.encode("utf-8")


# ---------------------------------------------------------------------------------------------
# safetensors
# ---------------------------------------------------------------------------------------------

# dtype name -> (numpy dtype or None, bits)
ST_DTYPES = {
    "BOOL": (np.dtype(np.bool_), 8),
    "U8": (np.dtype("<u1"), 8), "I8": (np.dtype("<i1"), 8),
    "U16": (np.dtype("<u2"), 16), "I16": (np.dtype("<i2"), 16),
    "F16": (np.dtype("<f2"), 16), "BF16": (np.dtype(ml_dtypes.bfloat16), 16),
    "U32": (np.dtype("<u4"), 32), "I32": (np.dtype("<i4"), 32), "F32": (np.dtype("<f4"), 32),
    "U64": (np.dtype("<u8"), 64), "I64": (np.dtype("<i8"), 64), "F64": (np.dtype("<f8"), 64),
    "C64": (None, 64),
    "F8_E4M3": (np.dtype(ml_dtypes.float8_e4m3fn), 8), "F8_E5M2": (np.dtype(ml_dtypes.float8_e5m2), 8),
    "F8_E8M0": (None, 8), "F8_E4M3FNUZ": (None, 8), "F8_E5M2FNUZ": (None, 8),
    "F4": (None, 4), "F6_E2M3": (None, 6), "F6_E3M2": (None, 6),
}
FLOAT_DTYPES = ("F16", "BF16", "F32", "F64")
INT_DTYPES = ("BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64")
VARIANT_DTYPE = {"fp32": "F32", "fp16": "F16", "bf16": "BF16"}


def numel(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def st_nbytes(dtype: str, shape) -> int:
    return numel(shape) * ST_DTYPES[dtype][1] // 8


def st_go(entries, metadata=None) -> bytes:
    """Ollama's Go writer (x/safetensors/extractor.go): json.Marshal of a map (keys sorted),
    entries {"dtype","shape","data_offsets"}, header padded with spaces to a multiple of 8,
    data in the order given. entries: list of (key, dtype, shape, bytes)."""
    hdr = {}
    off = 0
    data = []
    for key, dtype, shape, raw in entries:
        assert len(raw) == st_nbytes(dtype, shape), (key, dtype, shape, len(raw))
        hdr[key] = {"dtype": dtype, "shape": [int(x) for x in shape], "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        data.append(raw)
    if metadata is not None:
        hdr["__metadata__"] = dict(sorted(metadata.items()))
    h = go_json(dict(sorted(hdr.items())))
    h += b" " * ((-len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(data)


def _shuffled_order(n: int, seed: int):
    """A deterministic permutation that differs from the identity when n >= 2."""
    if n < 2:
        return list(range(n))
    rng = np.random.default_rng(seed)
    while True:
        p = list(rng.permutation(n))
        if p != list(range(n)):
            return [int(x) for x in p]


def st_mlx(entries, metadata=None, seed: int = 0) -> bytes:
    """MLX save_safetensors (nlohmann::json): keys sorted, fields sorted data_offsets/dtype/shape,
    no padding, "__metadata__" always present (null without metadata), data order != key order."""
    ent = sorted(entries, key=lambda e: e[0])
    order = _shuffled_order(len(ent), seed + len(ent))
    offs = {}
    off = 0
    data = []
    for i in order:
        key, dtype, shape, raw = ent[i]
        assert len(raw) == st_nbytes(dtype, shape), (key, dtype, shape, len(raw))
        offs[key] = (off, off + len(raw))
        off += len(raw)
        data.append(raw)
    hdr = {"__metadata__": dict(sorted(metadata.items())) if metadata is not None else None}
    for key, dtype, shape, raw in ent:
        hdr[key] = {"data_offsets": list(offs[key]), "dtype": dtype, "shape": [int(x) for x in shape]}
    h = json.dumps(dict(sorted(hdr.items())), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return struct.pack("<Q", len(h)) + h + b"".join(data)


class SafetensorsError(ValueError):
    pass


def st_parse(buf, strict: bool = True):
    """Parse a safetensors file held in `buf` (bytes/mmap). Returns
    {"header_len", "data_start", "metadata", "tensors": {key: {dtype, shape, data_offsets}}, "order": [keys as in JSON]}.
    strict=True applies the reference reader's checks (FORMATS 8.2) plus duplicate keys."""
    if len(buf) < 8:
        raise SafetensorsError("HeaderTooSmall")
    n = struct.unpack_from("<Q", buf, 0)[0]
    if n > 100_000_000:
        raise SafetensorsError("HeaderTooLarge")
    if 8 + n > len(buf):
        raise SafetensorsError("InvalidHeaderLength")
    raw = bytes(buf[8:8 + n])
    pairs_seen = []

    def hook(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise SafetensorsError("duplicate key")
        pairs_seen.append(keys)
        return dict(pairs)

    try:
        hdr = json.loads(raw.decode("utf-8"), object_pairs_hook=hook)
    except UnicodeDecodeError as e:
        raise SafetensorsError(f"InvalidHeader: {e}")
    except json.JSONDecodeError as e:
        raise SafetensorsError(f"InvalidHeaderDeserialization: {e}")
    if not isinstance(hdr, dict):
        raise SafetensorsError("header is not an object")
    order = [k for k in pairs_seen[-1] if k != "__metadata__"]
    meta = hdr.pop("__metadata__", None)
    if meta is not None:
        if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
            raise SafetensorsError("__metadata__ must map strings to strings")
    tensors = {}
    for k, v in hdr.items():
        if not isinstance(v, dict) or v.get("dtype") not in ST_DTYPES or not isinstance(v.get("shape"), list) \
                or not isinstance(v.get("data_offsets"), list) or len(v["data_offsets"]) != 2:
            raise SafetensorsError(f"bad tensor info for {k!r}")
        if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v["shape"] + v["data_offsets"]):
            raise SafetensorsError(f"bad numbers for {k!r}")
        tensors[k] = {"dtype": v["dtype"], "shape": list(v["shape"]), "data_offsets": list(v["data_offsets"])}
    data_start = 8 + n
    if strict:
        end = 0
        for k, v in sorted(tensors.items(), key=lambda kv: (kv[1]["data_offsets"][0], kv[1]["data_offsets"][1])):
            b, e = v["data_offsets"]
            if b != end or e < b:
                raise SafetensorsError(f"InvalidOffset({k})")
            bits = numel(v["shape"]) * ST_DTYPES[v["dtype"]][1]
            if bits % 8:
                raise SafetensorsError(f"MisalignedSlice({k})")
            if e - b != bits // 8:
                raise SafetensorsError(f"TensorInvalidInfo({k})")
            end = e
        if data_start + end != len(buf):
            raise SafetensorsError("MetadataIncompleteBuffer")
    return {"header_len": n, "data_start": data_start, "metadata": meta, "tensors": tensors, "order": order}


def st_tensor_bytes(buf, parsed, key) -> bytes:
    b, e = parsed["tensors"][key]["data_offsets"]
    s = parsed["data_start"]
    return bytes(buf[s + b:s + e])


def st_read_file(path):
    with open(path, "rb") as f:
        buf = f.read()
    return buf, st_parse(buf)


# ---------------------------------------------------------------------------------------------
# float helpers
# ---------------------------------------------------------------------------------------------


def f32_to_dtype_bytes(x: np.ndarray, dtype: str) -> bytes:
    """One round-to-nearest-even of a float32 array to F32/F16/BF16, little-endian bytes."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if dtype == "F32":
        return x.astype("<f4").tobytes()
    if dtype == "F16":
        return x.astype("<f2").tobytes()
    if dtype == "BF16":
        return x.astype(ml_dtypes.bfloat16).tobytes()
    raise ValueError(dtype)


def st_bytes_to_f32(raw: bytes, dtype: str, shape) -> np.ndarray:
    """Exact float32 value of stored float data (F64 is rounded to nearest f32 once)."""
    npdt = ST_DTYPES[dtype][0]
    a = np.frombuffer(raw, dtype=npdt).reshape([int(s) for s in shape])
    return a.astype(np.float32)


def array_bytes(a: np.ndarray, dtype: str) -> bytes:
    return np.ascontiguousarray(a).astype(ST_DTYPES[dtype][0]).tobytes()


# ---------------------------------------------------------------------------------------------
# MLX quantization (FORMATS 5)
# ---------------------------------------------------------------------------------------------

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)


def _e4m3_table_mlx() -> np.ndarray:
    t = np.zeros(256, dtype=np.float32)
    for b in range(256):
        s = -1.0 if b & 0x80 else 1.0
        e = (b >> 3) & 0xF
        m = b & 7
        v = (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
        t[b] = np.float32(s * v)   # MLX: 0x7F/0xFF decode to +-480 (never produced here)
    return t


E4M3 = _e4m3_table_mlx()


def e8m0_to_f32(s: np.ndarray) -> np.ndarray:
    """2^(s-127) as float32 (s = 0 gives 2^-127, a subnormal; 255 -> inf, never produced here)."""
    s = np.asarray(s, dtype=np.int64)
    out = np.ldexp(np.float64(1.0), s - 127).astype(np.float32)
    return np.where(s == 255, np.float32(np.inf), out).astype(np.float32)


def pack_codes(codes: np.ndarray, bits: int) -> np.ndarray:
    """Pack unsigned codes (..., K) along the last axis as a little-endian bit stream into U32 words
    (FORMATS 5.2). Returns uint32 array (..., K*bits/32)."""
    codes = np.asarray(codes, dtype=np.uint32)
    K = codes.shape[-1]
    assert (K * bits) % 32 == 0, (K, bits)
    bitarr = ((codes[..., None] >> np.arange(bits, dtype=np.uint32)) & 1).astype(np.uint8)
    bitarr = bitarr.reshape(*codes.shape[:-1], K * bits)
    by = np.packbits(bitarr, axis=-1, bitorder="little")
    return np.ascontiguousarray(by).view("<u4")


def unpack_codes(words: np.ndarray, bits: int, K: int) -> np.ndarray:
    words = np.ascontiguousarray(words, dtype="<u4")
    by = words.view(np.uint8)
    bitarr = np.unpackbits(by, axis=-1, bitorder="little")[..., :K * bits]
    bitarr = bitarr.reshape(*words.shape[:-1], K, bits).astype(np.uint32)
    return (bitarr << np.arange(bits, dtype=np.uint32)).sum(axis=-1).astype(np.uint32)


def _to_dtype_array(x32: np.ndarray, dtype: str) -> np.ndarray:
    return x32.astype(ST_DTYPES[dtype][0])


def quantize_affine(w: np.ndarray, bits: int, group: int, scale_dtype: str):
    """MLX CPU affine quantizer (FORMATS 5.3), computed in float32.
    Returns (packed uint32, scale array in scale_dtype, bias array in scale_dtype)."""
    w = np.asarray(w, dtype=np.float32)
    K = w.shape[-1]
    assert K % group == 0
    g = w.reshape(*w.shape[:-1], K // group, group)
    n = np.float32(2 ** bits - 1)
    lo = g.min(axis=-1)
    hi = g.max(axis=-1)
    s = np.maximum((hi - lo) / n, np.float32(1e-7)).astype(np.float32)
    use_lo = np.abs(lo) > np.abs(hi)
    edge = np.where(use_lo, lo, hi).astype(np.float32)
    s = np.where(use_lo, s, -s).astype(np.float32)
    q0 = np.rint(edge / s).astype(np.float32)
    nz = q0 != 0
    s = np.where(nz, edge / np.where(nz, q0, 1), s).astype(np.float32)
    bias = np.where(nz, edge, np.float32(0)).astype(np.float32)
    q = np.clip(np.rint((g - bias[..., None]) / s[..., None]), 0, n).astype(np.uint32)
    q = q.reshape(w.shape)
    return pack_codes(q, bits), _to_dtype_array(s, scale_dtype), _to_dtype_array(bias, scale_dtype)


def dequant_affine(packed, scale, bias, bits, group, K=None) -> np.ndarray:
    """w = f32(scale)*q then + f32(bias), float32 (FORMATS 5.3 recommendation)."""
    packed = np.asarray(packed)
    if K is None:
        K = packed.shape[-1] * 32 // bits
    q = unpack_codes(packed, bits, K).astype(np.float32)
    sc = np.repeat(np.asarray(scale).astype(np.float32), group, axis=-1)
    bi = np.repeat(np.asarray(bias).astype(np.float32), group, axis=-1)
    return ((sc * q).astype(np.float32) + bi).astype(np.float32)


def _nearest_e2m1(x: np.ndarray) -> np.ndarray:
    """Sign-magnitude nearest E2M1 code (negative inputs get the sign bit, so -0 can occur)."""
    mags = E2M1[:8]
    a = np.abs(x)
    idx = np.argmin(np.abs(a[..., None] - mags), axis=-1).astype(np.uint32)
    return np.where(np.signbit(x), idx | 8, idx).astype(np.uint32)


def quantize_nvfp4(w: np.ndarray, group: int = 16):
    """Returns (packed uint32 [...,K/8], scale uint8 [...,K/16] (E4M3 bytes))."""
    w = np.asarray(w, dtype=np.float32)
    K = w.shape[-1]
    g = w.reshape(*w.shape[:-1], K // group, group)
    amax = np.abs(g).max(axis=-1)
    sc = (amax / np.float32(6)).astype(ml_dtypes.float8_e4m3fn)
    sc = np.where(sc.astype(np.float32) == 0, np.float32(2 ** -9), sc.astype(np.float32)).astype(ml_dtypes.float8_e4m3fn)
    scb = sc.view(np.uint8)
    assert not np.any((scb & 0x7F) == 0x7F)
    codes = _nearest_e2m1(g / E4M3[scb][..., None]).reshape(w.shape)
    return pack_codes(codes, 4), scb.copy()


def dequant_nvfp4(packed, scale_u8, group=16, global_scale=None, K=None) -> np.ndarray:
    packed = np.asarray(packed)
    if K is None:
        K = packed.shape[-1] * 8
    q = unpack_codes(packed, 4, K)
    v = E2M1[q]
    s = np.repeat(E4M3[np.asarray(scale_u8, dtype=np.uint8)], group, axis=-1)
    out = (v * s).astype(np.float32)
    if global_scale is not None:
        out = (out * np.float32(global_scale)).astype(np.float32)
    return out


def quantize_mxfp4(w: np.ndarray, group: int = 32):
    w = np.asarray(w, dtype=np.float32)
    K = w.shape[-1]
    g = w.reshape(*w.shape[:-1], K // group, group)
    amax = np.maximum(np.abs(g).max(axis=-1), np.float32(1e-30))
    e = np.clip(np.ceil(np.log2(amax / 6.0)).astype(np.int64) + 127, 1, 254).astype(np.uint8)
    codes = _nearest_e2m1(g / e8m0_to_f32(e)[..., None]).reshape(w.shape)
    return pack_codes(codes, 4), e


def dequant_mxfp4(packed, scale_u8, group=32, K=None) -> np.ndarray:
    packed = np.asarray(packed)
    if K is None:
        K = packed.shape[-1] * 8
    q = unpack_codes(packed, 4, K)
    s = np.repeat(e8m0_to_f32(scale_u8), group, axis=-1)
    return (E2M1[q] * s).astype(np.float32)


def quantize_mxfp8(w: np.ndarray, group: int = 32):
    w = np.asarray(w, dtype=np.float32)
    K = w.shape[-1]
    g = w.reshape(*w.shape[:-1], K // group, group)
    amax = np.maximum(np.abs(g).max(axis=-1), np.float32(1e-30))
    e = np.clip(np.ceil(np.log2(amax / 448.0)).astype(np.int64) + 127, 1, 254).astype(np.uint8)
    codes = (g / e8m0_to_f32(e)[..., None]).astype(ml_dtypes.float8_e4m3fn).view(np.uint8).reshape(w.shape)
    assert not np.any((codes & 0x7F) == 0x7F)
    return pack_codes(codes, 8), e


def dequant_mxfp8(packed, scale_u8, group=32, K=None) -> np.ndarray:
    packed = np.asarray(packed)
    if K is None:
        K = packed.shape[-1] * 4
    q = unpack_codes(packed, 8, K)
    s = np.repeat(e8m0_to_f32(scale_u8), group, axis=-1)
    return (E4M3[q] * s).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# GGML / GGUF (FORMATS 6)
# ---------------------------------------------------------------------------------------------

# id -> (name, block elems, block bytes) -- current ggml (Q8_1 is 36 bytes; gguf-py 0.19 says 40)
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98), 19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18),
}
GGML_ID = {v[0]: k for k, v in GGML_TYPES.items()}
# ggml types that are plain element arrays, with their safetensors dtype
GGML_PLAIN = {"F32": "F32", "F16": "F16", "BF16": "BF16", "F64": "F64",
              "I8": "I8", "I16": "I16", "I32": "I32", "I64": "I64"}
GGML_INT = ("I8", "I16", "I32", "I64")
# types gguf-py 0.19 cannot dequantize (or knows with a wrong size): computed here from FORMATS 6.4
GGML_NUMPY_ORACLE = ("Q8_1", "Q8_K", "Q1_0", "Q2_0")

GGUF_VT = {0: "UINT8", 1: "INT8", 2: "UINT16", 3: "INT16", 4: "UINT32", 5: "INT32", 6: "FLOAT32",
           7: "BOOL", 8: "STRING", 9: "ARRAY", 10: "UINT64", 11: "INT64", 12: "FLOAT64"}
GGUF_VT_ID = {v: k for k, v in GGUF_VT.items()}
_GGUF_FMT = {"UINT8": "<B", "INT8": "<b", "UINT16": "<H", "INT16": "<h", "UINT32": "<I", "INT32": "<i",
             "FLOAT32": "<f", "BOOL": "<?", "UINT64": "<Q", "INT64": "<q", "FLOAT64": "<d"}


def ggml_nbytes(type_id: int, ne) -> int:
    name, be, bb = GGML_TYPES[type_id]
    ne = [int(x) for x in ne]
    assert ne[0] % be == 0, (name, ne)
    n = ne[0] // be * bb
    for d in ne[1:]:
        n *= d
    return n


def _f16(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view("<f2").astype(np.float32)


def ggml_dequant_numpy(tname: str, blocks: np.ndarray) -> np.ndarray:
    """FORMATS 6.4 in float32 for the types gguf-py lacks. blocks: uint8 (n, block_bytes) -> (n, elems)."""
    n = blocks.shape[0]
    if tname == "Q8_1":
        d = _f16(blocks[:, 0:2])
        qs = blocks[:, 4:36].view(np.int8).astype(np.float32)
        return (qs * d).astype(np.float32)
    if tname == "Q8_K":
        d = np.ascontiguousarray(blocks[:, 0:4]).view("<f4")
        qs = blocks[:, 4:260].view(np.int8).astype(np.float32)
        return (d * qs).astype(np.float32)
    if tname == "Q1_0":
        d = _f16(blocks[:, 0:2])
        bitsv = np.unpackbits(blocks[:, 2:18], axis=-1, bitorder="little")  # element j = bit j%8 of qs[j/8]
        return np.where(bitsv == 1, d, -d).astype(np.float32)
    if tname == "Q2_0":
        d = _f16(blocks[:, 0:2])
        qs = blocks[:, 2:18]
        codes = (qs[:, :, None] >> np.array([0, 2, 4, 6], dtype=np.uint8)) & 3
        codes = codes.reshape(n, 64).astype(np.float32)
        return ((codes - np.float32(1)) * d).astype(np.float32)
    raise NotImplementedError(tname)


def ggml_dequant(type_id: int, raw: bytes, ne):
    """Dequantize (or widen) one GGUF tensor to float32 with shape reversed(ne).
    Returns (array, oracle_name)."""
    name, be, bb = GGML_TYPES[type_id]
    shape = [int(x) for x in reversed(list(ne))]
    if name in ("F32", "F16", "F64", "I8", "I16", "I32", "I64"):
        a = np.frombuffer(raw, dtype=ST_DTYPES[GGML_PLAIN[name]][0]).astype(np.float32)
        return a.reshape(shape), "cast"
    if name == "BF16":
        a = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return a.view(np.float32).reshape(shape), "cast"
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, bb)
    if name in GGML_NUMPY_ORACLE:
        out = ggml_dequant_numpy(name, blocks)
        how = "numpy FORMATS 6.4"
    else:
        import gguf
        qt = gguf.GGMLQuantizationType(type_id)
        out = gguf.quants.dequantize(blocks, qt)
        how = "gguf-py quants.dequantize"
    return np.ascontiguousarray(out, dtype=np.float32).reshape(shape), how


def _put_f16(blocks: np.ndarray, off: int, vals):
    v = np.asarray(vals, dtype="<f2").view(np.uint8).reshape(-1, 2)
    blocks[:, off:off + 2] = v


def ggml_random_blocks(tname: str, nblocks: int, rng: np.random.Generator) -> np.ndarray:
    """Random but valid blocks: random payload bytes, finite (and moderate) f16/f32 scale fields,
    E8M0 / UE4M3 scale bytes in safe ranges, derived fields (Q8_1 s, Q8_K bsums) consistent."""
    tid = GGML_ID[tname]
    _, be, bb = GGML_TYPES[tid]
    b = rng.integers(0, 256, size=(nblocks, bb), dtype=np.uint8)

    def dvals(lo=0.002, hi=0.02):
        return (rng.uniform(lo, hi, size=nblocks) * rng.choice([-1.0, 1.0], size=nblocks)).astype(np.float16)

    f16_at = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
              "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
              "IQ2_XXS": [0], "IQ2_XS": [0], "IQ2_S": [0], "IQ3_XXS": [0], "IQ3_S": [0], "IQ1_S": [0],
              "IQ4_NL": [0], "IQ4_XS": [0], "TQ1_0": [52], "TQ2_0": [64], "Q1_0": [0], "Q2_0": [0]}
    if tname in f16_at:
        for off in f16_at[tname]:
            _put_f16(b, off, dvals())
    elif tname == "Q8_1":
        d = dvals()
        _put_f16(b, 0, d)
        s = d.astype(np.float32) * b[:, 4:36].view(np.int8).astype(np.float32).sum(axis=1)
        _put_f16(b, 2, s.astype(np.float16))
    elif tname == "Q8_K":
        d = dvals().astype("<f4")
        b[:, 0:4] = d.view(np.uint8).reshape(-1, 4)
        qs = b[:, 4:260].view(np.int8).astype(np.int16).reshape(nblocks, 16, 16)
        b[:, 260:292] = qs.sum(axis=2).astype("<i2").view(np.uint8).reshape(nblocks, 32)
    elif tname == "IQ1_M":
        d = dvals().view("<u2").astype(np.uint16)
        w = np.ascontiguousarray(b[:, 48:56]).view("<u2").copy()   # scales[8] = 4 u16 words
        for i in range(4):
            nib = (d >> (4 * i)) & 0xF
            w[:, i] = (w[:, i] & 0x0FFF) | (nib << 12)
        b[:, 48:56] = w.view(np.uint8)
    elif tname == "MXFP4":
        b[:, 0] = rng.integers(118, 128, size=nblocks, dtype=np.uint8)
    elif tname == "NVFP4":
        b[:, 0:4] = rng.integers(0x18, 0x40, size=(nblocks, 4), dtype=np.uint8)
    else:
        raise ValueError(tname)
    return b


def gguf_kv_bytes(key: str, vtype: str, value, sub_type: str | None = None) -> bytes:
    out = bytearray()
    kb = key.encode("utf-8")
    out += struct.pack("<Q", len(kb)) + kb
    out += struct.pack("<I", GGUF_VT_ID[vtype])
    out += _gguf_val(vtype, value, sub_type)
    return bytes(out)


def _gguf_val(vtype, value, sub_type=None) -> bytes:
    if vtype == "STRING":
        b = value.encode("utf-8")
        return struct.pack("<Q", len(b)) + b
    if vtype == "ARRAY":
        out = bytearray(struct.pack("<IQ", GGUF_VT_ID[sub_type], len(value)))
        for v in value:
            out += _gguf_val(sub_type, v)
        return bytes(out)
    return struct.pack(_GGUF_FMT[vtype], value)


def gguf_write(kvs, tensors, alignment: int = 32) -> bytes:
    """Minimal GGUF v3 writer (ggml layout: sequential offsets, zero padding after every tensor).
    kvs: list of (key, vtype, value[, sub_type]); tensors: list of (name, ne, type_id, raw bytes)."""
    out = bytearray(b"GGUF")
    out += struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for kv in kvs:
        out += gguf_kv_bytes(*kv)
    off = 0
    for name, ne, tid, raw in tensors:
        assert len(raw) == ggml_nbytes(tid, ne), name
        nb = name.encode()
        out += struct.pack("<Q", len(nb)) + nb + struct.pack("<I", len(ne))
        for d in ne:
            out += struct.pack("<Q", int(d))
        out += struct.pack("<IQ", tid, off)
        off += len(raw) + ((-len(raw)) % alignment)
    out += b"\0" * ((-len(out)) % alignment)
    for name, ne, tid, raw in tensors:
        out += raw + b"\0" * ((-len(raw)) % alignment)
    return bytes(out)


class GGUFError(ValueError):
    pass


def gguf_read(buf):
    """Strict GGUF v2/v3 reader (little-endian only) with ggml's layout rules (FORMATS 6.1).
    Returns dict(version, kvs=[(key, vtype, value, sub_type)], tensors=[{name, ne, type, offset, nbytes}],
    alignment, data_start)."""
    mv = memoryview(buf)
    pos = 0

    def take(fmt):
        nonlocal pos
        sz = struct.calcsize(fmt)
        if pos + sz > len(mv):
            raise GGUFError("truncated")
        v = struct.unpack_from(fmt, mv, pos)
        pos += sz
        return v[0] if len(v) == 1 else v

    def take_str():
        nonlocal pos
        n = take("<Q")
        if pos + n > len(mv):
            raise GGUFError("truncated string")
        s = bytes(mv[pos:pos + n]).decode("utf-8")
        pos += n
        return s

    def take_val(vt):
        if vt == "STRING":
            return take_str()
        if vt == "ARRAY":
            raise GGUFError("nested array")
        return take(_GGUF_FMT[vt])

    if bytes(mv[0:4]) != b"GGUF":
        raise GGUFError("bad magic")
    pos = 4
    version = take("<I")
    if version not in (2, 3):
        raise GGUFError(f"version {version}")
    n_t, n_kv = take("<Q"), take("<Q")
    kvs = []
    seen = set()
    for _ in range(n_kv):
        k = take_str()
        if not k or k in seen:
            raise GGUFError(f"empty/duplicate key {k!r}")
        seen.add(k)
        vt = GGUF_VT.get(take("<I"))
        if vt is None:
            raise GGUFError("bad value type")
        if vt == "ARRAY":
            st = GGUF_VT.get(take("<I"))
            cnt = take("<Q")
            vals = [take_val(st) for _ in range(cnt)]
            kvs.append((k, vt, vals, st))
        else:
            kvs.append((k, vt, take_val(vt), None))
    alignment = 32
    for k, vt, v, _ in kvs:
        if k == "general.alignment":
            if vt != "UINT32" or v == 0 or (v & (v - 1)):
                raise GGUFError("bad general.alignment")
            alignment = v
    tensors = []
    for _ in range(n_t):
        name = take_str()
        nd = take("<I")
        if nd > 4:
            raise GGUFError("n_dims > 4")
        ne = [take("<Q") for _ in range(nd)]
        tid = take("<I")
        off = take("<Q")
        if tid not in GGML_TYPES:
            raise GGUFError(f"unknown ggml type {tid}")
        tensors.append({"name": name, "ne": ne, "type": tid, "offset": off, "nbytes": ggml_nbytes(tid, ne)})
    data_start = pos + ((-pos) % alignment) if n_t else pos
    expect = 0
    for t in tensors:
        if t["offset"] != expect:
            raise GGUFError(f"tensor {t['name']} offset {t['offset']} expected {expect}")
        expect += t["nbytes"] + ((-t["nbytes"]) % alignment)
        if data_start + t["offset"] + t["nbytes"] > len(mv):
            raise GGUFError(f"tensor {t['name']} past end of file")
    return {"version": version, "kvs": kvs, "tensors": tensors, "alignment": alignment, "data_start": data_start}


def gguf_tensor_bytes(buf, g, t) -> bytes:
    s = g["data_start"] + t["offset"]
    return bytes(buf[s:s + t["nbytes"]])


def gguf_kvs_to_json(kvs):
    out = []
    for k, vt, v, st in kvs:
        if vt == "ARRAY":
            out.append([k, vt, {"type": st, "values": list(v)}])
        else:
            out.append([k, vt, v])
    return out


# ---------------------------------------------------------------------------------------------
# Ollama names and Modelfile
# ---------------------------------------------------------------------------------------------


def modelfile_quote(s: str) -> str:
    if "\n" in s or s.startswith(" ") or s.endswith(" "):
        if '"' in s:
            return '"""' + s + '"""'
        return '"' + s + '"'
    return s


def go_value_str(v) -> str:
    """Go fmt %v of a JSON-decoded value (numbers are float64)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        f = float(v)
        if f == 0:
            return "-0" if math.copysign(1.0, f) < 0 else "0"
        # strconv's 'g' with the shortest digits (repr's): exponent form when the decimal exponent is
        # below -4 or at least 6 ("use precision 6 for this decision"), e.g. 1e-05, 1e+06, 1.048576e+06
        sign, digits, exponent = decimal.Decimal(repr(abs(f))).normalize().as_tuple()
        ds = "".join(map(str, digits))
        e10 = len(ds) - 1 + exponent
        if e10 < -4 or e10 >= 6:
            r = ds[0] + ("." + ds[1:] if len(ds) > 1 else "") + f"e{'-' if e10 < 0 else '+'}{abs(e10):02d}"
        else:
            r = format(decimal.Decimal(repr(abs(f))).normalize(), "f")
        return ("-" if f < 0 else "") + r
    if isinstance(v, str):
        return v
    raise TypeError(f"unsupported parameter value {v!r}")


# ---------------------------------------------------------------------------------------------
# checker reporting
# ---------------------------------------------------------------------------------------------


class Report:
    def __init__(self, name: str):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def ok(self, cond: bool, msg: str) -> bool:
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {msg}", flush=True)
        return cond

    def fail(self, msg: str):
        self.ok(False, msg)

    def skip(self, n: int = 1):
        self.skipped += n

    def finish(self) -> int:
        if self.skipped:
            print(f"({self.skipped} checks skipped)")
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed or self.passed == 0 else 0


def stat_read_only_file(r: "Report", path: str, what: str):
    """lstat a file on the mount and check it is a regular 0444 file; its stat, or None (failure reported)."""
    import stat as _stat
    try:
        st = os.lstat(path)
    except OSError as e:
        r.fail(f"{what}: missing ({e.strerror})")
        return None
    if not r.ok(_stat.S_ISREG(st.st_mode), f"{what}: not a regular file"):
        return None
    r.ok(_stat.S_IMODE(st.st_mode) == 0o444, f"{what}: mode {oct(_stat.S_IMODE(st.st_mode))}, expected 0o444")
    return st


def load_expected(out_dir: str):
    with open(os.path.join(out_dir, "expected.json"), "r", encoding="utf-8") as f:
        return json.load(f)


def check_listed_models(doc: str, name: str, key: str, at_least: int, check) -> int:
    """The main() of a checker of per-model folders: `MOUNT OUT [--only S]`, the models of expected.json's `key`
    (at least `at_least`), each passed to `check(report, dir_name, mounted_dir, source_dir, entry, out)`; an exception
    fails that model only. Returns the report's exit status."""
    import argparse
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mount")
    ap.add_argument("out")
    ap.add_argument("--only", help="check only model dirs containing this string")
    a = ap.parse_args()
    r = Report(name)
    import torch
    torch.set_num_threads(1)
    models = load_expected(a.out).get(key) or {}
    if not r.ok(len(models) >= at_least, f"expected.json lists {len(models)} {key} models, expected at least {at_least}"):
        return r.finish()
    for d, e in models.items():
        if a.only and a.only not in d:
            continue
        try:
            check(r, d, os.path.join(os.path.abspath(a.mount), d), os.path.join(a.out, e["source"]), e, a.out)
        except Exception as ex:  # noqa: BLE001
            r.fail(f"{d}: {type(ex).__name__}: {ex}")
    return r.finish()


def walk_files(root: str):
    """Yield (relpath, abspath) of every non-directory entry below root (no symlink following)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            p = os.path.join(dirpath, fn)
            yield os.path.relpath(p, root), p


# ---------------------------------------------------------------------------------------------
# transformers end-to-end (shared by the generator and check_llama_e2e.py so that both run the
# exact same code path)
# ---------------------------------------------------------------------------------------------


def e2e_logits(model_dir: str, input_ids) -> np.ndarray:
    """from_pretrained(model_dir) (on the mount: the model's fp32/ folder) on CPU in float32, eval(),
    no_grad(), one thread, eager attention; returns the logits for input_ids as a float32 numpy array."""
    import torch
    from transformers import AutoModelForCausalLM
    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                 attn_implementation="eager", device_map=None)
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor(input_ids, dtype=torch.long))
    return out.logits.detach().to(torch.float32).numpy()


TORCH_DTYPE_OF_VARIANT = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def retyped_config(config_bytes: bytes, variant: str):
    """docs/SEMANTICS.md "One weight set per folder": the JSON object of a config.json as a variant folder's copy
    holds it (torch_dtype and dtype naming the folder's dtype, at the top and in every *_config section other than
    quantization_config), or None when the copy is the same bytes (no such key names another dtype, or not a JSON
    object)."""
    import json as _json
    try:
        obj = _json.loads(config_bytes)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    want = TORCH_DTYPE_OF_VARIANT[variant]
    changed = False

    def retype(node):
        nonlocal changed
        for k in ("torch_dtype", "dtype"):
            if isinstance(node.get(k), str) and node[k] != want:
                node[k] = want
                changed = True
        for k, v in node.items():
            if k.endswith("_config") and k != "quantization_config" and isinstance(v, dict):
                retype(v)
    retype(obj)
    return obj if changed else None

