#!/usr/bin/env python3
"""Converted-file checks of a modelfs mount against OUT/expected.json (see make_fixture.py).

    check_views.py MOUNT OUT

* safetensors.safe_open(path, 'np') and safe_open(path, 'pt') open every *.safetensors found by
  walking the mount (get_tensor of every tensor; 'np' skips the dtypes numpy cannot represent);
* every expected converted safetensors file: strict header validation (FORMATS 8.2),
  __metadata__["format"] == "pt", exact key set, dtype and shape of every tensor, and its bytes:
  as-stored tensors and unconverted tensors byte-equal to the source, converted tensors equal to the
  float32 oracle (F32: exact bits; F16/BF16: the bits of the oracle rounded once, to nearest even);
  the bytes read through safe_open 'pt' (and 'np') equal the raw bytes;
* every expected model.{fp32,fp16,bf16}.gguf: gguf.GGUFReader opens it; KVs equal the expected list
  (= the source's, general.file_type set/appended), same version and alignment, tensor names/order/ne
  as the source, converted types F32/F16/BF16 with oracle data, unconverted tensors byte-equal;
  the strict reader confirms ggml's sequential-offset layout;
* converted files listed as absent do not exist;
* a few files are read through np.memmap on the mount and a slice compared.
Prints one line per failed check and ends with "N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

NP_UNSUPPORTED = {"BF16", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "F4", "F6_E2M3",
                  "F6_E3M2", "C64"}


class Oracles:
    def __init__(self, out):
        self.out = out
        self.cache = {}

    def bytes_for(self, t, dtype):
        key = (t["oracle"], dtype)
        if key not in self.cache:
            self.cache[key] = L.f32_to_dtype_bytes(np.load(os.path.join(self.out, t["oracle"])), dtype)
        return self.cache[key]

    def array(self, t):
        return np.load(os.path.join(self.out, t["oracle"]))


def describe_mismatch(got: bytes, want: bytes, dtype: str) -> str:
    if len(got) != len(want):
        return f"{len(got)} bytes, expected {len(want)}"
    npdt = L.ST_DTYPES[dtype][0] if dtype in L.ST_DTYPES else None
    if npdt is None:
        return "bytes differ"
    g = np.frombuffer(got, dtype=npdt)
    w = np.frombuffer(want, dtype=npdt)
    gi = np.frombuffer(got, dtype=np.uint8).reshape(len(g), -1)
    wi = np.frombuffer(want, dtype=np.uint8).reshape(len(w), -1)
    bad = np.nonzero((gi != wi).any(axis=1))[0]
    i = int(bad[0])
    def fmt(v):
        return repr(float(v)) if np.issubdtype(np.asarray(v).dtype, np.floating) or dtype == "BF16" else repr(int(v))
    return (f"{len(bad)} of {len(g)} elements differ; first at flat index {i}: got {fmt(g[i])} "
            f"(0x{gi[i][::-1].tobytes().hex()}), expected {fmt(w[i])} (0x{wi[i][::-1].tobytes().hex()})")


def torch_bytes(x) -> bytes:
    import torch
    x = x.contiguous()
    if x.dim() == 0:
        x = x.reshape(1)
    return x.view(torch.uint8).numpy().tobytes()


def read_checked(r: L.Report, what, path):
    """Read the whole file; st_size must equal the number of bytes read."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as e:
        r.fail(f"{what}: cannot read ({e})")
        return None
    r.ok(size == len(buf), f"{what}: st_size {size} but {len(buf)} bytes read")
    return buf


def check_safetensors_file(r: L.Report, oracles, what, path, conv):
    buf = read_checked(r, what, path)
    if buf is None:
        return False
    try:
        p = L.st_parse(buf)
    except L.SafetensorsError as e:
        r.fail(f"{what}: invalid safetensors file: {e}")
        return False
    meta = p["metadata"] or {}
    r.ok(meta.get("format") == "pt", f"{what}: __metadata__ {p['metadata']!r} lacks \"format\":\"pt\"")
    want = conv["tensors"]
    got_keys, want_keys = set(p["tensors"]), set(want)
    r.ok(got_keys == want_keys, f"{what}: keys differ: extra {sorted(got_keys - want_keys)[:8]}, "
                                f"missing {sorted(want_keys - got_keys)[:8]}")
    for k in sorted(want_keys & got_keys):
        t, g = want[k], p["tensors"][k]
        tw = f"{what}: {k}"
        if not r.ok(g["dtype"] == t["dtype"], f"{tw}: dtype {g['dtype']}, expected {t['dtype']}"):
            continue
        if not r.ok(g["shape"] == t["shape"], f"{tw}: shape {g['shape']}, expected {t['shape']}"):
            continue
        b = L.st_tensor_bytes(buf, p, k)
        if "oracle" in t:
            exp = oracles.bytes_for(t, t["dtype"])
            r.ok(b == exp, f"{tw}: values differ from the oracle ({t.get('oracle_from', '')}): "
                           + (describe_mismatch(b, exp, t["dtype"]) if b != exp else ""))
        else:
            r.ok(L.sha256_hex(b) == t["sha256"], f"{tw}: stored bytes differ from the source {t.get('source')}")
    return True


def check_with_safe_open(r: L.Report, what, path, converted: bool):
    """Open with safetensors' own readers ('pt' and 'np') and compare every tensor's bytes with the
    bytes at its data_offsets; generated (converted) files must carry metadata format=pt."""
    from safetensors import safe_open
    try:
        with open(path, "rb") as f:
            buf = f.read()
        hdr = L.st_parse(buf, strict=False)
    except Exception as e:  # noqa: BLE001
        r.fail(f"{what}: cannot parse the header: {e}")
        return
    dtypes = {k: v["dtype"] for k, v in hdr["tensors"].items()}
    for fw in ("pt", "np"):
        try:
            with safe_open(path, fw) as f:
                keys = set(f.keys())
                r.ok(keys == set(dtypes), f"{what}: safe_open({fw!r}) keys differ from the header")
                for k in sorted(keys):
                    if fw == "np" and dtypes.get(k) in NP_UNSUPPORTED:
                        continue
                    x = f.get_tensor(k)
                    b = torch_bytes(x) if fw == "pt" else np.ascontiguousarray(x).tobytes()
                    if k in dtypes:
                        r.ok(b == L.st_tensor_bytes(buf, hdr, k),
                             f"{what}: safe_open({fw!r}).get_tensor({k!r}) bytes differ from the file")
                if fw == "pt" and converted:
                    md = f.metadata() or {}
                    r.ok(md.get("format") == "pt", f"{what}: safe_open('pt').metadata() = {md!r}, needs format=pt")
            r.ok(True, "")
        except Exception as e:  # noqa: BLE001
            r.fail(f"{what}: safetensors.safe_open({fw!r}) failed: {type(e).__name__}: {e}")


def gguf_field_value(field):
    from gguf import GGUFValueType
    t0 = field.types[0]
    if t0 == GGUFValueType.ARRAY:
        sub = field.types[-1] if len(field.types) > 1 else None
        vals = field.contents() if field.data else []
        return "ARRAY", {"type": sub.name if sub is not None else None, "values": list(vals)}
    return t0.name, field.contents()


def values_equal(vt, a, b):
    if vt in ("FLOAT32", "FLOAT64"):
        return float(a) == float(b) or (a != a and b != b)
    if vt == "ARRAY":
        if a["type"] != b["type"] and len(b["values"]) > 0:
            return False
        if len(a["values"]) != len(b["values"]):
            return False
        return all(values_equal(b["type"], x, y) for x, y in zip(a["values"], b["values"]))
    if vt == "BOOL":
        return bool(a) == bool(b)
    return a == b


def check_gguf_file(r: L.Report, oracles, what, path, conv):
    import gguf
    try:
        rd = gguf.GGUFReader(path)
    except Exception as e:  # noqa: BLE001
        r.fail(f"{what}: gguf.GGUFReader cannot open it: {type(e).__name__}: {e}")
        return
    r.ok(rd.alignment == conv["alignment"], f"{what}: alignment {rd.alignment}, expected {conv['alignment']}")
    ver = rd.fields.get("GGUF.version")
    r.ok(ver is not None and int(ver.parts[ver.data[0]][0]) == conv["version"],
         f"{what}: GGUF version differs from the source ({conv['version']})")
    got = [(name, *gguf_field_value(f)) for name, f in rd.fields.items() if not name.startswith("GGUF.")]
    want = conv["kvs"]
    r.ok([g[0] for g in got] == [w[0] for w in want],
         f"{what}: KV keys/order differ: got {[g[0] for g in got]}, expected {[w[0] for w in want]}")
    wd = {w[0]: w for w in want}
    for k, vt, v in got:
        if k not in wd:
            continue
        _, wvt, wv = wd[k]
        if r.ok(vt == wvt, f"{what}: KV {k} has type {vt}, expected {wvt}"):
            r.ok(values_equal(vt, v, wv), f"{what}: KV {k} = {str(v)[:80]}, expected {str(wv)[:80]}")
    names = [t.name for t in rd.tensors]
    r.ok(names == [t["name"] for t in conv["tensors"]], f"{what}: tensor names/order differ from the source")
    buf = read_checked(r, what, path)
    if buf is None:
        return
    try:
        g = L.gguf_read(buf)
        strict = {t["name"]: t for t in g["tensors"]}
        r.ok(True, "")
    except Exception as e:  # noqa: BLE001
        r.fail(f"{what}: violates ggml's GGUF layout rules: {type(e).__name__}: {e}")
        return
    rdt = {t.name: t for t in rd.tensors}
    for t in conv["tensors"]:
        tw = f"{what}: {t['name']}"
        if t["name"] not in rdt or t["name"] not in strict:
            continue
        x, s = rdt[t["name"]], strict[t["name"]]
        r.ok([int(v) for v in x.shape] == t["ne"], f"{tw}: ne {[int(v) for v in x.shape]}, expected {t['ne']}")
        if not r.ok(x.tensor_type.name == t["type"], f"{tw}: type {x.tensor_type.name}, expected {t['type']}"):
            continue
        b = L.gguf_tensor_bytes(buf, g, s)
        r.ok(np.asarray(x.data).tobytes() == b, f"{tw}: GGUFReader data differs from the file bytes")
        if "oracle" in t:
            exp = oracles.bytes_for(t, t["type"])
            r.ok(b == exp, f"{tw}: values differ from the oracle ({t.get('oracle_from', '')}, source type "
                           f"{t.get('source_type')}): " + (describe_mismatch(b, exp, t["type"]) if b != exp else ""))
        else:
            r.ok(L.sha256_hex(b) == t["sha256"], f"{tw}: unconverted tensor bytes differ from the source")


def check_memmap(r: L.Report, mount, exp, oracles):
    """np.memmap a few files on the mount and compare slices with plain reads / expectations."""
    picks = []
    for d, m in exp["models"].items():
        for rel, f in m["files"].items():
            if rel.endswith(".gguf") and len([p for p in picks if p[2] == "gguf"]) < 2:
                picks.append((d, rel, "gguf"))
        for rel, c in m["converted"].items():
            if c["kind"] == "safetensors" and c["variant"] == "fp32" and len([p for p in picks if p[2] == "st"]) < 3:
                picks.append((d, rel, "st"))
    n = 0
    for d, rel, kind in picks:
        what = f"{d}/{rel}"
        if not os.path.isfile(os.path.join(mount, d, rel)):
            continue   # already reported as missing
        try:
            n += memmap_one(r, os.path.join(mount, d, rel), what, kind, exp["models"][d], rel, oracles)
        except Exception as e:  # noqa: BLE001
            r.fail(f"{what}: np.memmap check failed: {type(e).__name__}: {e}")
    r.ok(n >= 3, f"np.memmap checked only {n} files")


def memmap_one(r, p, what, kind, model, rel, oracles):
    """np.memmap one file on the mount: a slice must equal read(); for a converted fp32 file, the first
    oracle tensor read through a typed memmap must equal the oracle bits."""
    mm = np.memmap(p, dtype=np.uint8, mode="r")
    with open(p, "rb") as f:
        data = f.read()
    a, b = len(data) // 3, len(data) // 3 + 4096
    r.ok(mm[a:b].tobytes() == data[a:b], f"{what}: np.memmap slice [{a}:{b}] differs from read()")
    if kind == "st":
        pr = L.st_parse(data)
        conv = model["converted"][rel]
        for k, t in conv["tensors"].items():
            if "oracle" in t and k in pr["tensors"] and pr["tensors"][k]["dtype"] == "F32":
                s = pr["data_start"] + pr["tensors"][k]["data_offsets"][0]
                arr = np.memmap(p, dtype="<f4", mode="r", offset=s, shape=tuple(t["shape"]))
                want = oracles.array(t)
                r.ok(np.array_equal(np.asarray(arr).view(np.uint32), want.view(np.uint32)),
                     f"{what}: np.memmap of {k} differs from the oracle")
                break
    del mm
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mount")
    ap.add_argument("out")
    a = ap.parse_args()
    r = L.Report("check_views")
    try:
        exp = L.load_expected(a.out)
    except Exception as e:  # noqa: BLE001
        r.fail(f"cannot load {a.out}/expected.json: {e}")
        return r.finish()
    mount = os.path.abspath(a.mount)
    if not r.ok(os.path.isdir(mount), f"mount point {mount} is not a directory"):
        return r.finish()
    oracles = Oracles(a.out)
    n_st = n_gg = 0
    want_st = sum(1 for m in exp["models"].values() for c in m["converted"].values() if c["kind"] == "safetensors")
    want_gg = sum(1 for m in exp["models"].values() for c in m["converted"].values() if c["kind"] == "gguf")
    checked = set()
    for d, m in exp["models"].items():
        for rel, conv in m["converted"].items():
            p = os.path.join(mount, d, rel)
            what = f"{d}/{rel}"
            st = L.stat_read_only_file(r, p, what)
            if st is None:
                continue
            if conv["kind"] == "safetensors":
                if check_safetensors_file(r, oracles, what, p, conv):
                    checked.add(f"{d}/{rel}")
                    n_st += 1
            else:
                check_gguf_file(r, oracles, what, p, conv)
                n_gg += 1
        for rel in m["absent"]:
            if rel.endswith(".safetensors") or rel.endswith(".gguf"):
                r.ok(not os.path.lexists(os.path.join(mount, d, rel)), f"{d}/{rel}: must not exist")
    r.ok(n_st == want_st, f"checked {n_st} of {want_st} expected converted safetensors files")
    r.ok(n_gg == want_gg, f"checked {n_gg} of {want_gg} expected converted GGUF files")

    # every safetensors file on the mount opens with the reference library
    errors = {f"{d}/{rel}" for d, m in exp["models"].items() for rel in m["errors"]}
    invalid = {f"{d}/{rel}" for d, m in exp["models"].items() for rel, f in m["files"].items()
               if f.get("safetensors_valid") is False}
    found = 0
    for rel, p in L.walk_files(mount):
        if rel.endswith(".safetensors") and rel not in errors and rel not in invalid:
            check_with_safe_open(r, rel, p, rel in checked)
            found += 1
    r.ok(found >= want_st, f"walk found {found} .safetensors files, expected at least {want_st}")
    check_memmap(r, mount, exp, oracles)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
