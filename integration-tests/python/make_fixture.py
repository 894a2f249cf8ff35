#!/usr/bin/env python3
"""Build the modelfs integration-test fixture: an Ollama model store plus the expected tree.

    make_fixture.py OUT

writes
    OUT/store/manifests/...      manifests exactly as Ollama writes them (plus junk that must be ignored)
    OUT/store/blobs/...          content-addressed blobs (plus junk names that must be ignored)
    OUT/oracle/<model dir>/<logical tensor name>.npy   float32 oracles of every float/quantized tensor
    OUT/expected.json            what a modelfs mount of OUT/store must show (schema below)

Everything is deterministic (fixed seeds) and derived from docs/FORMATS.md with numpy / ml_dtypes /
gguf-py / safetensors / torch / transformers -- never from the Java implementation.

expected.json schema (version 1)
--------------------------------
{
  "schema_version": 1,
  "store": "<absolute path of OUT/store at generation time; Modelfile FROM lines use it>",
  "root_listing": [...],            # exact names in the mount root
  "namespace_dirs": {"x": [...], "hf.co": [...], "hf.co/bartowski": [...]},   # exact listings of
                                    #   the non-model folders (namespaces, hosts)
  "absent_models": [...],           # paths (relative to the mount) that must not exist
  "ignored_junk": [{"path": "store/...", "why": "..."}],   # store entries that must not show up
  "readonly_probes": {"file": "<rel path of a regular file>", "dir": "<rel path of a model dir>"},
  "e2e": {<model dir>: {"input_ids": [[...]], "logits_exact": "oracle/...npy",
                        "logits_close": "oracle/...npy" | null, "atol": float | null}},
  "hf_gguf": {<model dir>: {"source": "hf-src/<dir>",   # the HF model the GGUF was converted from
                            "kind": "llama" | "qwen2" | "qwen3" | "qwen3moe" | "phi3" | "gemma" | "gemma2" | "gemma3" | "qwen2moe" | "mixtral",
                            "ggml_type": "Q4_K",
                            "gguf_loader": bool}},   # compare with transformers' own GGUF loader
  "models": {
    "<model dir>": {                # relative to the mount root, e.g. "tinyllama", "x/flux-old"
      "manifest": "manifests/<host>/<ns>/<model>/<tag>",   # relative to the store
      "manifest_digest": "sha256:<hex of the manifest file>",
      "short_name": "tinyllama:latest",
      "format": "gguf" | "safetensors",
      "about": "<what this model exercises>",
      "dirs": [...],                # foundation sub-directories (relative to the model dir), mode 0555
      "files": {                    # foundation files: exact size, sha256, mode 0444
        "<rel path>": {"size": int, "sha256": hex,
                       "blob": "sha256:<hex>"      # when the file is byte-for-byte one blob
                       "media_type": "...",        # of that layer
                       "gguf": {"tensor_count": int, "gguf_py_readable": bool},   # *.gguf files
                       "safetensors_valid": bool,  # tensors/*.safetensors: passes the reference checks
                                                   #   (false for st-hostile's deliberately broken blobs)
                       "text": "..."}              # ollama/Modelfile only (exact text)
      },
      "errors": {"<rel path>": {"errno": "ENOENT" | "EIO", "size": int}},
                                    # listed with st_size = manifest layer size; open+read fails so
      "absent": [...],              # paths inside the model dir that must not exist
      "optional": [...],            # fnmatch globs of files the contract neither requires nor forbids
      "converted": {                # converted files (check_views.py)
        "<rel path>.safetensors": {
          "kind": "safetensors",
          "variant": null | "fp32" | "fp16" | "bf16",   # null = as stored
          "tensors": {"<key>": {"dtype": "F32", "shape": [...],
                                # either exact stored bytes:
                                "sha256": hex, "source": {"blob": "sha256:..", "key": "<key in blob>"}
                                                      or {"blob": "sha256:..", "gguf_tensor": "<name>"},
                                # or values: the f32 oracle rounded once (RNE) to dtype
                                "oracle": "oracle/<model dir>/<name>.npy", "oracle_from": "..."}}},
        "<rel path>.gguf": {
          "kind": "gguf", "variant": "fp32"|"fp16"|"bf16", "source": "model.gguf",
          "source_blob": "sha256:..", "version": 3, "alignment": 32,
          "kvs": [[key, type, value], ...],   # full expected KV list in order; arrays as
                                              #   [key, "ARRAY", {"type": T, "values": [...]}]
          "tensors": [{"name", "ne", "type" (ggml type name),
                       "sha256" + "source" (unchanged tensors) | "oracle" (converted)}]}
      }
    }
  }
}
Conventions: oracles are float32 .npy files holding the exact f32 values; fp16/bf16 files must hold
one round-to-nearest-even of them (numpy float16 / ml_dtypes.bfloat16). Integer tensors are exact.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

MT_MODEL = "application/vnd.ollama.image.model"
MT_PROJECTOR = "application/vnd.ollama.image.projector"
MT_ADAPTER = "application/vnd.ollama.image.adapter"
MT_DRAFT = "application/vnd.ollama.image.draft"
MT_TEMPLATE = "application/vnd.ollama.image.template"
MT_PROMPT = "application/vnd.ollama.image.prompt"
MT_SYSTEM = "application/vnd.ollama.image.system"
MT_PARAMS = "application/vnd.ollama.image.params"
MT_MESSAGES = "application/vnd.ollama.image.messages"
MT_LICENSE = "application/vnd.ollama.image.license"
MT_TENSOR = "application/vnd.ollama.image.tensor"
MT_JSON = "application/vnd.ollama.image.json"
MT_CONFIG = "application/vnd.docker.container.image.v1+json"
MANIFEST_MT = "application/vnd.docker.distribution.manifest.v2+json"

GGUF_FILE = {MT_MODEL: "model", MT_PROJECTOR: "mmproj", MT_ADAPTER: "adapter", MT_DRAFT: "draft"}
VARIANTS = ("fp32", "fp16", "bf16")
FILE_TYPE_OF_VARIANT = {"fp32": 0, "fp16": 1, "bf16": 32}


def base_media_type(mt: str) -> tuple[str, dict]:
    parts = [p.strip() for p in mt.split(";")]
    params = {}
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            params[k.strip()] = v.strip()
    return parts[0], params


# ---------------------------------------------------------------------------------------------
# logical tensors (what a reader must find in the safetensors blobs)
# ---------------------------------------------------------------------------------------------

class LT:
    """One logical tensor of a safetensors model: stored main entry, companions, oracle."""

    def __init__(self, name, dtype, shape, data, oracle=None, oracle_from="cast", quant=None,
                 comps=None, logical_shape=None):
        self.name = name
        self.dtype = dtype
        self.shape = [int(s) for s in shape]
        self.data = data
        self.oracle = oracle
        self.oracle_from = oracle_from
        self.quant = quant
        self.comps = comps or {}          # ".scale"/".bias"/".global_scale" -> (dtype, shape, bytes)
        self.logical_shape = [int(s) for s in (logical_shape or shape)]
        self.src = {}                     # "" or companion suffix -> {"blob":..., "key":...}

    def entries(self, key):
        out = [(key, self.dtype, self.shape, self.data)]
        for suf in (".scale", ".bias", ".global_scale"):
            if suf in self.comps:
                d, s, b = self.comps[suf]
                out.append((key + suf, d, s, b))
        return out


def lt_plain(name, arr, dtype):
    arr = np.asarray(arr)
    data = L.array_bytes(arr, dtype)
    oracle = L.st_bytes_to_f32(data, dtype, arr.shape) if dtype in L.FLOAT_DTYPES else None
    return LT(name, dtype, arr.shape, data, oracle=oracle, oracle_from="cast")


def lt_affine(name, w, bits, group, scale_dtype, qtype=None):
    packed, sc, bi = L.quantize_affine(w, bits, group, scale_dtype)
    oracle = L.dequant_affine(packed, sc, bi, bits, group, K=w.shape[-1])
    q = {"mode": "affine", "bits": bits, "group_size": group, "quant_type": qtype}
    return LT(name, "U32", packed.shape, packed.tobytes(), oracle=oracle,
              oracle_from=f"numpy FORMATS 5.3 affine {bits}-bit g{group}: f32(scale)*q + f32(bias)", quant=q,
              comps={".scale": (scale_dtype, sc.shape, sc.tobytes()), ".bias": (scale_dtype, bi.shape, bi.tobytes())},
              logical_shape=w.shape)


def lt_nvfp4(name, w, global_scale=None):
    packed, sc = L.quantize_nvfp4(w)
    comps = {".scale": ("U8", sc.shape, sc.tobytes())}
    how = "numpy FORMATS 5.4 nvfp4: E2M1*E4M3"
    if global_scale is not None:
        g = np.float32(global_scale)
        comps[".global_scale"] = ("F32", [], g.tobytes())
        how += " then *global_scale"
    oracle = L.dequant_nvfp4(packed, sc, 16, global_scale, K=w.shape[-1])
    return LT(name, "U32", packed.shape, packed.tobytes(), oracle=oracle, oracle_from=how,
              quant={"mode": "nvfp4", "bits": 4, "group_size": 16, "quant_type": "nvfp4"},
              comps=comps, logical_shape=w.shape)


def lt_mxfp4(name, w):
    packed, sc = L.quantize_mxfp4(w)
    oracle = L.dequant_mxfp4(packed, sc, 32, K=w.shape[-1])
    return LT(name, "U32", packed.shape, packed.tobytes(), oracle=oracle,
              oracle_from="numpy FORMATS 5.5 mxfp4: E2M1*2^(s-127)",
              quant={"mode": "mxfp4", "bits": 4, "group_size": 32, "quant_type": "mxfp4"},
              comps={".scale": ("U8", sc.shape, sc.tobytes())}, logical_shape=w.shape)


def lt_mxfp8(name, w):
    packed, sc = L.quantize_mxfp8(w)
    oracle = L.dequant_mxfp8(packed, sc, 32, K=w.shape[-1])
    return LT(name, "U32", packed.shape, packed.tobytes(), oracle=oracle,
              oracle_from="numpy FORMATS 5.6 mxfp8: E4M3*2^(s-127)",
              quant={"mode": "mxfp8", "bits": 8, "group_size": 32, "quant_type": "mxfp8"},
              comps={".scale": ("U8", sc.shape, sc.tobytes())}, logical_shape=w.shape)


def qmeta(qtype, group):
    return {"group_size": str(group), "quant_type": qtype}


# ---------------------------------------------------------------------------------------------
# the fixture (store writer + expectations)
# ---------------------------------------------------------------------------------------------

class Fixture:
    def __init__(self, out):
        self.out = os.path.abspath(out)
        self.store = os.path.join(self.out, "store")
        self.blobs = os.path.join(self.store, "blobs")
        self.manifests = os.path.join(self.store, "manifests")
        for d in (self.blobs, self.manifests, os.path.join(self.out, "oracle")):
            os.makedirs(d, exist_ok=True)
        self.models = {}
        self.absent_models = []
        self.junk = []
        self.e2e = {}
        self.hf_gguf = {}          # model dir -> HF source of a GGUF made by llama.cpp's converter
        self.tmp = tempfile.mkdtemp(prefix="modelfs-fixture-")

    # -- blobs -----------------------------------------------------------------------------
    def put_blob(self, data: bytes, mode: str = "normal") -> str:
        hexd = L.sha256_hex(data)
        if mode == "normal":
            path = os.path.join(self.blobs, "sha256-" + hexd)
            if not os.path.exists(path):
                with open(path, "wb") as f:
                    f.write(data)
        elif mode == "legacy":
            with open(os.path.join(self.blobs, "sha256:" + hexd), "wb") as f:
                f.write(data)
        elif mode == "truncated":
            with open(os.path.join(self.blobs, "sha256-" + hexd), "wb") as f:
                f.write(data[:len(data) // 2])
        elif mode == "missing":
            pass
        else:
            raise ValueError(mode)
        return "sha256:" + hexd

    def junk_file(self, relpath: str, data: bytes, why: str):
        p = os.path.join(self.store, relpath)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        self.junk.append({"path": "store/" + relpath, "why": why})

    def oracle(self, model_dir: str, name: str, arr: np.ndarray) -> str:
        rel = f"oracle/{model_dir}/{name}.npy"
        p = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        np.save(p, np.ascontiguousarray(arr, dtype=np.float32), allow_pickle=False)
        return rel

    def model(self, host, ns, name, tag, about):
        return Model(self, host, ns, name, tag, about)

    # -- GGUF through gguf-py's writer ---------------------------------------------------
    def gguf_pywriter(self, arch, kvs, tensors, alignment=None) -> bytes:
        """kvs: (key, vtype, value[, subtype]) after general.architecture; tensors: (name, ne, type name, raw)."""
        import gguf
        path = os.path.join(self.tmp, "w.gguf")
        w = gguf.GGUFWriter(path, arch)
        for kv in kvs:
            key, vt, val = kv[:3]
            sub = gguf.GGUFValueType[kv[3]] if len(kv) > 3 and kv[3] else None
            w.add_key_value(key, val, gguf.GGUFValueType[vt], sub_type=sub)
        if alignment:
            w.add_custom_alignment(alignment)
        for name, ne, tname, raw in tensors:
            shape = [int(x) for x in reversed(ne)]
            if tname in ("F32", "F16", "F64", "I8", "I16", "I32", "I64"):
                arr = np.frombuffer(raw, dtype=L.ST_DTYPES[L.GGML_PLAIN[tname]][0]).reshape(shape)
                w.add_tensor(name, arr)
            else:
                _, be, bb = L.GGML_TYPES[L.GGML_ID[tname]]
                arr = np.frombuffer(raw, dtype=np.uint8).reshape(shape[:-1] + [shape[-1] // be * bb])
                w.add_tensor(name, arr, raw_dtype=gguf.GGMLQuantizationType[tname])
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
        return data

    def finish(self):
        exp = {
            "schema_version": 1,
            "store": self.store,
            "root_listing": sorted({d.split("/")[0] for d in self.models}),
            "namespace_dirs": {},
            "absent_models": sorted(self.absent_models),
            "ignored_junk": self.junk,
            "readonly_probes": {"file": "tinyllama/ollama/manifest.json", "dir": "tinyllama"},
            "e2e": self.e2e,
            "hf_gguf": self.hf_gguf,
            "models": {k: self.models[k] for k in sorted(self.models)},
        }
        ns = {}
        for d in self.models:
            parts = d.split("/")
            for i in range(1, len(parts)):
                ns.setdefault("/".join(parts[:i]), set()).add(parts[i])
        exp["namespace_dirs"] = {k: sorted(v) for k, v in sorted(ns.items())}
        with open(os.path.join(self.out, "expected.json"), "w", encoding="utf-8") as f:
            json.dump(exp, f, indent=1, ensure_ascii=False, sort_keys=False)
            f.write("\n")
        shutil.rmtree(self.tmp, ignore_errors=True)


class Model:
    def __init__(self, fx: Fixture, host, ns, name, tag, about):
        self.fx = fx
        self.host, self.ns, self.name, self.tag = host, ns, name, tag
        if host == "registry.ollama.ai":
            base = name if ns == "library" else f"{ns}/{name}"
        else:
            base = f"{host}/{ns}/{name}"
        self.dir = base if tag == "latest" else f"{base}:{tag}"
        self.short = f"{base}:{tag}"
        self.manifest_rel = f"manifests/{host}/{ns}/{name}/{tag}"
        self.about = about
        self.layers = []           # (layer json dict, data bytes, mode)
        self.config = None         # (layer json dict, data)
        self.lts = []              # logical tensors (safetensors models)
        self.broken_components = set()
        self.extra_absent = []
        self.optional = []
        self.translated = {}       # GGUF file name -> its bytes translated from Ollama's dialect (FORMATS.md §12)

    # -- layers ------------------------------------------------------------------------------
    def set_config(self, obj, newline=False):
        data = L.go_json(obj) + (b"\n" if newline else b"")
        d = self.fx.put_blob(data)
        self.config = ({"mediaType": MT_CONFIG, "digest": d, "size": len(data)}, data)

    def layer(self, media_type, data: bytes, name=None, mode="normal", from_=None):
        d = self.fx.put_blob(data, mode)
        lj = {"mediaType": media_type, "digest": d, "size": len(data)}
        if from_:
            lj["from"] = from_
        if name:
            lj["name"] = name
        self.layers.append((lj, data, mode))
        return d

    def json_layer(self, name, obj=None, raw=None):
        data = raw if raw is not None else (json.dumps(obj, indent=2) + "\n").encode()
        self.layer(MT_JSON, data, name=name)

    def tensor_blob(self, layer_name, parts, writer="go", metadata=None, mode="normal", seed=0,
                    media_type=MT_TENSOR, register=True):
        """parts: list of (LT, key) -- the LT's main entry and companions are stored under key(+suffix)."""
        entries = []
        for lt, key in parts:
            entries += lt.entries(key)
        data = L.st_go(entries, metadata) if writer == "go" else L.st_mlx(entries, metadata, seed=seed)
        d = self.layer(media_type, data, name=layer_name, mode=mode)
        for lt, key in parts:
            lt.src[""] = {"blob": d, "key": key}
            for suf in lt.comps:
                lt.src[suf] = {"blob": d, "key": key + suf}
            if register and mode in ("normal", "legacy"):
                self.lts.append(lt)
        return d

    def legacy_data_layers(self, layer_name, lt: LT):
        """v0.14-v0.15: one "data" blob per layer; quantized tensors split into <name>, <name>_scale,
        <name>_qbias (MLX writer, __metadata__ null); unquantized: Go writer."""
        if lt.quant is None:
            data = L.st_go([("data", lt.dtype, lt.shape, lt.data)])
            d = self.layer(MT_TENSOR, data, name=layer_name)
            lt.src[""] = {"blob": d, "key": "data"}
        else:
            data = L.st_mlx([("data", lt.dtype, lt.shape, lt.data)], None)
            d = self.layer(MT_TENSOR, data, name=layer_name)
            lt.src[""] = {"blob": d, "key": "data"}
            for suf, lname in ((".scale", "_scale"), (".bias", "_qbias")):
                if suf in lt.comps:
                    dt, sh, b = lt.comps[suf]
                    d2 = self.layer(MT_TENSOR, L.st_mlx([("data", dt, sh, b)], None), name=layer_name + lname)
                    lt.src[suf] = {"blob": d2, "key": "data"}
        self.lts.append(lt)

    # -- finishing ---------------------------------------------------------------------------
    def manifest_bytes(self, style="go"):
        m = {"schemaVersion": 2, "mediaType": MANIFEST_MT, "config": self.config[0],
             "layers": [lj for lj, _, _ in self.layers]}
        if style == "go":
            return L.go_json(m) + b"\n"
        if style == "registry":   # as a registry might serve it: indented, extra unknown fields
            m = dict(m)
            m["annotations"] = {"org.opencontainers.image.source": "https://hf.co/bartowski"}
            return json.dumps(m, indent=3).encode()
        raise ValueError(style)

    def finish(self, style="go", fmt=None):
        fx = self.fx
        mbytes = self.manifest_bytes(style)
        mpath = os.path.join(fx.store, self.manifest_rel)
        os.makedirs(os.path.dirname(mpath), exist_ok=True)
        with open(mpath, "wb") as f:
            f.write(mbytes)

        files, errors, dirs = {}, {}, set()

        def add_file(rel, data, lj=None, mode="normal", extra=None):
            assert rel not in files and rel not in errors, rel
            if mode == "missing":
                errors[rel] = {"errno": "ENOENT", "size": lj["size"]}
            elif mode == "truncated":
                errors[rel] = {"errno": "EIO", "size": lj["size"]}
            else:
                e = {"size": len(data), "sha256": L.sha256_hex(data)}
                if lj is not None:
                    e["blob"] = lj["digest"]
                    e["media_type"] = lj["mediaType"]
                if extra:
                    e.update(extra)
                files[rel] = e
            p = rel.split("/")
            for i in range(1, len(p)):
                dirs.add("/".join(p[:i]))

        add_file("ollama/manifest.json", mbytes)
        add_file("ollama/config.json", self.config[1], self.config[0])
        counters = {}
        licenses = 0
        has_model = any(base_media_type(lj["mediaType"])[0] == MT_MODEL for lj, _, _ in self.layers)
        has_tensor = any(base_media_type(lj["mediaType"])[0] == MT_TENSOR for lj, _, _ in self.layers)
        text = {}
        gguf_model = gguf_draft = None
        for lj, data, mode in self.layers:
            mt, params = base_media_type(lj["mediaType"])
            if mt in GGUF_FILE:
                stem = GGUF_FILE[mt]
                counters[stem] = counters.get(stem, 0) + 1
                rel = f"{stem}.gguf" if counters[stem] == 1 else f"{stem}-{counters[stem]}.gguf"
                extra = None
                if mode in ("normal", "legacy"):
                    g = L.gguf_read(data)
                    readable = all(t["type"] in GGUF_PY_TYPES and L.GGML_TYPES[t["type"]][0] != "Q8_1"
                                   for t in g["tensors"])
                    extra = {"gguf": {"tensor_count": len(g["tensors"]), "gguf_py_readable": readable}}
                if rel in self.translated:
                    add_file("ollama/" + rel, data, lj, mode, extra)
                    add_file(rel, self.translated[rel], None, mode, extra)
                else:
                    add_file(rel, data, lj, mode, extra)
                if mt == MT_MODEL and counters[stem] == 1:
                    gguf_model = (lj, data, mode)
                if mt == MT_DRAFT and counters[stem] == 1:   # the draft's model folder (FORMATS.md §4.3 H)
                    add_file("draft/model.gguf", data, lj, mode, extra)
                    gguf_draft = (lj, data, mode)
            elif mt in (MT_TEMPLATE, MT_PROMPT):
                add_file("ollama/template", data, lj, mode)
                text["template"] = data.decode()
            elif mt == MT_SYSTEM:
                add_file("ollama/system", data, lj, mode)
                text["system"] = data.decode()
            elif mt == MT_PARAMS:
                add_file("ollama/params.json", data, lj, mode)
                text["params"] = json.loads(data)
            elif mt == MT_MESSAGES:
                add_file("ollama/messages.json", data, lj, mode)
                text["messages"] = json.loads(data)
            elif mt == MT_LICENSE:
                licenses += 1
                add_file("ollama/license" if licenses == 1 else f"ollama/license.{licenses}", data, lj, mode)
                text.setdefault("licenses", []).append(data.decode())
            elif mt == MT_JSON:
                restored = diffusers_model_index(data) if lj["name"] == "model_index.json" and mode == "normal" else None
                if restored is not None:
                    add_file(lj["name"], restored)
                else:
                    add_file(lj["name"], data, lj, mode)
            elif mt == MT_TENSOR:
                lname = lj.get("name") or params["name"]
                try:
                    L.st_parse(data)
                    valid = True
                except L.SafetensorsError:
                    valid = False
                add_file(f"tensors/{lname}.safetensors", data, lj, mode, {"safetensors_valid": valid})
            else:
                raise ValueError(mt)

        mf = self.modelfile(text, has_model)
        add_file("ollama/Modelfile", mf.encode(), extra={"text": mf})

        converted, absent = {}, list(self.extra_absent)
        if has_model:
            fmt = fmt or "gguf"
            if gguf_model and gguf_model[2] in ("normal", "legacy"):
                named = "gguf/" if hf_folder_expected(gguf_model[1]) else ""
                converted = gguf_views(fx, self.dir, gguf_model[0], gguf_model[1], named)
                if named:   # the HF files themselves are checked by check_hf_gguf.py (hf-* models)
                    self.optional += HF_FOLDER_FILES
            else:
                absent += ["model.safetensors"] + [f"{v}/model.safetensors" for v in VARIANTS] + \
                          [f"model.{v}.gguf" for v in VARIANTS] + list(VARIANTS)
            if gguf_draft and gguf_draft[2] in ("normal", "legacy"):
                named = "gguf/" if hf_folder_expected(gguf_draft[1]) else ""
                converted.update(gguf_views(fx, self.dir, gguf_draft[0], gguf_draft[1], named, folder="draft/"))
                if named:   # the HF files of a draft folder are those of any GGUF model (check_hf_gguf.py)
                    self.optional += ["draft/" + f for f in HF_FOLDER_FILES]
        elif has_tensor:
            fmt = fmt or "safetensors"
            converted, abs2 = st_views(fx, self)
            absent += abs2
            # the synthesized GGUF of safetensors LLMs (SEMANTICS.md): checked by check_synth_gguf.py
            self.optional += ["model.gguf", "*/model.gguf", "model.*.gguf", "*/model.*.gguf"]
        add_bpe_vocab_files(self.layers, files, dirs)
        add_variant_copies(files, dirs, converted, self.optional)
        fx.models[self.dir] = {
            "manifest": self.manifest_rel,
            "manifest_digest": "sha256:" + L.sha256_hex(mbytes),
            "short_name": self.short,
            "format": fmt,
            "about": self.about,
            "dirs": sorted(dirs),
            "files": dict(sorted(files.items())),
            "errors": errors,
            "absent": sorted(absent),
            "optional": self.optional,
            "converted": converted,
        }

    def modelfile(self, text, has_model):
        q = L.modelfile_quote
        store = self.fx.store
        out = ['# Modelfile generated by "ollama show"',
               "# To build a new Modelfile based on this, replace FROM with:",
               f"# FROM {self.short}", ""]
        for lj, _, _ in self.layers:
            if base_media_type(lj["mediaType"])[0] == MT_MODEL:
                out.append(f"FROM {store}/blobs/{lj['digest'].replace(':', '-')}")
        if not has_model:
            out.append(f"FROM {self.short}")
        for lj, _, _ in self.layers:
            if base_media_type(lj["mediaType"])[0] == MT_ADAPTER:
                out.append(f"ADAPTER {store}/blobs/{lj['digest'].replace(':', '-')}")
        drafts = [lj for lj, _, _ in self.layers if base_media_type(lj["mediaType"])[0] == MT_DRAFT]
        if drafts:   # server/images.go Model.String: DRAFT with the last draft layer's blob, after ADAPTER
            out.append(f"DRAFT {q(store + '/blobs/' + drafts[-1]['digest'].replace(':', '-'))}")
        for lj, _, _ in self.layers:
            if base_media_type(lj["mediaType"])[0] == MT_PROJECTOR:
                out.append(f"FROM {store}/blobs/{lj['digest'].replace(':', '-')}")
        if "template" in text:
            out.append(f"TEMPLATE {q(text['template'])}")
        if "system" in text:
            out.append(f"SYSTEM {q(text['system'])}")
        for k in sorted(text.get("params", {})):
            v = text["params"][k]
            for e in (v if isinstance(v, list) else [v]):
                out.append(f"PARAMETER {k} {q(L.go_value_str(e))}")
        for lic in text.get("licenses", []):
            out.append(f"LICENSE {q(lic)}")
        for m in text.get("messages", []):
            out.append(f"MESSAGE {m['role']} {q(m['content'])}")
        return "\n".join(out) + "\n"


def _gguf_py_types():
    import gguf
    return {int(t) for t in gguf.GGMLQuantizationType}


GGUF_PY_TYPES = _gguf_py_types()


# ---------------------------------------------------------------------------------------------
# expected converted files
# ---------------------------------------------------------------------------------------------

# docs/SEMANTICS.md "Hugging Face folder of GGUF models": files of a supported GGUF model
HF_FOLDER_ARCHS = ("llama", "qwen2", "qwen3", "qwen3moe", "phi3", "gemma", "gemma2", "gemma3", "qwen2moe",
                   "olmo2", "granitemoe",
                   "gpt-oss", "deepseek2", "gemma4",   # the last three: GGUF -> HF only, deepseek2 with sigmoid routing
                   "qwen2vl", "qwen3vl", "mistral3",   # the text models of vision-language GGUFs, GGUF -> HF only
                   "qwen3vlmoe", "glm4",               # (glm4: GLM-OCR's, with M-RoPE sections only)
                   "qwen35", "qwen35moe")              # Qwen 3.5 / 3.6 text
HF_FOLDER_JSON = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                  "special_tokens_map.json"]
HF_FOLDER_FILES = HF_FOLDER_JSON + ["model.safetensors"] + [f"{v}/{f}" for v in VARIANTS
                                                            for f in HF_FOLDER_JSON + ["model.safetensors"]]


def diffusers_model_index(stored: bytes):
    """docs/SEMANTICS.md "Image models": the model_index.json Ollama rewrote (architecture,
    parameter_count, quantization; no _class_name/_diffusers_version), as diffusers' ConfigMixin.to_json_string
    writes it (json.dumps(indent=2, sort_keys=True) + newline); None when it is not Ollama's rewrite."""
    try:
        obj = json.loads(stored)
    except ValueError:
        return None
    if not isinstance(obj, dict) or "_class_name" in obj or not isinstance(obj.get("architecture"), str):
        return None
    out = {"_class_name": obj["architecture"], "_diffusers_version": "0.36.0"}
    out.update({k: v for k, v in obj.items()
                if k not in ("architecture", "parameter_count", "quantization", "_diffusers_version")})
    return (json.dumps(out, indent=2, sort_keys=True) + "\n").encode()


def add_bpe_vocab_files(layers, files, dirs):
    """docs/SEMANTICS.md "Image models": beside each <folder>/tokenizer.json of a model with a
    model_index.json, the vocab.json and merges.txt transformers' slow BPE tokenizers read, as its
    save_vocabulary writes them (merges.txt: "#version: 0.2" then one "a b" per line), unless stored."""
    names = {lj.get("name") for lj, _, mode in layers if base_media_type(lj["mediaType"])[0] == MT_JSON}
    if "model_index.json" not in names:
        return
    for lj, data, mode in layers:
        name = lj.get("name") or ""
        if base_media_type(lj["mediaType"])[0] != MT_JSON or mode != "normal" or name.count("/") != 1 \
                or not name.endswith("/tokenizer.json"):
            continue
        model = json.loads(data).get("model") or {}
        if model.get("type") != "BPE":
            continue
        folder = name[:-len("tokenizer.json")]
        out = {"vocab.json": json.dumps(model["vocab"], ensure_ascii=False, separators=(",", ":")).encode(),
               "merges.txt": ("#version: 0.2\n" + "".join((m if isinstance(m, str) else " ".join(m)) + "\n"
                                                           for m in model["merges"])).encode()}
        for f, b in out.items():
            if folder + f not in names:
                files[folder + f] = {"size": len(b), "sha256": L.sha256_hex(b)}
                dirs.add(folder.rstrip("/"))


def add_variant_copies(files, dirs, converted, optional):
    """docs/SEMANTICS.md "One weight set per folder": every variant folder the converted files create gets
    a copy of each model-folder file a loader reads beside the weights (all but ollama/, tensors/, gguf/,
    weights and GGUF files), same bytes; a config.json is expected as the top folder's with the variant's dtype
    (check_tree.py: "variant_config_of", fixture_lib.retyped_config)."""
    variants = [v for v in VARIANTS if any(p.startswith(v + "/") for p in converted)]
    for v in variants:
        dirs.add(v)
        for rel, e in list(files.items()):
            top = rel.split("/", 1)[0] if "/" in rel else ""
            if top in ("ollama", "tensors", "gguf") or top in VARIANTS or rel.endswith((".safetensors", ".gguf")):
                continue
            is_config = rel == "config.json" or rel.endswith("/config.json")
            files[f"{v}/{rel}"] = {"variant_config_of": rel, "variant": v} if is_config else dict(e)
            p = f"{v}/{rel}".split("/")
            for i in range(1, len(p)):
                dirs.add("/".join(p[:i]))
        for g in list(optional):
            if not g.startswith(tuple(f"{x}/" for x in VARIANTS)) and not g.endswith((".gguf", ".safetensors")):
                optional.append(f"{v}/{g}")


def hf_folder_expected(buf) -> bool:
    """Whether a GGUF model gets a Hugging Face folder (and its GGUF-named safetensors move to gguf/):
    a supported general.architecture with its head count and embedding length, a token_embd.weight,
    and only tensors of that architecture (a rope_freqs.weight here is always Llama 3 scaling, rope_factors_* Phi-3
    LongRoPE)."""
    g = L.gguf_read(buf)
    kv = {k[0]: k for k in L.gguf_kvs_to_json(g["kvs"])}
    arch = kv.get("general.architecture", [None, None, None])[2]
    names = {t["name"] for t in g["tensors"]}
    layer = re.compile(r"blk\.\d+\.(attn_(norm|q|k|v|qkv|output|q_norm|k_norm)|ffn_(norm|gate|up|down|gate_inp|"
                       r"(gate|up|down)_exps|gate_inp_shexp|(gate|up|down)_shexp)|post_attention_norm|post_ffw_norm|layer_output_scale|"
                       r"attn_sinks|attn_(q_a|q_a_norm|q_b|kv_a_mqa|kv_a_norm|k_b|v_b|kv_b)|exp_probs_b|"
                       # Gemma 4: E2B/E4B's per-layer inputs, 26B-A4B's experts (router and expert scales, fused gate/up)
                       r"inp_gate|proj|post_norm|ffn_gate_up_exps|pre_ffw_norm_2|post_ffw_norm_[12])\.(weight|bias)"
                       r"|blk\.\d+\.(ffn_gate_inp|ffn_down_exps)\.scale")
    if arch == "deepseek2" and (kv.get(f"{arch}.expert_gating_func") or [None] * 3)[2] != 2:
        return False   # softmax routing (DeepSeek-V2) is refused
    if arch == "glm4" and f"{arch}.rope.dimension_sections" not in kv:
        return False   # GLM-4 without M-RoPE (GLM-4-0414) is not mapped
    # Qwen 3.5's gated delta-net (ssm_a has no suffix) and its MTP layer's nextn.* tensors
    qwen35 = re.compile(r"blk\.\d+\.(ssm_a|(attn_gate|ssm_(alpha|beta|conv1d|norm|out|dt)|nextn\.\w+)\.(weight|bias))")
    nextn = re.compile(r"blk\.\d+\.nextn\.\w+\.weight")   # GLM-OCR's MTP block (left out of the folder)
    return (arch in HF_FOLDER_ARCHS and f"{arch}.attention.head_count" in kv and f"{arch}.embedding_length" in kv
            and "token_embd.weight" in names
            and all(n in ("token_embd.weight", "output_norm.weight", "output.weight", "rope_freqs.weight",
                          "rope_factors_long.weight", "rope_factors_short.weight",
                          "per_layer_token_embd.weight", "per_layer_model_proj.weight", "per_layer_proj_norm.weight")
                    or layer.fullmatch(n) or (arch in ("qwen35", "qwen35moe") and qwen35.fullmatch(n))
                    or (arch == "glm4" and nextn.fullmatch(n))
                    for n in names))


def gguf_views(fx: Fixture, model_dir, lj, buf, named="", folder=""):
    """The converted files of one GGUF layer; `folder` ("" or "draft/") prefixes every path (a draft layer's
    files are in draft/, FORMATS.md §4.3 H), `named` the GGUF-named safetensors within it ("gguf/")."""
    model_dir = model_dir + ("/" + folder.rstrip("/") if folder else "")    # the oracles' folder
    named = folder + named
    g = L.gguf_read(buf)
    digest = lj["digest"]
    as_stored, var_st = {}, {v: {} for v in VARIANTS}
    gg_tensors = {v: [] for v in VARIANTS}
    for t in g["tensors"]:
        tname = L.GGML_TYPES[t["type"]][0]
        raw = L.gguf_tensor_bytes(buf, g, t)
        shape = [int(x) for x in reversed(t["ne"])]
        src = {"blob": digest, "gguf_tensor": t["name"]}
        oracle_rel, how = None, None
        if tname not in L.GGML_INT:
            arr, how = L.ggml_dequant(t["type"], raw, t["ne"])
            oracle_rel = fx.oracle(model_dir, t["name"], arr)
        if tname in L.GGML_PLAIN:
            as_stored[t["name"]] = {"dtype": L.GGML_PLAIN[tname], "shape": shape, "sha256": L.sha256_hex(raw),
                                    "source": src}
        else:
            as_stored[t["name"]] = {"dtype": "F32", "shape": shape, "oracle": oracle_rel,
                                    "oracle_from": how, "ggml_type": tname}
        for v in VARIANTS:
            if tname in L.GGML_INT:
                var_st[v][t["name"]] = {"dtype": L.GGML_PLAIN[tname], "shape": shape,
                                        "sha256": L.sha256_hex(raw), "source": src}
            else:
                var_st[v][t["name"]] = {"dtype": L.VARIANT_DTYPE[v], "shape": shape, "oracle": oracle_rel,
                                        "oracle_from": how, "ggml_type": tname}
            if tname in L.GGML_PLAIN:
                gg_tensors[v].append({"name": t["name"], "ne": t["ne"], "type": tname,
                                      "sha256": L.sha256_hex(raw), "source": src})
            else:
                gg_tensors[v].append({"name": t["name"], "ne": t["ne"], "type": L.VARIANT_DTYPE[v],
                                      "oracle": oracle_rel, "oracle_from": how, "source_type": tname})
    conv = {f"{named}model.safetensors": {"kind": "safetensors", "variant": None, "tensors": as_stored}}
    for v in VARIANTS:
        conv[f"{named}{v}/model.safetensors"] = {"kind": "safetensors", "variant": v, "tensors": var_st[v]}
    for v in VARIANTS:
        kvs = L.gguf_kvs_to_json(g["kvs"])
        ft = FILE_TYPE_OF_VARIANT[v]
        for i, kv in enumerate(kvs):
            if kv[0] == "general.file_type":
                kvs[i] = ["general.file_type", "UINT32", ft]
                break
        else:
            kvs.append(["general.file_type", "UINT32", ft])
        conv[f"{folder}model.{v}.gguf"] = {"kind": "gguf", "variant": v, "source": f"{folder}model.gguf", "source_blob": digest,
                                   "version": g["version"], "alignment": g["alignment"], "kvs": kvs,
                                   "tensors": gg_tensors[v]}
    return conv


def component_of(name):
    return name.split("/", 1)[0] if "/" in name else ""


def draft_layout(m):
    """(tensor prefix, folder) of a draft imported with the model, as Ollama's runner finds it
    (x/mlxrunner/model/root.go readDraftConfig, FORMATS.md §4.3 H), or None."""
    cfg = json.loads(m.config[1]) if m.config else {}
    d = cfg.get("draft") if isinstance(cfg, dict) else None
    if isinstance(d, dict):
        if d.get("model_format", "") not in ("", "safetensors"):
            return None
        conf = d.get("config") or ""
        head, _, tail = conf.partition("/")
        folder = head if tail == "config.json" and head not in ("", ".", "..") else "draft"
        return d.get("tensor_prefix") or "draft.", folder
    if any(lj.get("name") == "draft/config.json" for lj, _, _ in m.layers):
        return "draft.", "draft"
    return None


def st_views(fx: Fixture, m: Model):
    json_layers = {}
    for lj, data, mode in m.layers:
        if base_media_type(lj["mediaType"])[0] == MT_JSON and lj["name"].endswith("config.json"):
            json_layers[lj["name"]] = json.loads(data)
    draft = draft_layout(m)
    comps, rels = {}, {}
    for lt in m.lts:
        if draft and lt.name.startswith(draft[0]) and len(lt.name) > len(draft[0]):
            c, rels[lt.name] = draft[1], lt.name[len(draft[0]):]
        else:
            c = component_of(lt.name)
            rels[lt.name] = lt.name[len(c) + 1:] if c else lt.name
        comps.setdefault(c, []).append(lt)
    conv, absent = {}, []
    for c in sorted(set(comps) | m.broken_components):
        cfg = json_layers.get(f"{c}/config.json" if c else "config.json")
        w = "diffusion_pytorch_model" if isinstance(cfg, dict) and "_class_name" in cfg else "model"
        prefix = f"{c}/" if c else ""
        paths = [f"{prefix}{w}.safetensors"] + [f"{v}/{prefix}{w}.safetensors" for v in VARIANTS]
        if c in m.broken_components:
            absent += paths
            continue
        stored, var = {}, {v: {} for v in VARIANTS}
        for lt in comps[c]:
            rel = rels[lt.name]
            stored[rel] = {"dtype": lt.dtype, "shape": lt.shape, "sha256": L.sha256_hex(lt.data),
                           "source": lt.src[""]}
            for suf, (dt, sh, b) in lt.comps.items():
                stored[rel + suf] = {"dtype": dt, "shape": [int(x) for x in sh], "sha256": L.sha256_hex(b),
                                     "source": lt.src[suf]}
            oracle_rel = fx.oracle(m.dir, lt.name, lt.oracle) if lt.oracle is not None else None
            for v in VARIANTS:
                if oracle_rel is not None:
                    e = {"dtype": L.VARIANT_DTYPE[v], "shape": lt.logical_shape, "oracle": oracle_rel,
                         "oracle_from": lt.oracle_from}
                    if lt.quant:
                        e["quant"] = lt.quant
                    var[v][rel] = e
                else:
                    var[v][rel] = {"dtype": lt.dtype, "shape": lt.shape, "sha256": L.sha256_hex(lt.data),
                                   "source": lt.src[""]}
        conv[paths[0]] = {"kind": "safetensors", "variant": None, "tensors": stored}
        for v, p in zip(VARIANTS, paths[1:]):
            conv[p] = {"kind": "safetensors", "variant": v, "tensors": var[v]}
    return conv, absent


# ---------------------------------------------------------------------------------------------
# GGUF models
# ---------------------------------------------------------------------------------------------

TEMPLATE_TINYLLAMA = ('{{ if .System }}<|system|>\n{{ .System }}</s>\n{{ end }}'
                      '{{ if .Prompt }}<|user|>\n{{ .Prompt }}</s>\n{{ end }}<|assistant|>\n{{ .Response }}{{ "" }}</s>\n')
LICENSE_MIT = "MIT License\n\nCopyright (c) 2024 The modelfs fixture authors\n\nPermission is hereby granted, free of charge.\n"
LICENSE_QUOTED = 'Use of this model is subject to the "Acceptable Use Policy".\nSee https://example.invalid/aup\n'


def gaussian(rng, shape, scale=0.05):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def ggml_tensor(rng, name, ne, tname):
    """(name, ne, type name, raw bytes): quantized with gguf-py where it can, else random valid blocks."""
    import gguf
    shape = list(reversed(ne))
    if tname == "F32":
        return name, ne, tname, gaussian(rng, shape, 1.0).tobytes()
    if tname == "F16":
        return name, ne, tname, gaussian(rng, shape, 1.0).astype("<f2").tobytes()
    if tname == "BF16":
        import ml_dtypes
        return name, ne, tname, gaussian(rng, shape, 1.0).astype(ml_dtypes.bfloat16).tobytes()
    if tname == "F64":   # values exactly representable in f16 and bf16: no double-rounding question
        return name, ne, tname, (rng.integers(-64, 64, size=shape) / 8.0).astype("<f8").tobytes()
    if tname in L.GGML_INT:
        info = np.iinfo(L.ST_DTYPES[tname][0])
        lo, hi = max(info.min, -(2 ** 40)), min(info.max, 2 ** 40)
        return name, ne, tname, rng.integers(lo, hi, size=shape, endpoint=True).astype(L.ST_DTYPES[tname][0]).tobytes()
    _, be, bb = L.GGML_TYPES[L.GGML_ID[tname]]
    nblocks = L.numel(ne) // be
    if tname in ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "TQ1_0", "TQ2_0", "MXFP4"):
        x = gaussian(rng, shape, 0.5)
        raw = gguf.quants.quantize(x, gguf.GGMLQuantizationType[tname])
        return name, ne, tname, np.ascontiguousarray(raw).tobytes()
    return name, ne, tname, L.ggml_random_blocks(tname, nblocks, rng).tobytes()


def llama_tokenizer_kvs(n_vocab):
    # with room for them, the 256 byte tokens <0x00>..<0xFF> follow the specials: llama.cpp's SPM vocab
    # looks byte tokens up while loading, so a vocab without them cannot be loaded by llama.cpp
    byte_toks = [f"<0x{b:02X}>" for b in range(256)] if n_vocab >= 259 else ["<0x0A>"]
    toks = ["<unk>", "<s>", "</s>"] + byte_toks + [f"tok{i}" for i in range(3 + len(byte_toks), n_vocab)]
    return [
        ("tokenizer.ggml.model", "STRING", "llama"),
        ("tokenizer.ggml.tokens", "ARRAY", toks, "STRING"),
        ("tokenizer.ggml.scores", "ARRAY", [float(-i) for i in range(n_vocab)], "FLOAT32"),
        ("tokenizer.ggml.token_type", "ARRAY", [2, 3, 3] + [6] * len(byte_toks) + [1] * (n_vocab - 3 - len(byte_toks)),
         "INT32"),
        ("tokenizer.ggml.bos_token_id", "UINT32", 1),
        ("tokenizer.ggml.eos_token_id", "UINT32", 2),
        ("tokenizer.ggml.unknown_token_id", "UINT32", 0),
    ]


def llama_gguf(fx, rng, name, n_embd, n_ff, n_vocab, n_head, n_head_kv, types, file_type=None, alignment=None,
               extra_kvs=()):
    head_dim = n_embd // n_head
    kvs = [("general.name", "STRING", name)]
    if file_type is not None:
        kvs.append(("general.file_type", "UINT32", file_type))
    kvs += [
        ("llama.context_length", "UINT32", 2048),
        ("llama.embedding_length", "UINT32", n_embd),
        ("llama.block_count", "UINT32", 1),
        ("llama.feed_forward_length", "UINT32", n_ff),
        ("llama.attention.head_count", "UINT32", n_head),
        ("llama.attention.head_count_kv", "UINT32", n_head_kv),
        ("llama.attention.layer_norm_rms_epsilon", "FLOAT32", 1e-5),
        ("llama.rope.dimension_count", "UINT32", head_dim),
        ("llama.rope.freq_base", "FLOAT32", 10000.0),
        ("general.quantization_version", "UINT32", 2),
    ] + list(extra_kvs) + llama_tokenizer_kvs(n_vocab)
    t = types
    tensors = [
        ggml_tensor(rng, "token_embd.weight", [n_embd, n_vocab], t["token_embd"]),
        ggml_tensor(rng, "blk.0.attn_norm.weight", [n_embd], t["attn_norm"]),
        ggml_tensor(rng, "blk.0.attn_q.weight", [n_embd, n_embd], t["attn_q"]),
        ggml_tensor(rng, "blk.0.attn_k.weight", [n_embd, head_dim * n_head_kv], t["attn_k"]),
        ggml_tensor(rng, "blk.0.attn_v.weight", [n_embd, head_dim * n_head_kv], t["attn_v"]),
        ggml_tensor(rng, "blk.0.attn_output.weight", [n_embd, n_embd], t["attn_output"]),
        ggml_tensor(rng, "blk.0.ffn_norm.weight", [n_embd], t["ffn_norm"]),
        ggml_tensor(rng, "blk.0.ffn_gate.weight", [n_embd, n_ff], t["ffn_gate"]),
        ggml_tensor(rng, "blk.0.ffn_up.weight", [n_embd, n_ff], t["ffn_up"]),
        ggml_tensor(rng, "blk.0.ffn_down.weight", [n_ff, n_embd], t["ffn_down"]),
        ggml_tensor(rng, "output_norm.weight", [n_embd], t["output_norm"]),
        ggml_tensor(rng, "output.weight", [n_embd, n_vocab], t["output"]),
    ]
    return fx.gguf_pywriter("llama", kvs, tensors, alignment=alignment)


def gguf_config(family, model_type, file_type):
    return {"model_format": "gguf", "model_family": family, "model_families": [family],
            "model_type": model_type, "file_type": file_type, "architecture": "amd64", "os": "linux"}


def build_tinyllama(fx):
    rng = np.random.default_rng(101)
    m = fx.model("registry.ollama.ai", "library", "tinyllama", "latest",
                 "GGUF llama, many tensor types, two projectors (mmproj-2.gguf), adapter, template/system/params/"
                 "messages, two licenses")
    types = {"token_embd": "Q4_K", "attn_norm": "F32", "attn_q": "Q8_0", "attn_k": "Q4_0", "attn_v": "Q6_K",
             "attn_output": "Q5_K", "ffn_norm": "F32", "ffn_gate": "Q4_1", "ffn_up": "Q5_0", "ffn_down": "Q3_K",
             "output_norm": "F32", "output": "Q2_K"}    # norms F32: llama.cpp's CPU ops multiply by f32 norms only
    extra = [("general.description", "STRING", "tiny <llama> & friends"), ("general.size_label", "STRING", "1M"),
             ("llama.vocab_size", "UINT32", 288), ("test.u64", "UINT64", 2 ** 40 + 3), ("test.i8", "INT8", -5),
             ("test.bool", "BOOL", True), ("test.f64", "FLOAT64", 0.1), ("test.i64", "INT64", -(2 ** 35)),
             ("test.u16", "UINT16", 65535), ("test.i16", "INT16", -300), ("test.u8", "UINT8", 7),
             ("test.i32", "INT32", -7), ("test.u8s", "ARRAY", [1, 2, 3], "UINT8")]
    model = llama_gguf(fx, rng, "TinyLlama", 256, 256, 288, 4, 1, types, file_type=15, extra_kvs=extra)
    proj_kvs = [("general.name", "STRING", "tiny-mmproj"), ("general.file_type", "UINT32", 1),
                ("clip.has_vision_encoder", "BOOL", True), ("clip.vision.image_size", "UINT32", 32),
                ("clip.vision.embedding_length", "UINT32", 64)]
    proj_tensors = [ggml_tensor(rng, "v.patch_embd.weight", [4, 4, 3, 64], "F16"),
                    ggml_tensor(rng, "v.blk.0.attn_q.weight", [64, 64], "Q8_0"),
                    ggml_tensor(rng, "mm.0.weight", [64, 256], "F16"),
                    ggml_tensor(rng, "mm.0.bias", [256], "F32")]
    proj = fx.gguf_pywriter("clip", proj_kvs, proj_tensors)
    # a LLaVA-style projector without clip.projector_type: served translated (FORMATS.md §12.5: the key appended,
    # everything else as stored), the blob as ollama/mmproj.gguf
    m.translated["mmproj.gguf"] = fx.gguf_pywriter("clip", proj_kvs + [("clip.projector_type", "STRING", "mlp")], proj_tensors)
    proj2 = fx.gguf_pywriter("clip", [
        ("general.name", "STRING", "tiny-mmproj-audio"), ("clip.has_audio_encoder", "BOOL", True)], [
        ggml_tensor(rng, "a.conv1d.1.weight", [3, 8, 16], "F16"),
        ggml_tensor(rng, "a.blk.0.attn_q.weight", [32, 32], "Q4_0")])
    adapter = fx.gguf_pywriter("llama", [
        ("general.type", "STRING", "adapter"), ("general.name", "STRING", "tiny-lora"),
        ("adapter.type", "STRING", "lora"), ("adapter.lora.alpha", "FLOAT32", 16.0)], [
        ggml_tensor(rng, "blk.0.attn_q.weight.lora_a", [256, 4], "F32"),
        ggml_tensor(rng, "blk.0.attn_q.weight.lora_b", [4, 256], "F32")])
    m.set_config(gguf_config("llama", "1.1M", "Q4_K_M"), newline=True)
    m.layer(MT_MODEL, model)
    m.layer(MT_PROJECTOR, proj)
    m.layer(MT_ADAPTER, adapter)
    m.layer(MT_PROJECTOR, proj2)
    m.layer(MT_TEMPLATE, TEMPLATE_TINYLLAMA.encode())
    m.layer(MT_SYSTEM, b"You are a helpful assistant.")
    m.layer(MT_LICENSE, LICENSE_MIT.encode())
    m.layer(MT_LICENSE, LICENSE_QUOTED.encode(), from_="llama3.2:1b")
    m.layer(MT_PARAMS, L.go_json({"num_ctx": 2048, "stop": ["<|user|>", "<|end|>"], "temperature": 0.6,
                                  "top_p": 0.9}, sort_keys=True) + b"\n")
    m.layer(MT_MESSAGES, L.go_json([{"role": "user", "content": "Hi <there>"},
                                    {"role": "assistant", "content": "Hello!\nHow can I help?"}]) + b"\n")
    m.finish()


ZOO_TYPES = ["F32", "F16", "BF16", "F64", "I8", "I16", "I32", "I64", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
             "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "MXFP4", "NVFP4", "IQ4_NL", "IQ4_XS",
             "TQ1_0", "TQ2_0", "Q1_0", "Q2_0", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S", "IQ1_M"]


def build_zoo(fx):
    """One small tensor of every GGML type. gguf-py 0.19 does not know Q2_0 (id 42) and has a stale
    Q8_1 block size (40 instead of 36), so this file is written with fixture_lib.gguf_write."""
    rng = np.random.default_rng(202)
    m = fx.model("registry.ollama.ai", "library", "ggml-zoo", "all",
                 "GGUF with one tensor of every GGML type; no general.file_type (variants append it)")
    tensors = []
    for tn in ZOO_TYPES:
        _, be, _ = L.GGML_TYPES[L.GGML_ID[tn]]
        if be == 1:
            ne = [8, 3]
        elif be == 256:
            ne = [256, 2]
        else:
            ne = [be * 2, 3] if be < 128 else [be, 3]
        tensors.append(ggml_tensor(rng, f"zoo.{tn.lower()}", ne, tn))
    tensors.append(ggml_tensor(rng, "zoo.q8_0_3d", [32, 2, 3], "Q8_0"))      # 3-D: shape = reversed ne
    tensors.append(ggml_tensor(rng, "zoo.q4_k_3d", [256, 1, 2], "Q4_K"))
    kvs = [("general.architecture", "STRING", "zoo"), ("general.name", "STRING", "ggml zoo \u2603"),
           ("zoo.u8", "UINT8", 200), ("zoo.i8", "INT8", -100), ("zoo.u16", "UINT16", 60000),
           ("zoo.i16", "INT16", -30000), ("zoo.u32", "UINT32", 4000000000), ("zoo.i32", "INT32", -2000000000),
           ("zoo.f32", "FLOAT32", float(np.float32(0.1))), ("zoo.bool", "BOOL", False),
           ("zoo.u64", "UINT64", 2 ** 63 + 5), ("zoo.i64", "INT64", -(2 ** 62)), ("zoo.f64", "FLOAT64", -2.5e-300),
           ("zoo.empty_string", "STRING", ""),
           ("zoo.strings", "ARRAY", ["a", "", "\u00e9t\u00e9"], "STRING"),
           ("zoo.f32s", "ARRAY", [0.5, -1.25], "FLOAT32"), ("zoo.bools", "ARRAY", [True, False], "BOOL"),
           ("zoo.empty", "ARRAY", [], "INT32")]
    data = L.gguf_write(kvs, [(n, ne, L.GGML_ID[tn], raw) for n, ne, tn, raw in tensors])
    m.set_config(gguf_config("zoo", "10K", "unknown"))
    m.layer(MT_MODEL, data)
    m.finish()


def build_llama32(fx):
    rng = np.random.default_rng(303)
    m = fx.model("registry.ollama.ai", "library", "llama3.2", "1b",
                 "GGUF with a draft layer; model blob stored under the legacy 'sha256:<hex>' file name; "
                 "legacy prompt layer; system with a leading space")
    types = dict.fromkeys(["token_embd", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
                           "ffn_down", "output"], "Q8_0")
    types.update(attn_norm="F32", ffn_norm="F32", output_norm="F32", token_embd="F16")
    model = llama_gguf(fx, rng, "Llama-3.2-1B", 64, 128, 48, 4, 2, types, file_type=7)
    draft = llama_gguf(fx, rng, "draft", 32, 64, 48, 2, 2,
                       dict(types, attn_q="F16", attn_k="F16", attn_v="F16", token_embd="F32"), file_type=1)
    m.set_config(gguf_config("llama", "1.2M", "Q8_0"))
    m.layer(MT_MODEL, model, mode="legacy")
    m.layer(MT_DRAFT, draft)
    m.layer(MT_PROMPT, b"{{ .Prompt }}")
    m.layer(MT_SYSTEM, b" You are terse.")
    m.layer(MT_LICENSE, LICENSE_QUOTED.encode())
    m.layer(MT_PARAMS, L.go_json({"num_predict": 40, "penalize_newline": True,
                                  "stop": ["<|eot_id|>"]}, sort_keys=True) + b"\n")
    m.finish()


def build_small_ggufs(fx):
    rng = np.random.default_rng(404)
    m = fx.model("registry.ollama.ai", "x", "z-image-turbo", "latest",
                 "namespace model; GGUF without quantized tensors")
    data = fx.gguf_pywriter("zimage", [("general.name", "STRING", "z-image-turbo"),
                                       ("general.file_type", "UINT32", 1)], [
        ggml_tensor(rng, "blk.0.proj.weight", [32, 16], "F16"),
        ggml_tensor(rng, "blk.0.conv.weight", [3, 3, 4, 8], "F16"),
        ggml_tensor(rng, "blk.0.proj.bias", [16], "F32"),
        ggml_tensor(rng, "pos.index", [16], "I32")])
    m.set_config(gguf_config("zimage", "528", "F16"))
    m.layer(MT_MODEL, data)
    m.finish()

    m = fx.model("hf.co", "bartowski", "Tiny-GGUF", "Q4_K_M",
                 "other host; manifest formatted like a registry (indented, extra fields); alignment 64")
    types = {"token_embd": "Q6_K", "attn_norm": "F32", "attn_q": "Q4_K", "attn_k": "Q4_K", "attn_v": "Q6_K",
             "attn_output": "Q4_K", "ffn_norm": "F32", "ffn_gate": "Q4_K", "ffn_up": "Q4_K", "ffn_down": "Q6_K",
             "output_norm": "F32", "output": "Q6_K"}
    data = llama_gguf(fx, rng, "Tiny", 256, 256, 16, 2, 2, types, file_type=15, alignment=64)
    m.set_config(gguf_config("llama", "600K", "Q4_K_M"))
    m.layer(MT_MODEL, data)
    m.layer(MT_TEMPLATE, b"{{ .Prompt }}")
    m.finish(style="registry")


# ---------------------------------------------------------------------------------------------
# safetensors models
# ---------------------------------------------------------------------------------------------

def st_config(file_type="", requires="0.19.0", capabilities=("completion",), **extra):
    c = {"model_format": "safetensors", "model_family": "", "model_families": None, "model_type": "",
         "file_type": file_type}
    if requires:
        c["requires"] = requires
    if capabilities is not None:
        c["capabilities"] = list(capabilities)
    c["architecture"] = ""
    c["os"] = ""
    c.update(extra)
    return c


def llm_config(arch="LlamaForCausalLM", **extra):
    c = {"architectures": [arch], "hidden_size": 64, "model_type": "llama", "num_hidden_layers": 2,
         "torch_dtype": "bfloat16", "vocab_size": 128}
    c.update(extra)
    return c


def build_tiny_st(fx):
    rng = np.random.default_rng(505)
    m = fx.model("registry.ollama.ai", "library", "tiny-st", "latest",
                 "current safetensors LLM: kinds A, B (int4/int8/nvfp4/mxfp4/mxfp8), C (homogeneous and "
                 "mixed expert groups), D (ModelOpt nvfp4 + global_scale), H (draft.), non-companion "
                 ".bias/.scale tensors")
    g = lambda *s: gaussian(rng, s)  # noqa: E731
    # kind A (Go writer, one tensor per blob)
    for name, arr, dt in [
            ("model.embed_tokens.weight", g(128, 64), "BF16"),
            ("model.norm.weight", 1 + g(64), "F32"),
            ("model.layers.0.input_layernorm.weight", 1 + g(64), "F16"),
            ("model.layers.0.post_attention_layernorm.weight", 1 + g(64), "BF16"),
            ("model.position_ids", np.arange(16, dtype=np.int32) * 3 - 7, "I32"),
            ("model.rope.freqs", np.array([1, 0.5, 0.25, 0.125, -3, 1.5, 96, -0.0625]), "F64"),
            ("model.layers.0.self_attn.o_proj.bias", g(64), "BF16"),          # real bias, base absent
            ("model.layers.0.router.scale", 1 + g(64), "F32")]:              # real .scale, base absent
        m.tensor_blob(name, [(lt_plain(name, arr, dt), name)])
    # a Go blob whose ".scale"/".bias" entries have an existing base that is NOT U32 -> ordinary tensors
    alt = lt_plain("model.layers.0.altup", g(4, 64), "BF16")
    alt_s = lt_plain("model.layers.0.altup.scale", 1 + g(4), "F32")
    alt_b = lt_plain("model.layers.0.altup.bias", g(4), "F32")
    m.tensor_blob("model.layers.0.altup", [(alt, alt.name), (alt_s, alt_s.name), (alt_b, alt_b.name)])
    # kind B (MLX writer, __metadata__ quant_type/group_size)
    for i, (name, shape, qt) in enumerate([
            ("model.layers.0.self_attn.q_proj.weight", (64, 128), "int4"),
            ("model.layers.0.self_attn.k_proj.weight", (32, 128), "int8"),
            ("model.layers.0.self_attn.v_proj.weight", (32, 128), "nvfp4"),
            ("model.layers.0.self_attn.o_proj.weight", (64, 64), "mxfp4"),
            ("lm_head.weight", (128, 64), "mxfp8")]):
        w = g(*shape).astype(np.float32)
        w = w.astype(L.ST_DTYPES["BF16"][0]).astype(np.float32)   # BF16 source
        if qt == "int4":
            lt, gs = lt_affine(name, w, 4, 64, "BF16", "int4"), 64
        elif qt == "int8":
            lt, gs = lt_affine(name, w, 8, 64, "BF16", "int8"), 64
        elif qt == "nvfp4":
            lt, gs = lt_nvfp4(name, w), 16
        elif qt == "mxfp4":
            lt, gs = lt_mxfp4(name, w), 32
        else:
            lt, gs = lt_mxfp8(name, w), 32
        m.tensor_blob(name, [(lt, name)], writer="mlx", metadata=qmeta(qt, gs), seed=i)
    # kind C homogeneous: one blob for the group, stacked [E, out, in], int4 g64, F16 source scales
    p0 = "model.layers.0.mlp.experts"
    parts = [(lt_affine(f"{p0}.{proj}.weight", g(2, 64, 64), 4, 64, "F16", "int4"), f"{p0}.{proj}.weight")
             for proj in ("gate_proj", "up_proj", "down_proj")]
    m.tensor_blob(p0, parts, writer="mlx", metadata=qmeta("int4", 64), seed=7)
    # kind C mixed: one blob per projection, per-tensor metadata keys
    p1 = "model.layers.1.mlp.experts"
    for i, (proj, bits, qt) in enumerate((("gate_proj", 4, "int4"), ("up_proj", 4, "int4"), ("down_proj", 8, "int8"))):
        name = f"{p1}.{proj}.weight"
        lt = lt_affine(name, g(2, 64, 64), bits, 64, "BF16", qt)
        m.tensor_blob(name, [(lt, name)], writer="mlx",
                      metadata={f"{name}.quant_type": qt, f"{name}.group_size": "64"}, seed=10 + i)
    # kind D: ModelOpt NVFP4 fused (Go writer), F32 scalar global scale, no group_size
    name = "model.layers.1.self_attn.q_proj.weight"
    lt = lt_nvfp4(name, g(32, 64) * 40, global_scale=0.0123)
    m.tensor_blob(name, [(lt, name)], writer="go", metadata={"quant_type": "nvfp4"})
    # kind H: draft tensors
    dname = "draft.model.embed_tokens.weight"
    m.tensor_blob(dname, [(lt_plain(dname, g(128, 32), "BF16"), dname)])
    dname = "draft.model.layers.0.mlp.down_proj.weight"
    m.tensor_blob(dname, [(lt_affine(dname, g(32, 64), 8, 64, "BF16", "int8"), dname)], writer="mlx",
                  metadata=qmeta("int8", 64), seed=20)
    m.json_layer("config.json", llm_config())
    m.json_layer("tokenizer.json", {"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})
    m.json_layer("draft/config.json", llm_config(hidden_size=32, num_hidden_layers=1))
    m.set_config(st_config("int4", draft={"model_format": "safetensors", "architecture": "LlamaForCausalLM",
                                          "tensor_prefix": "draft.", "config": "draft/config.json"}))
    m.layer(MT_TEMPLATE, b"{{ .Prompt }}")
    m.layer(MT_PARAMS, L.go_json({"temperature": 0.6}) + b"\n")
    m.finish()


def build_mlx_lowbit(fx):
    """Pre-quantized mlx-lm imports (kind D, mlx-lm pattern, config without "mode"): no quant metadata
    in the blobs; bits/group_size only in config.json "quantization"."""
    for bits, tag, sdt in ((3, "latest", "BF16"), (2, "2bit", "F16"), (5, "5bit", "BF16"), (6, "6bit", "F16")):
        rng = np.random.default_rng(600 + bits)
        m = fx.model("registry.ollama.ai", "library", "mlx-lowbit", tag,
                     f"mlx-lm {bits}-bit affine g64 import: no blob metadata, config.json quantization only")
        g = lambda *s: gaussian(rng, s)  # noqa: E731
        emb = lt_plain("model.embed_tokens.weight", g(32, 64), "BF16")
        m.tensor_blob(emb.name, [(emb, emb.name)])
        for name, shape in (("model.layers.0.self_attn.q_proj.weight", (8, 128)),
                            ("model.layers.0.mlp.up_proj.weight", (16, 128))):
            lt = lt_affine(name, g(*shape), bits, 64, sdt, None)
            m.tensor_blob(name, [(lt, name)], writer="go")
        q = {"group_size": 64, "bits": bits}
        m.json_layer("config.json", llm_config(quantization=q, quantization_config=q))
        m.set_config(st_config(""))
        m.finish()


def diffusers_config(cls, **extra):
    c = {"_class_name": cls, "_diffusers_version": "0.36.0"}
    c.update(extra)
    return c


def build_z_image(fx):
    rng = np.random.default_rng(707)
    m = fx.model("registry.ollama.ai", "library", "z-image", "latest",
                 "legacy v0.14 image model: \"data\" blobs, split q4/mxfp8 layers (_scale/_qbias), components")
    g = lambda *s: gaussian(rng, s)  # noqa: E731
    m.legacy_data_layers("text_encoder/model.embed_tokens.weight",
                         lt_plain("text_encoder/model.embed_tokens.weight", g(32, 64), "BF16"))
    m.legacy_data_layers("text_encoder/model.layers.0.mlp.down_proj.weight",
                         lt_affine("text_encoder/model.layers.0.mlp.down_proj.weight", g(64, 64), 4, 32, "BF16", "q4"))
    m.legacy_data_layers("text_encoder/model.norm.weight",
                         lt_plain("text_encoder/model.norm.weight", 1 + g(64), "BF16"))
    m.legacy_data_layers("transformer/blocks.0.attn.qkv.weight",
                         lt_affine("transformer/blocks.0.attn.qkv.weight", g(96, 64), 4, 32, "BF16", "q4"))
    m.legacy_data_layers("transformer/blocks.0.attn.qkv.bias", lt_plain("transformer/blocks.0.attn.qkv.bias", g(96), "BF16"))
    m.legacy_data_layers("transformer/blocks.0.ff.w1.weight", lt_mxfp8("transformer/blocks.0.ff.w1.weight", g(64, 64)))
    m.legacy_data_layers("transformer/blocks.0.norm.weight", lt_plain("transformer/blocks.0.norm.weight", 1 + g(64), "F32"))
    m.legacy_data_layers("vae/decoder.conv_in.weight", lt_plain("vae/decoder.conv_in.weight", g(8, 4, 3, 3), "F16"))
    m.legacy_data_layers("vae/decoder.conv_in.bias", lt_plain("vae/decoder.conv_in.bias", g(8), "F16"))
    mi = {"architecture": "ZImagePipeline", "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
          "text_encoder": ["transformers", "Qwen3Model"], "tokenizer": ["transformers", "Qwen2Tokenizer"],
          "transformer": ["diffusers", "ZImageTransformer2DModel"], "vae": ["diffusers", "AutoencoderKL"]}
    m.json_layer("model_index.json", raw=json.dumps(mi, indent=4).encode())
    m.json_layer("text_encoder/config.json", {"architectures": ["Qwen3Model"], "hidden_size": 64, "model_type": "qwen3"})
    m.json_layer("transformer/config.json", diffusers_config("ZImageTransformer2DModel", dim=64))
    m.json_layer("vae/config.json", diffusers_config("AutoencoderKL", latent_channels=4))
    m.json_layer("scheduler/scheduler_config.json", diffusers_config("FlowMatchEulerDiscreteScheduler", shift=3.0))
    m.json_layer("tokenizer/tokenizer.json", {"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}})
    m.set_config(st_config("q4", requires="0.14.0", capabilities=["image"], rootfs={"type": "", "diff_ids": None}))
    m.finish()


def build_old_llm(fx):
    rng = np.random.default_rng(808)
    m = fx.model("registry.ollama.ai", "library", "old-llm", "latest",
                 "legacy v0.14.3 LLM: \"data\" blobs named by tensor names, q8 (affine 8-bit g64) split layers")
    g = lambda *s: gaussian(rng, s)  # noqa: E731
    m.legacy_data_layers("model.embed_tokens.weight", lt_plain("model.embed_tokens.weight", g(32, 64), "BF16"))
    m.legacy_data_layers("model.layers.0.mlp.down_proj.weight",
                         lt_affine("model.layers.0.mlp.down_proj.weight", g(64, 128), 8, 64, "BF16", "q8"))
    m.legacy_data_layers("model.layers.0.mlp.up_proj.weight",
                         lt_affine("model.layers.0.mlp.up_proj.weight", g(128, 64), 8, 64, "BF16", "q8"))
    m.legacy_data_layers("model.norm.weight", lt_plain("model.norm.weight", 1 + g(64), "BF16"))
    m.json_layer("config.json", llm_config())
    m.set_config(st_config("q8", requires="0.14.3"))
    m.finish()


def build_flux_old(fx):
    rng = np.random.default_rng(909)
    m = fx.model("registry.ollama.ai", "x", "flux-old", "latest",
                 "kind F image model (v0.16-v0.31): quantized blobs keyed component/T, unquantized keyed bare T")
    g = lambda *s: gaussian(rng, s)  # noqa: E731
    n = "transformer/double_blocks.0.img_attn.qkv.weight"
    m.tensor_blob(n, [(lt_affine(n, g(96, 64), 4, 32, "BF16", "int4"), n)], writer="mlx", metadata=qmeta("int4", 32))
    for n, arr, dt in (("transformer/double_blocks.0.img_attn.norm.query_norm.scale", 1 + g(16), "F32"),
                       ("transformer/img_in.weight", g(64, 32), "BF16"),
                       ("transformer/img_in.bias", g(64), "BF16"),
                       ("text_encoder/shared.weight", g(32, 64), "BF16")):
        bare = n.split("/", 1)[1]
        m.tensor_blob(n, [(lt_plain(n, arr, dt), bare)])
    n = "text_encoder/encoder.block.0.layer.0.SelfAttention.q.weight"
    m.tensor_blob(n, [(lt_affine(n, g(64, 128), 8, 64, "BF16", "int8"), n)], writer="mlx", metadata=qmeta("int8", 64),
                  seed=3)
    m.json_layer("model_index.json", raw=json.dumps(
        {"architecture": "FluxPipeline", "parameter_count": 20000, "quantization": "INT4",
         "transformer": ["diffusers", "FluxTransformer2DModel"], "text_encoder": ["transformers", "T5EncoderModel"]},
        indent=4).encode())
    m.json_layer("transformer/config.json", diffusers_config("FluxTransformer2DModel", num_layers=1))
    m.json_layer("text_encoder/config.json", {"architectures": ["T5EncoderModel"], "d_model": 64, "model_type": "t5"})
    m.set_config(st_config("int4", requires="0.16.0", capabilities=["image"]))
    m.finish()


def build_moe_old(fx):
    rng = np.random.default_rng(1010)
    m = fx.model("registry.ollama.ai", "library", "moe-old", "latest",
                 "kind G packed expert blobs: per-expert 2-D tensors with null metadata (shape inference), "
                 "v0.18.3 switch_mlp stacked blob, unquantized packed experts")
    g = lambda *s: gaussian(rng, s)  # noqa: E731
    emb = lt_plain("model.embed_tokens.weight", g(32, 64), "BF16")
    m.tensor_blob(emb.name, [(emb, emb.name)])
    parts = []
    for e in range(2):
        for proj, bits, gs in (("gate_proj", 4, 32), ("up_proj", 4, 32), ("down_proj", 8, 64)):
            n = f"model.layers.0.mlp.experts.{e}.{proj}.weight"
            parts.append((lt_affine(n, g(64, 64), bits, gs, "BF16", None), n))
    m.tensor_blob("model.layers.0.mlp.experts", parts, writer="mlx", metadata=None, seed=5)
    parts = []
    for proj in ("gate_proj", "up_proj", "down_proj"):
        n = f"model.layers.1.mlp.switch_mlp.{proj}.weight"
        parts.append((lt_affine(n, g(2, 64, 64), 4, 64, "BF16", "int4"), n))
    m.tensor_blob("model.layers.1.mlp.experts", parts, writer="mlx", metadata=qmeta("int4", 64), seed=6)
    parts = []
    for e in range(2):
        for proj in ("gate_proj", "up_proj", "down_proj"):
            n = f"model.layers.2.mlp.experts.{e}.{proj}.weight"
            parts.append((lt_plain(n, g(16, 64) if proj != "down_proj" else g(64, 16), "BF16"), n))
    m.tensor_blob("model.layers.2.mlp.experts", parts, writer="go")
    nrm = lt_plain("model.norm.weight", 1 + g(64), "BF16")
    m.tensor_blob(nrm.name, [(nrm, nrm.name)])
    m.json_layer("config.json", llm_config("Qwen3MoeForCausalLM", num_experts=2, model_type="qwen3_moe"))
    m.set_config(st_config("int4", requires="0.18.3"))
    m.finish()


def build_param_mt(fx):
    rng = np.random.default_rng(1111)
    m = fx.model("registry.ollama.ai", "library", "param-mt", "latest",
                 "tensor layers described by media-type parameters instead of a name field")
    g = lambda *s: gaussian(rng, s)  # noqa: E731
    nrm = lt_plain("model.norm.weight", 1 + g(64), "BF16")
    m.tensor_blob(None, [(nrm, nrm.name)], media_type=f"{MT_TENSOR}; name=model.norm.weight; dtype=BF16; shape=64")
    emb = lt_plain("model.embed_tokens.weight", g(16, 64), "F16")
    m.tensor_blob(None, [(emb, emb.name)],
                  media_type=f"{MT_TENSOR};name=model.embed_tokens.weight;dtype=F16;shape=16,64")
    lm = lt_plain("lm_head.weight", g(16, 64), "F16")
    m.tensor_blob(lm.name, [(lm, lm.name)])
    m.json_layer("config.json", llm_config())
    m.set_config(st_config(""))
    m.finish()


# ---------------------------------------------------------------------------------------------
# transformers end-to-end models
# ---------------------------------------------------------------------------------------------

E2E_INPUT_IDS = [[1, 17, 42, 99, 5, 127, 64, 3, 88, 23]]
E2E_ATOL = 0.02   # max |logits(int8) - logits(original)|; measured ~6e-3 for this model (|logits| <~ 0.5)


def build_tiny_llama_st(fx):
    import torch
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=4, vocab_size=128, max_position_embeddings=64, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg)
    hf = os.path.join(fx.tmp, "hf")
    model.save_pretrained(hf)
    with open(os.path.join(hf, "config.json"), "rb") as f:
        config_bytes = f.read()
    sd = {k: v.detach().contiguous().numpy().astype(np.float32) for k, v in model.state_dict().items()}

    def logits_for(weights):
        d = tempfile.mkdtemp(dir=fx.tmp)
        with open(os.path.join(d, "config.json"), "wb") as f:
            f.write(config_bytes)
        save_file({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in weights.items()},
                  os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
        return L.e2e_logits(d, E2E_INPUT_IDS)

    ref = logits_for(sd)
    # unquantized F32 model, kind A blobs
    m = fx.model("registry.ollama.ai", "library", "tiny-llama-st", "latest",
                 "transformers LlamaForCausalLM (seed 0), F32 kind A blobs: from_pretrained(dir/fp32)")
    for k in sorted(sd):
        m.tensor_blob(k, [(lt_plain(k, sd[k], "F32"), k)])
    m.json_layer("config.json", raw=config_bytes)
    m.set_config(st_config(""))
    m.finish()
    ref_rel = fx.oracle(m.dir, "logits", ref)
    fx.e2e[m.dir] = {"input_ids": E2E_INPUT_IDS, "logits_exact": ref_rel, "logits_close": None, "atol": None}

    # int8 g64 (MLX quantizer) of the 2-D projections, kind B blobs
    m = fx.model("registry.ollama.ai", "library", "tiny-llama-st", "int8",
                 "same model, q/k/v/o/gate/up/down quantized int8 g64 (F32 scales) into kind B blobs")
    deq = {}
    for i, k in enumerate(sorted(sd)):
        if k.endswith("_proj.weight"):
            lt = lt_affine(k, sd[k], 8, 64, "F32", "int8")
            deq[k] = lt.oracle
            m.tensor_blob(k, [(lt, k)], writer="mlx", metadata=qmeta("int8", 64), seed=i)
        else:
            deq[k] = sd[k]
            m.tensor_blob(k, [(lt_plain(k, sd[k], "F32"), k)])
    m.json_layer("config.json", raw=config_bytes)
    m.set_config(st_config("int8"))
    m.finish()
    q = logits_for(deq)
    diff = float(np.abs(q - ref).max())
    assert diff <= E2E_ATOL, f"int8 logits differ by {diff} > {E2E_ATOL}"
    fx.e2e[m.dir] = {"input_ids": E2E_INPUT_IDS, "logits_exact": fx.oracle(m.dir, "logits_dequant", q),
                     "logits_close": ref_rel, "atol": E2E_ATOL, "measured_max_abs_diff": diff}


# ---------------------------------------------------------------------------------------------
# bad cases and junk
# ---------------------------------------------------------------------------------------------

def tiny_gguf(fx, rng, name):
    return fx.gguf_pywriter("llama", [("general.name", "STRING", name), ("general.file_type", "UINT32", 7)], [
        ggml_tensor(rng, "blk.0.attn_q.weight", [64, 8], "Q8_0"),
        ggml_tensor(rng, "blk.0.attn_norm.weight", [64], "F32")])


def raw_st(header_obj, data: bytes) -> bytes:
    h = json.dumps(header_obj, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + data


def build_bad(fx):
    rng = np.random.default_rng(1212)
    # corrupt manifest -> model absent
    p = os.path.join(fx.store, "manifests/registry.ollama.ai/library/corrupt/latest")
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(b'{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"med')
    fx.absent_models.append("corrupt")

    # missing model blob; the right bytes exist only under junk names (-partial, .tmp)
    m = fx.model("registry.ollama.ai", "library", "missing-blob", "latest",
                 "GGUF whose model blob is missing: model.gguf listed (manifest size), ENOENT on read")
    data = tiny_gguf(fx, rng, "missing")
    hexd = L.sha256_hex(data)
    m.set_config(gguf_config("llama", "520", "Q8_0"))
    m.layer(MT_MODEL, data, mode="missing")
    m.layer(MT_TEMPLATE, b"{{ .Prompt }}")
    m.finish()
    fx.junk_file(f"blobs/sha256-{hexd}-partial", data, "in-progress download of missing-blob's model blob")
    fx.junk_file(f"blobs/sha256-{hexd}-partial-0",
                 b'{"N":0,"Offset":0,"Size":%d,"Completed":0}' % len(data), "download part descriptor")
    fx.junk_file(f"blobs/sha256-{hexd}.tmp", data, "resumable tensor download")
    fx.junk_file("blobs/sha256-1234567", b"temp", "CreateTemp file while hashing a layer")

    m = fx.model("registry.ollama.ai", "library", "truncated", "latest",
                 "GGUF whose model blob is shorter than the manifest size: EIO on read")
    m.set_config(gguf_config("llama", "520", "Q8_0"))
    m.layer(MT_MODEL, tiny_gguf(fx, rng, "truncated"), mode="truncated")
    m.finish()

    # safetensors model with one missing tensor blob
    m = fx.model("registry.ollama.ai", "library", "st-missing", "latest",
                 "safetensors model whose root tensor blob b.weight is missing; component extra/ intact")
    a = lt_plain("a.weight", gaussian(rng, (4, 8)), "BF16")
    m.tensor_blob("a.weight", [(a, "a.weight")])
    b = lt_plain("b.weight", gaussian(rng, (4, 8)), "BF16")
    m.tensor_blob("b.weight", [(b, "b.weight")], mode="missing")
    c = lt_plain("extra/c.weight", gaussian(rng, (4, 8)), "BF16")
    m.tensor_blob("extra/c.weight", [(c, "c.weight")])
    m.broken_components.add("")
    m.json_layer("config.json", llm_config())
    m.set_config(st_config(""))
    m.finish()

    # hostile tensor blobs: passthrough only, their component's converted files absent
    m = fx.model("registry.ollama.ai", "library", "st-hostile", "latest",
                 "hostile blob headers (overlap, '..' key, huge shape): tensors/ passthrough, component views absent")
    good = lt_plain("good.weight", gaussian(rng, (4, 8)), "BF16")
    m.tensor_blob("good.weight", [(good, "good.weight")])
    overlap = raw_st({"t.weight": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                      "u.weight": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, bytes(range(24)))
    m.layer(MT_TENSOR, overlap, name="overlap/t.weight")
    dotdot = raw_st({"../../evil.weight": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}, bytes(8))
    m.layer(MT_TENSOR, dotdot, name="dotdot/evil.weight")
    huge = raw_st({"h.weight": {"dtype": "F32", "shape": [2 ** 32, 2 ** 32, 2 ** 32], "data_offsets": [0, 16]}},
                  bytes(16))
    m.layer(MT_TENSOR, huge, name="huge/h.weight")
    m.broken_components |= {"overlap", "dotdot", "huge"}
    m.json_layer("config.json", llm_config())
    m.set_config(st_config(""))
    m.finish()


def build_junk_manifests(fx):
    rng = np.random.default_rng(1313)
    data = tiny_gguf(fx, rng, "junk")
    d = fx.put_blob(data)
    cfg = L.go_json(gguf_config("llama", "520", "Q8_0"))
    c = fx.put_blob(cfg)
    man = L.go_json({"schemaVersion": 2, "mediaType": MANIFEST_MT,
                     "config": {"mediaType": MT_CONFIG, "digest": c, "size": len(cfg)},
                     "layers": [{"mediaType": MT_MODEL, "digest": d, "size": len(data)}]}) + b"\n"
    for rel, why, absent in (
            ("manifests/registry.ollama.ai/library/shallow", "manifest at depth 3", ["shallow"]),
            ("manifests/registry.ollama.ai/library/deep/v1/latest", "manifest at depth 5 (deep/v1 is a dir at depth 4)",
             ["deep", "deep:v1", "deep/v1"]),
            ("manifests/registry.ollama.ai/library/bad name!/latest", "invalid model name part", ["bad name!"]),
            ("manifests/registry.ollama.ai/bad.ns/model/latest", "'.' is not allowed in a namespace",
             ["bad.ns", "bad.ns/model"]),
            ("manifests/-badhost/ns/m/latest", "host must start with [A-Za-z0-9_]", ["-badhost"])):
        fx.junk_file(rel, man, why)
        fx.absent_models += absent
    os.makedirs(os.path.join(fx.manifests, "registry.ollama.ai/library/emptydir/latest"), exist_ok=True)
    fx.junk.append({"path": "store/manifests/registry.ollama.ai/library/emptydir/latest/", "why": "directory at depth 4"})
    fx.absent_models += ["emptydir", "emptydir:latest"]


def build_hf_ggufs(fx):
    """GGUF models converted by llama.cpp's converter from tiny HF models (hf_gguf_fixtures.py), whose
    Hugging Face folders check_hf_gguf.py compares with the HF sources kept under OUT/hf-src/."""
    import hf_gguf_fixtures as HG
    built = HG.build_ggufs(HG.CASES, os.path.join(fx.out, "hf-src"))
    for name, tag, kind, tname, _ in HG.CASES:
        hf_dir, data = built[(name, tag)]
        m = fx.model("registry.ollama.ai", "library", name, tag,
                     f"GGUF ({tname}) converted by llama.cpp from a tiny HF {kind}: Hugging Face folder")
        m.set_config(gguf_config(kind, "1M", tname))
        m.layer(MT_MODEL, data)
        m.finish()
        fx.hf_gguf[m.dir] = {"source": os.path.relpath(hf_dir, fx.out), "kind": kind, "ggml_type": tname,
                             "gguf_loader": (name, tag) not in HG.NO_GGUF_LOADER}
    # a GGUF model with a GGUF draft layer (`ollama create` with a DRAFT line, server/create.go
    # convertDraftModelFromFiles): the draft's folder draft/ is a Hugging Face folder of its own
    target, draft = built[("hf-qwen3", "f16")], built[("hf-llama", "f32")]
    m = fx.model("registry.ollama.ai", "library", "hf-qwen3", "draft",
                 "GGUF qwen3 (F16) with a GGUF llama draft layer (F32): draft/ is the draft's Hugging Face folder")
    m.set_config(dict(gguf_config("qwen3", "1M", "F16"), draft={"model_format": "gguf", "architecture": "llama"}))
    m.layer(MT_MODEL, target[1])
    m.layer(MT_DRAFT, draft[1])
    m.finish()
    fx.hf_gguf[m.dir + "/draft"] = {"source": os.path.relpath(draft[0], fx.out), "kind": "llama", "ggml_type": "F32",
                                    "gguf_loader": True}


def main(argv):
    import layouts_fixture
    if len(argv) != 2:
        print("usage: make_fixture.py OUT", file=sys.stderr)
        return 2
    out = argv[1]
    if os.path.exists(out) and os.listdir(out):
        print(f"make_fixture: {out} exists and is not empty", file=sys.stderr)
        return 2
    fx = Fixture(out)
    build_tinyllama(fx)
    build_zoo(fx)
    build_llama32(fx)
    build_small_ggufs(fx)
    build_tiny_st(fx)
    build_mlx_lowbit(fx)
    build_z_image(fx)
    build_old_llm(fx)
    build_flux_old(fx)
    build_moe_old(fx)
    build_param_mt(fx)
    build_tiny_llama_st(fx)
    layouts_fixture.build_mixed(fx)
    layouts_fixture.build_modelopt(fx)
    layouts_fixture.build_nvfp4_experts(fx)
    build_bad(fx)
    build_hf_ggufs(fx)
    build_junk_manifests(fx)
    fx.finish()
    print(f"fixture written to {fx.out}: {len(fx.models)} model dirs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
