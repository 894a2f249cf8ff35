#!/usr/bin/env bash
# Builds (once) llama.cpp's multimodal CLI, llama-mtmd-cli, for the image checks of DialectGgufTest
# (check_dialect.py --mtmd), from the llama.cpp source node-llama-cpp bundles (scripts/lib.sh ensure_llama_cpp_source).
#   build-mtmd-cli.sh CACHE_DIR LLAMA_CPP_SRC     prints the path of the llama-mtmd-cli binary
# Only the multimodal library (tools/mtmd) and the CLI are compiled; they link against the llama.cpp libraries
# node-llama-cpp ships prebuilt for this platform (node_modules/@node-llama-cpp/<platform>/bins: built from the same
# release as the bundled source), and the binary's folder links their CPU backends beside it, where ggml looks for
# them. About a minute on 2 CPUs, where a whole llama.cpp build takes ten. Without prebuilt libraries (another
# platform) the whole of llama.cpp is built with cmake instead. The binary is kept in
# CACHE_DIR/<source commit>-<hash of this script and the libraries>/, so it is built again only when node-llama-cpp
# bundles another llama.cpp or this recipe changes. Exits non-zero, saying why, when a compiler is missing or the
# build fails (the build log is kept in CACHE_DIR).
set -euo pipefail
cache="${1:?usage: build-mtmd-cli.sh CACHE_DIR LLAMA_CPP_SRC}"
src="$(cd "${2:?usage: build-mtmd-cli.sh CACHE_DIR LLAMA_CPP_SRC}" && pwd)"
[ -f "$src/tools/mtmd/mtmd-cli.cpp" ] || { echo "build-mtmd-cli.sh: no llama.cpp source with tools/mtmd at $src" >&2; exit 2; }
for tool in c++ cc; do
  command -v "$tool" >/dev/null || { echo "build-mtmd-cli.sh: $tool missing (Debian: apt-get install g++)" >&2; exit 2; }
done
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null) \
  || { echo "build-mtmd-cli.sh: $src is not the git clone of node-llama-cpp's bundle (no commit to key the cache by)" >&2; exit 2; }
bins=$(ls -d "$src"/../@node-llama-cpp/linux-x64/bins/linux-x64 2>/dev/null | head -n1 || true)
if [ -n "$bins" ] && [ -f "$bins/libllama-common.so" ]; then
  bins="$(cd "$bins" && pwd)"
  # the binary links to these files by path (rpath, the backends' links): their folder and content key it
  libs_hash=$( { echo "$bins"; cd "$bins" && sha256sum libllama-common.so libllama.*.so libggml.*.so libggml-base.so; } | sha256sum | cut -c1-8)
else
  bins=""
  libs_hash=cmake
  command -v cmake >/dev/null || { echo "build-mtmd-cli.sh: no prebuilt llama.cpp libraries and no cmake (Debian: apt-get install cmake)" >&2; exit 2; }
fi
key="${commit:0:12}-$(sha256sum "$0" | cut -c1-8)-$libs_hash"
dest="$cache/$key"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 1800 9 || { echo "build-mtmd-cli.sh: $cache is locked by another build for 30 min" >&2; exit 2; }
if [ -x "$dest/llama-mtmd-cli" ]; then
  echo "$dest/llama-mtmd-cli"; exit 0
fi
build="$cache/build-$key"
log="$cache/build-$key.log"
rm -rf "$build" "$dest.tmp"
mkdir -p "$build" "$dest.tmp"
echo "build-mtmd-cli.sh: building llama-mtmd-cli from $src ($commit) into $dest; log: $log" >&2
fail() { tail -n 40 "$log" >&2; echo "build-mtmd-cli.sh: the build failed (full log: $log)" >&2; exit 2; }
if [ -n "$bins" ]; then
  # the sources of CMake's mtmd library target, and the CLI
  mapfile -t srcs < <(sed -n '/^add_library(mtmd/,/^ *)/p' "$src/tools/mtmd/CMakeLists.txt" | grep -o '[A-Za-z0-9_./-]*\.cpp')
  [ "${#srcs[@]}" -gt 5 ] || { echo "build-mtmd-cli.sh: cannot read the mtmd sources from $src/tools/mtmd/CMakeLists.txt" >&2; exit 2; }
  inc=(-I"$src/include" -I"$src/ggml/include" -I"$src/common" -I"$src/tools/mtmd" -I"$src/vendor")
  {
    printf '%s\n' "${srcs[@]}" mtmd-cli.cpp | xargs -P 2 -I{} sh -c \
      'c++ -std=c++17 -O1 -w "$@" -c "'"$src"'/tools/mtmd/{}" -o "'"$build"'/$(echo {} | tr / _).o"' sh "${inc[@]}"
    c++ -std=c++17 -O1 -w -I"$src/vendor" -c "$src/vendor/hash/hash.cpp" -o "$build/vendor_hash.o"
    cc -O1 -w -I"$src/vendor/hash" -c "$src/vendor/hash/sha256/sha256.c" -o "$build/vendor_sha256.o"
    c++ -o "$dest.tmp/llama-mtmd-cli" "$build"/*.o -L"$bins" -l:libllama-common.so -l:"$(basename "$bins"/libllama.*.so)" \
      -l:"$(basename "$bins"/libggml.*.so)" -l:libggml-base.so -Wl,-rpath,"$bins" -lpthread
  } >"$log" 2>&1 || fail
  for so in "$bins"/libggml-cpu-*.so; do ln -s "$so" "$dest.tmp/"; done   # ggml loads its CPU backend from the binary's folder
else
  options=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
           -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TOOLS=ON -DGGML_OPENMP=OFF)
  { cmake -S "$src" -B "$build" "${options[@]}" && cmake --build "$build" --target llama-mtmd-cli -j2; } >"$log" 2>&1 || fail
  cp "$build/bin/llama-mtmd-cli" "$dest.tmp/"
fi
"$dest.tmp/llama-mtmd-cli" --version >>"$log" 2>&1 || fail
rm -rf "$dest"; mv "$dest.tmp" "$dest"
rm -rf "$build"
echo "$dest/llama-mtmd-cli"
