#!/usr/bin/env bash
# Builds (once) llama.cpp's multimodal CLI, llama-mtmd-cli, from the llama.cpp source node-llama-cpp bundles
# (scripts/lib.sh ensure_llama_cpp_source), for the image checks of DialectGgufTest (check_dialect.py --mtmd).
#   build-mtmd-cli.sh CACHE_DIR LLAMA_CPP_SRC     prints the path of the llama-mtmd-cli binary
# The binary is kept in CACHE_DIR/<source commit>-<hash of the cmake options>/, so it is built again only when
# node-llama-cpp bundles another llama.cpp or the options below change. CPU only, static, only the target itself
# (no server, no tests, no examples, no HTTPS/download support), -j2. Exits non-zero, saying why, when
# cmake or a C++ compiler is missing or the build fails (the build log is kept beside the binary's folder).
set -euo pipefail
cache="${1:?usage: build-mtmd-cli.sh CACHE_DIR LLAMA_CPP_SRC}"
src="${2:?usage: build-mtmd-cli.sh CACHE_DIR LLAMA_CPP_SRC}"
[ -f "$src/tools/mtmd/mtmd-cli.cpp" ] || { echo "build-mtmd-cli.sh: no llama.cpp source with tools/mtmd at $src" >&2; exit 2; }
for tool in cmake c++; do
  command -v "$tool" >/dev/null || { echo "build-mtmd-cli.sh: $tool missing (Debian: apt-get install cmake g++)" >&2; exit 2; }
done
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null) \
  || { echo "build-mtmd-cli.sh: $src is not the git clone of node-llama-cpp's bundle (no commit to key the cache by)" >&2; exit 2; }
# LLAMA_CURL is deprecated in this source (downloads go through LLAMA_OPENSSL), so HTTPS support is left out
# with LLAMA_OPENSSL=OFF; GGML_NATIVE stays on (the binary is built on, and for, this machine).
options=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
         -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TOOLS=ON
         -DGGML_OPENMP=OFF)
key="${commit:0:12}-$(printf '%s\n' "${options[@]}" | sha256sum | cut -c1-8)"
dest="$cache/$key"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 1800 9 || { echo "build-mtmd-cli.sh: $cache is locked by another build for 30 min" >&2; exit 2; }
if [ -x "$dest/llama-mtmd-cli" ]; then
  echo "$dest/llama-mtmd-cli"; exit 0
fi
build="$cache/build-$key"
log="$cache/build-$key.log"
rm -rf "$build"
echo "build-mtmd-cli.sh: building llama-mtmd-cli from $src ($commit) into $dest; log: $log" >&2
if ! { cmake -S "$src" -B "$build" "${options[@]}" && cmake --build "$build" --target llama-mtmd-cli -j2; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "build-mtmd-cli.sh: the build failed (full log: $log)" >&2
  exit 2
fi
mkdir -p "$dest.tmp"
cp "$build/bin/llama-mtmd-cli" "$dest.tmp/"
rm -rf "$dest"; mv "$dest.tmp" "$dest"
rm -rf "$build"
echo "$dest/llama-mtmd-cli"
