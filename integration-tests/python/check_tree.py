#!/usr/bin/env python3
"""Foundation checks of a modelfs mount against OUT/expected.json (see make_fixture.py).

    check_tree.py MOUNT OUT [--store PATH] [--reference]

* the mount root and the namespace/host folders list exactly the expected names; models that
  must be absent are absent;
* every expected directory is a directory with mode 0555; every expected file is a regular file
  with mode 0444, exact st_size, and the sha256 of the bytes read equals the expected one;
  ollama/Modelfile has the exact expected text (FROM lines use --store, default abspath(OUT/store));
* paths under "errors" are listed with the manifest's size and open+read fails with that errno;
* paths under "absent" do not exist; no model directory holds a file expected.json does not know;
* gguf.GGUFReader opens every *.gguf found by walking the mount and its tensor count matches
  (GGUF files holding types gguf-py 0.19 cannot parse -- Q2_0, the 36-byte Q8_1 -- are read with
  fixture_lib's strict reader instead, which also checks every other GGUF);
* writes fail with EROFS: open(...,'w'), creating a file, os.mkdir, os.unlink, os.rename, os.rmdir.

--reference: for a plain directory built by materialize_expected.py: the ENOENT/EIO paths cannot
exist there, so their checks are skipped (reported as skipped, never counted as passed).
Prints one line per failed check and ends with "N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import argparse
import errno
import fnmatch
import hashlib
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402


def read_all(path):
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
    return n, h.hexdigest()


def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return e


def first_diff_line(a: str, b: str):
    al, bl = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"line {i + 1}: got {x!r}, expected {y!r}"
    return f"line count: got {len(al)}, expected {len(bl)}"


def check_dir(r: L.Report, path, what):
    try:
        st = os.lstat(path)
    except OSError as e:
        r.fail(f"{what}: missing directory ({e.strerror})")
        return False
    if not r.ok(stat.S_ISDIR(st.st_mode), f"{what}: not a directory"):
        return False
    r.ok(stat.S_IMODE(st.st_mode) == 0o555, f"{what}: directory mode {oct(stat.S_IMODE(st.st_mode))}, expected 0o555")
    return True


def check_model(r: L.Report, mount, d, m, store_now, store_then, reference):
    base = os.path.join(mount, d)
    if not check_dir(r, base, f"{d}/"):
        return 0
    for sub in m["dirs"]:
        check_dir(r, os.path.join(base, sub), f"{d}/{sub}/")
    n = 0
    for rel, f in m["files"].items():
        p = os.path.join(base, rel)
        what = f"{d}/{rel}"
        st = L.stat_read_only_file(r, p, what)
        if st is None:
            continue
        if "variant_config_of" in f:      # the top folder's config.json (itself checked) with the folder's dtype
            check_variant_config(r, p, os.path.join(base, f["variant_config_of"]), f["variant"], st, what)
            n += 1
            continue
        exp_size, exp_sha = f["size"], f["sha256"]
        exp_text = f.get("text")
        if exp_text is not None and store_now != store_then:
            exp_text = exp_text.replace(f" {store_then}/blobs/", f" {store_now}/blobs/")
            exp_size, exp_sha = len(exp_text.encode()), L.sha256_hex(exp_text.encode())
        r.ok(st.st_size == exp_size, f"{what}: st_size {st.st_size}, expected {exp_size}")
        try:
            if exp_text is not None:
                with open(p, "rb") as fh:
                    got = fh.read()
                got_n, got_sha = len(got), L.sha256_hex(got)
                if got_sha != exp_sha:
                    try:
                        r.fail(f"{what}: text differs: {first_diff_line(got.decode(), exp_text)}")
                    except UnicodeDecodeError:
                        r.fail(f"{what}: not UTF-8")
                    continue
            else:
                got_n, got_sha = read_all(p)
        except OSError as e:
            r.fail(f"{what}: read failed: {e}")
            continue
        r.ok(got_n == exp_size, f"{what}: read {got_n} bytes, expected {exp_size}")
        r.ok(got_sha == exp_sha, f"{what}: sha256 of the content {got_sha[:16]}..., expected {exp_sha[:16]}..."
             + (f" (blob {f['blob']})" if "blob" in f else ""))
        n += 1
    for rel, e in m["errors"].items():
        what = f"{d}/{rel}"
        if reference:
            r.skip(3)
            continue
        p = os.path.join(base, rel)
        parent = listing(os.path.dirname(p))
        r.ok(not isinstance(parent, OSError) and os.path.basename(p) in parent,
             f"{what}: not listed in its directory (expected a {e['errno']} file)")
        try:
            st = os.stat(p)
            r.ok(st.st_size == e["size"], f"{what}: st_size {st.st_size}, expected the manifest size {e['size']}")
        except OSError as ex:
            r.fail(f"{what}: stat failed ({ex.strerror}); expected the manifest size {e['size']}")
        want = getattr(errno, e["errno"])
        try:
            with open(p, "rb") as fh:
                got = b""
                while True:
                    b = fh.read(1 << 16)
                    if not b:
                        break
                    got += b
            r.fail(f"{what}: read {len(got)} bytes, expected {e['errno']}")
        except OSError as ex:
            r.ok(ex.errno == want, f"{what}: got {errno.errorcode.get(ex.errno, ex.errno)}, expected {e['errno']}")
    for rel in m["absent"]:
        r.ok(not os.path.lexists(os.path.join(base, rel)), f"{d}/{rel}: must not exist")
    # nothing unknown inside the model directory
    known = set(m["files"]) | set(m["errors"]) | set(m["converted"])
    for dirpath, dirnames, filenames in os.walk(base):
        reld = os.path.relpath(dirpath, base)
        for fn in filenames:
            rel = fn if reld == "." else f"{reld}/{fn}"
            if rel in known or any(fnmatch.fnmatchcase(rel, g) for g in m.get("optional", [])):
                continue
            r.fail(f"{d}/{rel}: unexpected file")
    return n


def check_variant_config(r, path, top_path, variant, st, what):
    """docs/SEMANTICS.md "One weight set per folder": a variant folder's config.json is the top folder's, its
    torch_dtype / dtype (top level and *_config sections but quantization_config) naming the folder's dtype; a
    config that names none, or names this one, is the same bytes."""
    with open(top_path, "rb") as fh:
        top = fh.read()
    with open(path, "rb") as fh:
        got = fh.read()
    r.ok(st.st_size == len(got), f"{what}: st_size {st.st_size}, read {len(got)} bytes")
    want = L.retyped_config(top, variant)
    if want is None:
        r.ok(got == top, f"{what}: differs from the top folder's config.json, which names no other dtype")
    else:
        try:
            r.ok(json.loads(got) == want, f"{what}: not the top folder's config.json with the {variant} dtype")
        except ValueError as e:
            r.fail(f"{what}: not JSON: {e}")


def check_gguf_files(r: L.Report, mount, exp, reference):
    import gguf
    expected = {}
    errors = set()
    for d, m in exp["models"].items():
        for rel, f in m["files"].items():
            if "gguf" in f:
                expected[f"{d}/{rel}"] = (f["gguf"]["tensor_count"], f["gguf"]["gguf_py_readable"])
        for rel, c in m["converted"].items():
            if c["kind"] == "gguf":
                expected[f"{d}/{rel}"] = (len(c["tensors"]), True)
        errors |= {f"{d}/{rel}" for rel in m["errors"]}
    found = 0
    for rel, p in L.walk_files(mount):
        if not rel.endswith(".gguf") or rel in errors:
            continue
        count, readable = expected.get(rel, (None, True))
        found += 1
        if readable:
            try:
                rd = gguf.GGUFReader(p)
                n = len(rd.tensors)
                r.ok(count is None or n == count, f"{rel}: GGUFReader sees {n} tensors, expected {count}")
            except Exception as e:  # noqa: BLE001
                r.fail(f"{rel}: gguf.GGUFReader cannot open it: {type(e).__name__}: {e}")
        try:
            with open(p, "rb") as fh:
                g = L.gguf_read(fh.read())
            r.ok(count is None or len(g["tensors"]) == count,
                 f"{rel}: strict reader sees {len(g['tensors'])} tensors, expected {count}")
        except Exception as e:  # noqa: BLE001
            r.fail(f"{rel}: not a valid GGUF for ggml's rules: {type(e).__name__}: {e}")
    foundation = sum(1 for d, m in exp["models"].items() for rel, f in m["files"].items() if "gguf" in f)
    r.ok(found >= foundation, f"walk found {found} .gguf files, expected at least {foundation}")


def check_erofs(r: L.Report, mount, exp):
    pf = os.path.join(mount, exp["readonly_probes"]["file"])
    pd = os.path.join(mount, exp["readonly_probes"]["dir"])
    if not r.ok(os.path.isfile(pf) and os.path.isdir(pd), "read-only probe paths are missing"):
        return

    def expect(what, fn):
        try:
            fn()
            r.fail(f"{what}: succeeded on a read-only mount")
        except OSError as e:
            r.ok(e.errno == errno.EROFS, f"{what}: got {errno.errorcode.get(e.errno, e.errno)}, expected EROFS")

    def open_w(p, mode):
        def f():
            with open(p, mode):
                pass
        return f

    expect(f"open({exp['readonly_probes']['file']}, 'w')", open_w(pf, "w"))
    expect(f"open({exp['readonly_probes']['file']}, 'a')", open_w(pf, "ab"))
    expect("create a new file", open_w(os.path.join(pd, "modelfs-probe.txt"), "wb"))
    expect("os.mkdir", lambda: os.mkdir(os.path.join(pd, "modelfs-probe-dir")))
    expect("os.mkdir at the root", lambda: os.mkdir(os.path.join(mount, "modelfs-probe-dir")))
    expect("os.unlink", lambda: os.unlink(pf))
    expect("os.rename", lambda: os.rename(pf, pf + ".renamed"))
    expect("os.rmdir", lambda: os.rmdir(os.path.join(pd, "ollama")))
    expect("os.chmod", lambda: os.chmod(pf, 0o644))
    r.ok(os.path.isfile(pf), "probe file vanished after the EROFS checks")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mount")
    ap.add_argument("out")
    ap.add_argument("--store", help="store path the mount was given (default: abspath(OUT/store))")
    ap.add_argument("--reference", action="store_true", help="plain-directory reference tree: skip errno paths")
    a = ap.parse_args()
    r = L.Report("check_tree")
    try:
        exp = L.load_expected(a.out)
    except Exception as e:  # noqa: BLE001
        r.fail(f"cannot load {a.out}/expected.json: {e}")
        return r.finish()
    mount = os.path.abspath(a.mount)
    store_now = os.path.abspath(a.store or os.path.join(a.out, "store"))
    if not r.ok(os.path.isdir(mount), f"mount point {mount} is not a directory"):
        return r.finish()
    if not r.ok(len(exp["models"]) > 0, "expected.json lists no models"):
        return r.finish()

    got = listing(mount)
    want = exp["root_listing"]
    if isinstance(got, OSError):
        r.fail(f"cannot list the mount root: {got}")
    else:
        r.ok(got == want, f"mount root lists {got}; extra {sorted(set(got) - set(want))}, "
                          f"missing {sorted(set(want) - set(got))}")
    for nd, names in exp["namespace_dirs"].items():
        if check_dir(r, os.path.join(mount, nd), f"{nd}/"):
            got = listing(os.path.join(mount, nd))
            r.ok(got == names, f"{nd}/ lists {got}, expected {names}")
    for a_ in exp["absent_models"]:
        r.ok(not os.path.lexists(os.path.join(mount, a_)), f"{a_}: model must not exist")

    files_checked = 0
    for d, m in exp["models"].items():
        files_checked += check_model(r, mount, d, m, store_now, exp["store"], a.reference)
    total = sum(len(m["files"]) for m in exp["models"].values())
    r.ok(files_checked == total, f"only {files_checked} of {total} expected files could be read and compared")
    check_gguf_files(r, mount, exp, a.reference)
    check_erofs(r, mount, exp)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
