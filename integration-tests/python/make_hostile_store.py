#!/usr/bin/env python3
"""Writes a hostile Ollama store: well-formed good models next to >= 50 hostile cases (special files as
blobs, links out of the store, absurd headers, hostile names, broken manifests), and cases.json saying
what the mounted tree must show for each (docs/SEMANTICS.md "Errors" and "Trust and integrity").

Usage: make_hostile_store.py OUT        (OUT/store, OUT/outside, OUT/cases.json)

Run as root, the store is given to uid 65534 (its "owner", as Ollama's store belongs to the ollama
user) and OUT/outside holds root-only files that links in the store point at: a mount run by root must
refuse them. Only the standard library is used; every byte is written here, never by modelfs.

cases.json: {"owner": uid, "good": [check...], "cases": [{"id", "what", "checks": [check...],
"log": [substring...]}]} where a check is {"path", "expect"} with expect one of
  absent                  lookup fails with ENOENT
  ENOENT / EIO / EACCES   the file is listed, and opening or reading it fails with that errno
  bytes                   reads exactly "size" bytes with SHA-256 "sha256"
  readable                reads st_size bytes without error
  entries                 a directory with exactly "count" entries
  lacks                   readable, and its bytes do not contain "text"
and each log substring must appear in exactly one line of the mount's log.
"""
import hashlib
import json
import os
import socket
import struct
import sys

OUT = os.path.abspath(sys.argv[1])
STORE = os.path.join(OUT, "store")
BLOBS = os.path.join(STORE, "blobs")
MANIFESTS = os.path.join(STORE, "manifests")
OUTSIDE = os.path.join(OUT, "outside")
ROOT = os.geteuid() == 0
OWNER = 65534 if ROOT else os.geteuid()
SECRET = b"TOP-SECRET root-only bytes that must never come out of a mount\n"

MT_MODEL = "application/vnd.ollama.image.model"
MT_TENSOR = "application/vnd.ollama.image.tensor"
MT_JSON = "application/vnd.ollama.image.json"
MT_TEMPLATE = "application/vnd.ollama.image.template"
MT_PARAMS = "application/vnd.ollama.image.params"
MT_LICENSE = "application/vnd.ollama.image.license"
MT_CONFIG = "application/vnd.docker.container.image.v1+json"

good, cases = [], []
root_only = []   # files to chown to root:root 0600 at the end (outside the store)


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def put_blob(data: bytes, name=None) -> str:
    h = sha(data)
    with open(os.path.join(BLOBS, name or "sha256-" + h), "wb") as f:
        f.write(data)
    return h


def layer(mt, data=None, digest=None, size=None, name=None, store=True):
    """A manifest layer; the blob is written unless store=False (missing) or a digest is given."""
    if digest is None:
        digest = sha(data)
        if store:
            put_blob(data)
    lj = {"mediaType": mt, "digest": digest if digest.startswith("sha") else "sha256:" + digest,
          "size": len(data) if size is None and data is not None else size}
    if name is not None:
        lj["name"] = name
    return lj


def config_layer(obj=None):
    data = json.dumps(obj or {"model_format": "gguf", "model_family": "llama", "file_type": "F32"}).encode()
    return layer(MT_CONFIG, data)


def manifest(model, layers=None, config=None, raw=None, tag="latest", ns="library", host="registry.ollama.ai"):
    path = os.path.join(MANIFESTS, host, ns, model, tag)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if raw is None:
        raw = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                          "config": config or config_layer(), "layers": layers or []}).encode()
    with open(path, "wb") as f:
        f.write(raw)
    return raw


def case(cid, what, checks, log=()):
    cases.append({"id": cid, "what": what, "checks": checks, "log": list(log)})


def c(path, expect, **kw):
    return dict(path=path, expect=expect, **kw)


# ---- GGUF and safetensors bytes, written by hand ------------------------------------------------------
def gstr(b) -> bytes:
    b = b if isinstance(b, bytes) else b.encode()
    return struct.pack("<Q", len(b)) + b


def kv_str(key, val):
    return gstr(key) + struct.pack("<I", 8) + gstr(val)


def kv_u32(key, v):
    return gstr(key) + struct.pack("<I", 4) + struct.pack("<I", v)


def kv_strs(key, vals):
    """A GGUF ARRAY (9) of STRING (8)."""
    return gstr(key) + struct.pack("<IIQ", 9, 8, len(vals)) + b"".join(gstr(v) for v in vals)


def kv_i32s(key, vals):
    """A GGUF ARRAY (9) of INT32 (5)."""
    return gstr(key) + struct.pack("<IIQ", 9, 5, len(vals)) + b"".join(struct.pack("<i", v) for v in vals)


F32_TENSOR = ("w", [4, 2], 0, struct.pack("<8f", *[0.5 * i for i in range(8)]))


def gguf(kvs=None, tensors=(F32_TENSOR,), version=3, n_tensors=None, n_kv=None, magic=b"GGUF", align=32):
    kvs = [kv_str("general.architecture", "llama"), kv_str("general.name", "hostile")] if kvs is None else kvs
    head = magic + struct.pack("<I", version) + struct.pack("<Q", len(tensors) if n_tensors is None else n_tensors)
    head += struct.pack("<Q", len(kvs) if n_kv is None else n_kv) + b"".join(kvs)
    off, infos, data = 0, b"", b""
    for name, ne, t, raw in tensors:
        infos += gstr(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        infos += struct.pack("<I", t) + struct.pack("<Q", off)
        pad = (-len(raw)) % align
        data += raw + b"\0" * pad
        off += len(raw) + pad
    head += infos
    head += b"\0" * ((-len(head)) % align)
    return head + data


def st(header, data=b"", hlen=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    return struct.pack("<Q", len(h) if hlen is None else hlen) + h + data


def bf16_tensor(name, n=4):
    return st({name: {"dtype": "BF16", "shape": [n], "data_offsets": [0, 2 * n]}}, b"\x80\x3f" * n)


def gguf_model(model, blob_data, **kw):
    """A GGUF model whose model layer is blob_data (stored as a normal blob)."""
    return manifest(model, [layer(MT_MODEL, blob_data)], **kw)


def st_model(model, blobs):
    """A safetensors model: blobs is a list of (layer name, blob bytes)."""
    return manifest(model, [layer(MT_TENSOR, b, name=n) for n, b in blobs] + [layer(MT_JSON, b'{"model_type": "llama"}', name="config.json")],
                    config=config_layer({"model_format": "safetensors", "file_type": "bf16"}))


def special_blob_model(model, make):
    """A GGUF model whose blob file is made by make(path) instead of written."""
    data = gguf(kvs=[kv_str("general.name", model)])
    h = sha(data)
    make(os.path.join(BLOBS, "sha256-" + h))
    manifest(model, [layer(MT_MODEL, data, store=False)])
    return data


def main():
    for d in (BLOBS, MANIFESTS, OUTSIDE):
        os.makedirs(d, exist_ok=True)

    # ---- good models: must keep reading byte for byte whatever else is in the store -----------------
    g1 = gguf(kvs=[kv_str("general.architecture", "llama"), kv_str("general.name", "good"), kv_u32("general.file_type", 0)],
              tensors=[F32_TENSOR, ("b", [8], 0, struct.pack("<8f", *range(8)))])
    gguf_model("good-gguf", g1)
    good.extend([c("good-gguf/model.gguf", "bytes", sha256=sha(g1), size=len(g1)),
                 c("good-gguf/model.fp16.gguf", "readable"), c("good-gguf/model.safetensors", "readable")])
    t1, t2 = bf16_tensor("model.embed.weight", 8), bf16_tensor("model.norm.weight", 4)
    st_model("good-st", [("model.embed.weight", t1), ("model.norm.weight", t2)])
    good.extend([c("good-st/tensors/model.embed.weight.safetensors", "bytes", sha256=sha(t1), size=len(t1)),
                 c("good-st/model.safetensors", "readable"), c("good-st/fp32/model.safetensors", "readable")])

    # ---- blob files that are not plain regular files -------------------------------------------------
    special_blob_model("h-fifo", os.mkfifo)
    case("fifo-blob", "the model blob is a FIFO: never opened (no hang), ENOENT",
         [c("h-fifo/model.gguf", "ENOENT"), c("h-fifo/model.fp32.gguf", "absent")], ["open /h-fifo/model.gguf"])
    special_blob_model("h-dir", os.mkdir)
    case("dir-blob", "the model blob is a directory", [c("h-dir/model.gguf", "ENOENT")], ["open /h-dir/model.gguf"])
    special_blob_model("h-devzero", lambda p: os.symlink("/dev/zero", p))
    case("devzero-blob", "the model blob is a symlink to /dev/zero (endless bytes)", [c("h-devzero/model.gguf", "ENOENT")],
         ["open /h-devzero/model.gguf"])
    if ROOT:
        special_blob_model("h-chardev", lambda p: os.mknod(p, 0o644 | 0o020000, os.makedev(1, 5)))
        case("chardev-blob", "the model blob is a character device node (1,5 = /dev/zero)", [c("h-chardev/model.gguf", "ENOENT")],
             ["open /h-chardev/model.gguf"])

    def make_socket(p):
        here = os.getcwd()
        os.chdir(os.path.dirname(p))          # AF_UNIX paths are limited to 107 bytes: bind the bare name
        try:
            s = socket.socket(socket.AF_UNIX)
            s.bind(os.path.basename(p))
            s.close()
        finally:
            os.chdir(here)
    special_blob_model("h-socket", make_socket)
    case("socket-blob", "the model blob is a UNIX socket", [c("h-socket/model.gguf", "ENOENT")], ["open /h-socket/model.gguf"])
    special_blob_model("h-loop", lambda p: os.symlink(os.path.basename(p), p))
    case("symlink-self-loop", "the blob is a symlink to itself", [c("h-loop/model.gguf", "ENOENT")], ["open /h-loop/model.gguf"])
    special_blob_model("h-loop2", lambda p: (os.symlink(p + ".b", p), os.symlink(p, p + ".b")))
    case("symlink-two-loop", "two symlinks pointing at each other", [c("h-loop2/model.gguf", "ENOENT")], ["open /h-loop2/model.gguf"])
    special_blob_model("h-dangling", lambda p: os.symlink("/nonexistent/blob", p))
    case("dangling-symlink", "the blob is a symlink to nothing", [c("h-dangling/model.gguf", "ENOENT")], ["open /h-dangling/model.gguf"])
    special_blob_model("h-linkdir", lambda p: os.symlink("/etc", p))
    case("symlink-to-dir", "the blob is a symlink to /etc", [c("h-linkdir/model.gguf", "ENOENT")], ["open /h-linkdir/model.gguf"])

    # ---- links out of the store (the escape of issue 10) ---------------------------------------------
    def secret_target(name, data=SECRET):
        p = os.path.join(OUTSIDE, name)
        with open(p, "wb") as f:
            f.write(data)
        root_only.append(p)
        return p

    for cid, model, how in (("symlink-root-only", "h-escape", "abs"), ("symlink-relative-escape", "h-escape-rel", "rel"),
                            ("hardlink-root-only", "h-escape-hard", "hard")):
        # the manifest states the secret's size and digest, as an attacker who knows the file would
        target = secret_target(model + ".secret")
        p = os.path.join(BLOBS, "sha256-" + sha(SECRET + model.encode()))
        with open(target, "ab") as f:
            f.write(model.encode())
        if how == "abs":
            os.symlink(target, p)
        elif how == "rel":
            os.symlink(os.path.relpath(target, BLOBS), p)
        else:
            os.link(target, p)
        manifest(model, [layer(MT_MODEL, SECRET + model.encode(), store=False)])
        case(cid, f"the blob is a {how} link to a root-only file outside the store: refused", [
            c(model + "/model.gguf", "EACCES" if ROOT else "bytes", sha256=sha(SECRET + model.encode()), size=len(SECRET) + len(model))],
             ["open /" + model + "/model.gguf"] if ROOT else [])
    # a template layer that is a symlink to a root-only file: neither the file nor the Modelfile shows it
    tpl_target = secret_target("template.secret", b"{{ .Prompt }} " + SECRET)
    tdata = b"{{ .Prompt }} " + SECRET
    os.symlink(tpl_target, os.path.join(BLOBS, "sha256-" + sha(tdata)))
    manifest("h-escape-tpl", [layer(MT_MODEL, g1), layer(MT_TEMPLATE, tdata, store=False)])
    case("symlink-text-layer", "a template layer linked to a root-only file: EACCES, and the Modelfile leaves it out",
         [c("h-escape-tpl/ollama/template", "EACCES" if ROOT else "readable"),
          c("h-escape-tpl/ollama/Modelfile", "lacks", text="TOP-SECRET" if ROOT else "no such text"),
          c("h-escape-tpl/model.gguf", "bytes", sha256=sha(g1), size=len(g1))],
         ["open /h-escape-tpl/ollama/template"] if ROOT else [])
    # a link out of the store to a file the store's owner owns is served (it could read it anyway)
    owned = os.path.join(OUTSIDE, "owned.gguf")
    odata = gguf(kvs=[kv_str("general.name", "owned-outside")])
    with open(owned, "wb") as f:
        f.write(odata)
    os.symlink(owned, os.path.join(BLOBS, "sha256-" + sha(odata)))
    manifest("h-owned-link", [layer(MT_MODEL, odata, store=False)])
    case("symlink-owned-by-store-owner", "a symlink out of the store to a file of the store's owner: served",
         [c("h-owned-link/model.gguf", "bytes", sha256=sha(odata), size=len(odata)), c("h-owned-link/model.fp32.gguf", "readable")])
    # a symlink inside blobs/ to another blob: served
    idata = gguf(kvs=[kv_str("general.name", "inner-link")])
    put_blob(idata, "inner-target")
    os.symlink("inner-target", os.path.join(BLOBS, "sha256-" + sha(idata)))
    manifest("h-inner-link", [layer(MT_MODEL, idata, store=False)])
    case("symlink-inside-store", "a blob that is a symlink to another file in blobs/: served",
         [c("h-inner-link/model.gguf", "bytes", sha256=sha(idata), size=len(idata))])
    # the legacy sha256:<hex> blob name
    ldata = gguf(kvs=[kv_str("general.name", "legacy-name")])
    put_blob(ldata, "sha256:" + sha(ldata))
    manifest("h-legacy-name", [layer(MT_MODEL, ldata, store=False)])
    case("legacy-blob-name", "a blob stored under the pre-fixBlobs name sha256:<hex>: served",
         [c("h-legacy-name/model.gguf", "bytes", sha256=sha(ldata), size=len(ldata))])
    # a manifest that is a symlink to a root-only JSON file outside the store: the model does not exist
    mtarget = secret_target("manifest.secret", json.dumps({"schemaVersion": 2, "layers": [], "secret": SECRET.decode()}).encode())
    os.makedirs(os.path.join(MANIFESTS, "registry.ollama.ai/library/h-escape-manifest"))
    os.symlink(mtarget, os.path.join(MANIFESTS, "registry.ollama.ai/library/h-escape-manifest/latest"))
    case("manifest-symlink-root-only", "a manifest linked to a root-only JSON file: the model is absent",
         [c("h-escape-manifest", "absent" if ROOT else "entries", count=1)], ["h-escape-manifest"] if ROOT else [])
    # a namespace folder that is a symlink to a folder outside the store holding a root-only "tag"
    nsdir = os.path.join(OUTSIDE, "nsdir", "h-escape-ns")
    os.makedirs(nsdir)
    with open(os.path.join(nsdir, "latest"), "wb") as f:
        f.write(json.dumps({"schemaVersion": 2, "layers": [], "secret": SECRET.decode()}).encode())
    root_only.append(os.path.join(nsdir, "latest"))
    os.symlink(os.path.join(OUTSIDE, "nsdir"), os.path.join(MANIFESTS, "registry.ollama.ai", "hns"))
    case("manifest-linked-folder", "a namespace folder linked out of the store onto a root-only manifest: absent",
         [c("hns/h-escape-ns", "absent" if ROOT else "entries", count=1)], ["hns/h-escape-ns"] if ROOT else [])
    # a manifest that is a FIFO (listing must not hang)
    os.makedirs(os.path.join(MANIFESTS, "registry.ollama.ai/library/h-fifo-manifest"))
    os.mkfifo(os.path.join(MANIFESTS, "registry.ollama.ai/library/h-fifo-manifest/latest"))
    case("manifest-fifo", "a manifest that is a FIFO: ignored, no hang", [c("h-fifo-manifest", "absent")])

    # ---- sizes and presence ---------------------------------------------------------------------------
    tdata = gguf(kvs=[kv_str("general.name", "truncated")])
    put_blob(tdata[:-7], "sha256-" + sha(tdata))
    manifest("h-truncated", [layer(MT_MODEL, tdata, store=False)])
    case("truncated-blob", "the blob is 7 bytes short", [c("h-truncated/model.gguf", "EIO"), c("h-truncated/model.fp32.gguf", "absent")],
         ["open /h-truncated/model.gguf"])
    ldata = gguf(kvs=[kv_str("general.name", "longer")])
    put_blob(ldata + b"extra", "sha256-" + sha(ldata))
    manifest("h-longer", [layer(MT_MODEL, ldata, store=False)])
    case("longer-blob", "the blob is longer than the manifest says", [c("h-longer/model.gguf", "EIO")], ["open /h-longer/model.gguf"])
    mdata = gguf(kvs=[kv_str("general.name", "missing")])
    manifest("h-missing", [layer(MT_MODEL, mdata, store=False)])
    case("missing-blob", "the blob does not exist", [c("h-missing/model.gguf", "ENOENT"), c("h-missing/ollama/Modelfile", "readable")],
         ["open /h-missing/model.gguf"])
    manifest("h-empty-blob", [layer(MT_MODEL, b"")])
    case("empty-blob", "an empty model blob (a valid digest of nothing): served empty, no converted files",
         [c("h-empty-blob/model.gguf", "bytes", sha256=sha(b""), size=0), c("h-empty-blob/model.fp32.gguf", "absent")])
    hdata = gguf(kvs=[kv_str("general.name", "huge-size")])
    put_blob(hdata)
    manifest("h-huge-size", [layer(MT_MODEL, hdata, size=(1 << 63) - 1, store=False)])
    case("size-2^63-1", "the manifest claims 2^63-1 bytes for a small blob", [c("h-huge-size/model.gguf", "EIO")], ["open /h-huge-size/model.gguf"])
    manifest("h-negative-size", [layer(MT_MODEL, hdata, size=-5, store=False)])
    case("negative-size", "a negative layer size: the manifest is invalid", [c("h-negative-size", "absent")], ["model h-negative-size:latest disabled"])
    manifest("h-float-size", raw=json.dumps({"layers": [{"mediaType": MT_MODEL, "digest": "sha256:" + sha(hdata), "size": 1.5}]}).encode())
    case("fractional-size", "a fractional layer size: invalid", [c("h-float-size", "absent")], ["model h-float-size:latest disabled"])
    manifest("h-overflow-size", raw=('{"layers":[{"mediaType":"%s","digest":"sha256:%s","size":%d}]}' % (MT_MODEL, sha(hdata), 1 << 70)).encode())
    case("overflowing-size", "a layer size of 2^70: invalid", [c("h-overflow-size", "absent")], ["model h-overflow-size:latest disabled"])

    # ---- digests -------------------------------------------------------------------------------------
    for cid, model, dg in (("digest-dotdot", "h-digest-dotdot", "sha256:../../../../etc/passwd"),
                           ("digest-dotdot-64", "h-digest-dotdot64", "sha256:" + "../" * 21 + "x"),
                           ("digest-sha512", "h-digest-sha512", "sha512:" + "ab" * 64),
                           ("digest-short", "h-digest-short", "sha256:abc"),
                           ("digest-slash", "h-digest-slash", "sha256:" + "a" * 32 + "/" + "a" * 31)):
        manifest(model, raw=json.dumps({"layers": [{"mediaType": MT_MODEL, "digest": dg, "size": 10}]}).encode())
        case(cid, f"a malformed digest {dg[:30]}...: the manifest is invalid, nothing outside blobs/ is named",
             [c(model, "absent")], ["model " + model + ":latest disabled"])
    manifest("h-no-digest", [{"mediaType": MT_MODEL, "size": 10}, layer(MT_LICENSE, b"MIT\n")])
    case("layer-without-digest", "a layer without a digest has no file; the rest of the model is there",
         [c("h-no-digest/model.gguf", "absent"), c("h-no-digest/ollama/license", "bytes", sha256=sha(b"MIT\n"), size=4)])

    # ---- manifest JSON -------------------------------------------------------------------------------
    manifest("h-not-json", raw=b"this is not json {")
    case("manifest-not-json", "not JSON", [c("h-not-json", "absent")], ["model h-not-json:latest disabled"])
    manifest("h-deep-json", raw=b"[" * 200_000 + b"]" * 200_000)
    case("manifest-200k-deep", "200,000 nested arrays (no stack overflow)", [c("h-deep-json", "absent")], ["model h-deep-json:latest disabled"])
    manifest("h-deep-obj", raw=b'{"layers":' + b'{"a":' * 100_000 + b"1" + b"}" * 100_001)
    case("manifest-100k-deep-objects", "100,000 nested objects inside layers", [c("h-deep-obj", "absent")], ["model h-deep-obj:latest disabled"])
    manifest("h-huge-manifest", raw=b'{"layers":[]' + b" " * (17 << 20) + b"}")
    case("manifest-17MiB", "a 17 MiB manifest (over the 16 MiB limit)", [c("h-huge-manifest", "absent")], ["model h-huge-manifest:latest disabled"])
    manifest("h-layers-object", raw=b'{"layers":{"a":1}}')
    case("layers-not-array", "'layers' is an object", [c("h-layers-object", "absent")], ["model h-layers-object:latest disabled"])
    manifest("h-layer-number", raw=b'{"layers":[5]}')
    case("layer-not-object", "a layer that is a number", [c("h-layer-number", "absent")], ["model h-layer-number:latest disabled"])
    manifest("h-non-utf8-json", raw=b'{"layers":[],"x":"\xff\xfe\xc0"}')
    case("manifest-invalid-utf8", "invalid UTF-8 inside the JSON", [c("h-non-utf8-json", "absent")], ["model h-non-utf8-json:latest disabled"])
    manifest("h-empty-manifest", raw=b"")
    case("manifest-empty", "an empty manifest file", [c("h-empty-manifest", "absent")], ["model h-empty-manifest:latest disabled"])
    manifest("h-null-manifest", raw=b"null")
    case("manifest-null", "the JSON value null", [c("h-null-manifest", "absent")], ["model h-null-manifest:latest disabled"])
    lay = [{"mediaType": "application/vnd.example.unknown", "digest": "sha256:%064x" % i, "size": i} for i in range(20_000)]
    manifest("h-20k-layers", raw=json.dumps({"layers": lay}).encode())
    case("20k-layers", "20,000 layers of an unknown type (blobs missing): all listed", [
        c("h-20k-layers/ollama/layers", "entries", count=20_000), c("h-20k-layers/ollama/layers/sha256-%064x" % 7, "ENOENT")],
         ["open /h-20k-layers/ollama/layers/sha256-%064x" % 7])

    # ---- names inside manifests (json layers) -------------------------------------------------------
    for cid, name in (("name-dotdot", "../../../etc/passwd"), ("name-dot", "."), ("name-absolute", "/etc/passwd"),
                      ("name-nul", "a\u0000b.json"), ("name-5000", "x" * 5000), ("name-300-byte-component", "y" * 300 + ".json"),
                      ("name-100-components", "/".join(["d"] * 100) + ".json"), ("name-empty-component", "a//b.json")):
        model = "h-" + cid
        raw = manifest(model, [layer(MT_JSON, b'{"ok": true}', name=name), layer(MT_LICENSE, b"Apache\n")])
        case(cid, f"a json layer named {name[:20]!r}: skipped with one log line, the model stays",
             [c(model + "/ollama/license", "bytes", sha256=sha(b"Apache\n"), size=7), c(model + "/etc", "absent"),
              c(model + "/a", "absent"), c(model + "/d", "absent")], ["[%s] skipping unsafe path" % sha(raw)[:12]])
    ok_json = b'{"fine": 1}'
    manifest("h-name-nonascii", [layer(MT_JSON, ok_json, name="caf\u00e9/\u6a21\u578b.json")])
    case("name-non-ascii", "a json layer with a non-ASCII (valid UTF-8) name is placed",
         [c("h-name-nonascii/caf\u00e9/\u6a21\u578b.json", "bytes", sha256=sha(ok_json), size=len(ok_json))])
    raw = manifest("h-name-shadow", [layer(MT_JSON, b'{"x":1}', name="ollama/manifest.json"), layer(MT_MODEL, g1)])
    case("name-shadows-own-file", "a json layer named ollama/manifest.json cannot hide the real one",
         [c("h-name-shadow/model.gguf", "bytes", sha256=sha(g1), size=len(g1)),
          c("h-name-shadow/ollama/manifest.json", "bytes", sha256=sha(raw), size=len(raw))],
         ["[%s] skipping \"ollama/manifest.json\": name already taken" % sha(raw)[:12]])

    # ---- names of manifest paths ----------------------------------------------------------------------
    def raw_manifest_path(parts: list, data=b'{"layers":[]}'):
        p = os.path.join(MANIFESTS.encode(), *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)

    raw_manifest_path([b"registry.ollama.ai", b"library", b"h-\xff\xfebad", b"latest"])
    case("path-non-utf8", "a model folder named with invalid UTF-8: skipped", [c("h-\ufffd\ufffdbad", "absent")], ["bad/latest"])
    raw_manifest_path([b"registry.ollama.ai", b"library", b"h" * 200, b"latest"])
    case("path-200-chars", "a 200-character model name (over 80)", [c("h" * 200, "absent")], ["h" * 200 + "/latest"])
    raw_manifest_path([b"registry.ollama.ai", b"library", b"h space", b"latest"])
    case("path-space", "a model name with a space", [c("h space", "absent")], ["h space/latest"])
    raw_manifest_path([b"registry.ollama.ai", b"library", b"h-shallow"])
    case("path-too-shallow", "a manifest three levels deep: ignored", [c("h-shallow", "absent")])
    raw_manifest_path([b"registry.ollama.ai", b"library", b"h-deep", b"latest", b"extra"])
    case("path-too-deep", "a manifest five levels deep: ignored", [c("h-deep", "absent")])
    os.makedirs(os.path.join(MANIFESTS, "registry.ollama.ai/library/h-tagdir/latest"))
    case("path-tag-is-dir", "a tag that is a directory", [c("h-tagdir", "absent")])

    # ---- safetensors headers in tensor layers ---------------------------------------------------------
    def st_case(cid, what, blob, log=True):
        model = "h-st-" + cid.replace("^", "p")
        st_model(model, [("model.bad.weight", blob), ("model.ok.weight", t2)])
        case("st-" + cid, what + ": the tensor file is served byte for byte, the converted files are absent", [
            c(model + "/tensors/model.bad.weight.safetensors", "bytes", sha256=sha(blob), size=len(blob)),
            c(model + "/model.safetensors", "absent"), c(model + "/bf16/model.safetensors", "absent")],
             [model + ":latest: "] if log else [])

    st_case("hlen-2^62", "a header length of 2^62", st({}, hlen=1 << 62))
    st_case("hlen-past-end", "a header length past the end", st({}, hlen=4096))
    st_case("hlen-short", "a blob of 5 bytes", b"\x05\x00\x00\x00\x00")
    st_case("not-json", "a header that is not JSON", st(b"{not json]"))
    st_case("deep-json", "a 200,000-deep header", st(b"[" * 200_000 + b"]" * 200_000))
    w = {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}
    st_case("overlap", "two tensors at overlapping offsets", st({"model.bad.weight": w, "model.bad.other": dict(w, data_offsets=[4, 12])},
                                                                 b"\0" * 12))
    st_case("negative-shape", "a negative dimension", st({"model.bad.weight": dict(w, shape=[-4])}, b"\0" * 8))
    st_case("overflow-shape", "dimensions whose product overflows", st({"model.bad.weight": dict(w, shape=[1 << 40, 1 << 40])}, b"\0" * 8))
    st_case("offsets-past-end", "data offsets past the end of the blob", st({"model.bad.weight": dict(w, data_offsets=[0, 1 << 40])}, b"\0" * 8))
    st_case("offsets-reversed", "an end offset before the start", st({"model.bad.weight": dict(w, data_offsets=[8, 0])}, b"\0" * 8))
    st_case("unknown-dtype", "an unknown dtype", st({"model.bad.weight": dict(w, dtype="Q99")}, b"\0" * 8))
    st_case("size-mismatch", "a shape that does not match the byte range", st({"model.bad.weight": dict(w, shape=[3])}, b"\0" * 8))
    st_case("name-dotdot", "a tensor named ../../x inside the blob", st({"../../x": w}, b"\0" * 8))
    st_case("name-nul", "a tensor name with NUL", st({"model.bad\u0000weight": w}, b"\0" * 8))
    st_case("name-5000", "a 5,000-character tensor name", st({"m" * 5000: w}, b"\0" * 8))
    st_case("shape-not-list", "a shape that is a string", st({"model.bad.weight": dict(w, shape="4")}, b"\0" * 8))

    # ---- GGUF headers ---------------------------------------------------------------------------------
    def gguf_case(cid, what, blob, extra=()):
        model = "h-gguf-" + cid.replace("^", "p")
        gguf_model(model, blob)
        case("gguf-" + cid, what + ": model.gguf is served byte for byte, its converted files are absent", [
            c(model + "/model.gguf", "bytes", sha256=sha(blob), size=len(blob)), c(model + "/model.safetensors", "absent"),
            c(model + "/model.fp32.gguf", "absent")] + list(extra), [model + ":latest: converted files of model.gguf left out"])

    gguf_case("tensors-2^62", "a tensor count of 2^62", gguf(n_tensors=1 << 62))
    gguf_case("kvs-2^62", "a KV count of 2^62", gguf(n_kv=1 << 62))
    gguf_case("string-2^62", "a string length of 2^62",
              gguf(kvs=[gstr("general.name") + struct.pack("<I", 8) + struct.pack("<Q", 1 << 62) + b"abc"]))
    gguf_case("array-2^62", "an array of 2^62 elements",
              gguf(kvs=[gstr("tokens") + struct.pack("<I", 9) + struct.pack("<I", 4) + struct.pack("<Q", 1 << 62)]))
    gguf_case("nested-arrays", "arrays nested 100,000 deep",
              gguf(kvs=[gstr("deep") + (struct.pack("<I", 9) + struct.pack("<I", 9) + struct.pack("<Q", 1)) * 100_000]))
    gguf_case("version-1", "GGUF version 1", gguf(version=1))
    gguf_case("big-endian", "a big-endian GGUF (version bytes swapped)", b"GGUF" + struct.pack(">I", 3) + gguf()[8:])
    gguf_case("bad-magic", "not a GGUF at all", b"GGML" + gguf()[4:])
    gguf_case("ne-overflow", "tensor dimensions whose product overflows", gguf(tensors=[("w", [1 << 40, 1 << 40], 0, b"\0" * 32)]))
    gguf_case("zero-dim", "a tensor with a dimension of 0 and 5 dims", gguf(tensors=[("w", [0, 1, 1, 1, 1], 0, b"")]))
    gguf_case("type-999", "an unknown tensor type", gguf(tensors=[("w", [4], 999, b"\0" * 16)]))
    gguf_case("offset-past-end", "a tensor past the end of the blob",
              gguf(tensors=[("w", [4], 0, b"\0" * 16)])[:-24])  # data cut short: the tensor's end lies outside the blob
    gguf_case("dims-9", "a tensor with 9 dimensions", gguf(tensors=[("w", [1] * 9, 0, b"\0" * 4)]))
    gguf_case("truncated-header", "a header cut in the middle of a KV", gguf()[:40])
    # a 64-byte tensor name: ggml cannot load it, so the *.gguf variants are left out, the safetensors ones stay
    lname = "blk.0." + "n" * 58
    ldata = gguf(tensors=[(lname, [4, 2], 0, F32_TENSOR[3])])
    gguf_model("h-gguf-long-name", ldata)
    case("gguf-64-byte-tensor-name", "one failed variant does not hide the others", [
        c("h-gguf-long-name/model.gguf", "bytes", sha256=sha(ldata), size=len(ldata)),
        c("h-gguf-long-name/model.fp32.gguf", "absent"), c("h-gguf-long-name/model.bf16.gguf", "absent"),
        c("h-gguf-long-name/model.safetensors", "readable"), c("h-gguf-long-name/bf16/model.safetensors", "readable")],
         ["h-gguf-long-name:latest: model.fp32.gguf left out"])
    many = [("t%05d" % i, [1], 0, struct.pack("<f", float(i))) for i in range(20_000)]
    mdata = gguf(tensors=many)
    gguf_model("h-gguf-20k-tensors", mdata)
    case("gguf-20k-tensors", "20,000 tensors: every converted file is built and readable", [
        c("h-gguf-20k-tensors/model.gguf", "bytes", sha256=sha(mdata), size=len(mdata)),
        c("h-gguf-20k-tensors/fp16/model.safetensors", "readable"), c("h-gguf-20k-tensors/model.bf16.gguf", "readable")])

    # ---- config and text layers ------------------------------------------------------------------------
    cfg = json.dumps({"model_format": "gguf"}).encode()
    h = sha(cfg)
    os.mkfifo(os.path.join(BLOBS, "sha256-" + h))
    manifest("h-config-fifo", [layer(MT_MODEL, g1)], config={"mediaType": MT_CONFIG, "digest": "sha256:" + h, "size": len(cfg)})
    case("config-fifo", "the config blob is a FIFO: the model stays, its config.json fails",
         [c("h-config-fifo/model.gguf", "bytes", sha256=sha(g1), size=len(g1)), c("h-config-fifo/ollama/config.json", "ENOENT"),
          c("h-config-fifo/ollama/Modelfile", "readable")], ["h-config-fifo:latest: config blob unreadable"])
    big = b'{"model_format": "gguf", "pad": "' + b"x" * (2 << 20) + b'"}'
    manifest("h-config-2MiB", [layer(MT_MODEL, g1)], config=layer(MT_CONFIG, big))
    case("config-2MiB", "a 2 MiB config blob: not parsed, still served byte for byte",
         [c("h-config-2MiB/ollama/config.json", "bytes", sha256=sha(big), size=len(big)),
          c("h-config-2MiB/model.gguf", "bytes", sha256=sha(g1), size=len(g1))], ["h-config-2MiB:latest: config blob unreadable"])
    manifest("h-params-bad", [layer(MT_MODEL, g1), layer(MT_PARAMS, b"[not json"), layer(MT_TEMPLATE, b"{{ .Prompt }}")])
    case("params-not-json", "a params layer that is not JSON: the Modelfile still renders",
         [c("h-params-bad/ollama/Modelfile", "readable"), c("h-params-bad/ollama/params.json", "bytes", sha256=sha(b"[not json"), size=9)])
    manifest("h-license-missing", [layer(MT_MODEL, g1), layer(MT_LICENSE, b"gone", store=False)])
    case("license-missing", "a license layer whose blob is missing",
         [c("h-license-missing/ollama/license", "ENOENT"), c("h-license-missing/ollama/Modelfile", "readable")],
         ["open /h-license-missing/ollama/license"])

    # ---- collisions ------------------------------------------------------------------------------------
    a = gguf(kvs=[kv_str("general.name", "upper")])
    b = gguf(kvs=[kv_str("general.name", "lower")])
    manifest("h-collide", [layer(MT_MODEL, a)], host="Registry.Ollama.AI", ns="Library")
    manifest("h-collide", [layer(MT_MODEL, b)])
    case("case-collision", "two manifests naming the same folder: the first in Java string order wins",
         [c("h-collide/model.gguf", "bytes", sha256=sha(a), size=len(a))])

    # ---- Ollama's GGUF dialect (issue 33): a handler's markers match, the header contradicts itself ---------
    # served as stored with one log line: no ollama/ copy, no half-translated model.gguf or mmproj.gguf
    def dialect_case(cid, model, what, kvs, tensors):
        data = gguf(kvs=kvs, tensors=tensors)
        gguf_model(model, data)
        case(cid, what, [c(model + "/model.gguf", "bytes", sha256=sha(data), size=len(data)),
                         c(model + "/ollama/model.gguf", "absent"), c(model + "/mmproj.gguf", "absent")],
             [model + ":latest: model.gguf served as stored"])
    f16x8 = struct.pack("<8e", *[0.25 * i for i in range(8)])
    dialect_case("dialect-gemma3-no-vocab", "h-dialect-gemma3",
                 "gemma3 markers (a vision tower, no layer_norm_rms_epsilon) and 4 embedding rows but no vocabulary",
                 [kv_str("general.architecture", "gemma3"), kv_u32("gemma3.block_count", 1), kv_u32("gemma3.context_length", 8)],
                 [("token_embd.weight", [2, 4], 1, f16x8), ("v.blk.0.attn_q.weight", [4, 2], 0, F32_TENSOR[3])])
    dialect_case("dialect-qwen35-no-text-blocks", "h-dialect-qwen35",
                 "qwen35 markers (an MTP tensor) but not one text block for the MTP layer to follow",
                 [kv_str("general.architecture", "qwen35"), kv_u32("qwen35.block_count", 0)],
                 [("mtp.fc.weight", [4, 2], 0, F32_TENSOR[3])])
    dialect_case("dialect-glmocr-gate-alone", "h-dialect-glmocr",
                 "glmocr (its architecture) with a block's ffn_gate but no ffn_up to fuse it with",
                 [kv_str("general.architecture", "glmocr"), kv_u32("glmocr.block_count", 1)],
                 [("blk.0.ffn_gate.weight", [4, 2], 1, f16x8)])
    dialect_case("dialect-nemotron-latent-width", "h-dialect-nemotron",
                 "nemotron_h_moe markers (a latent MoE projection) whose latent width is not the stored moe_latent_size",
                 [kv_str("general.architecture", "nemotron_h_moe"), kv_u32("nemotron_h_moe.moe_latent_size", 3)],
                 [("blk.0.ffn_latent_in.weight", [2, 4], 1, f16x8)])
    dialect_case("dialect-deepseekocr-no-experts", "h-dialect-deepseekocr",
                 "deepseekocr markers (the architecture, a vision tensor) but no expert width and no blk.1.ffn_down_exps to derive it",
                 [kv_str("general.architecture", "deepseekocr"), kv_u32("deepseekocr.block_count", 2)],
                 [("token_embd.weight", [2, 4], 1, f16x8), ("v.class_embd", [8], 0, F32_TENSOR[3])])

    dialect_case("dialect-gemma4-token-types", "h-dialect-gemma4",
                 "gemma4 markers (tokenizer.ggml.model llama) with merges, but token types for fewer tokens than the vocabulary",
                 [kv_str("general.architecture", "gemma4"), kv_u32("gemma4.block_count", 1), kv_str("tokenizer.ggml.model", "llama"),
                  kv_strs("tokenizer.ggml.tokens", ["a", "b", "ab"]), kv_strs("tokenizer.ggml.merges", ["a b"]),
                  kv_i32s("tokenizer.ggml.token_type", [1, 1])],
                 [("token_embd.weight", [4, 2], 1, f16x8)])

    # ---- ownership: the store belongs to OWNER, the targets outside to root ---------------------------
    if ROOT:
        for dirpath, dirnames, filenames in os.walk(STORE):
            for n in dirnames + filenames:
                os.lchown(os.path.join(dirpath, n), OWNER, OWNER)
        os.lchown(STORE, OWNER, OWNER)
        os.chown(owned, OWNER, OWNER)
        for p in root_only:
            os.chown(p, 0, 0)
            os.chmod(p, 0o600)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"owner": OWNER, "root": ROOT, "good": good, "cases": cases}, f, indent=1)
    print(f"hostile store written to {STORE}: {len(cases)} cases, {len(good)} good files, owner uid {OWNER}")


if __name__ == "__main__":
    main()
