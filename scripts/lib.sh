# Shared helpers for ./modelfs, ./test and .ci/run. Source it; do not run it.
# shellcheck shell=bash

MODELFS_TOP="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELFS_JAR="$MODELFS_TOP/mount-cli/target/modelfs.jar"
MODELFS_JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xms32m -XX:+UseSerialGC -XX:-UseProfiledLoopPredicate)
# The Vector API kernels (fs: quant.Kernels) need the incubator module; the JVM then prints one
# "WARNING: Using incubator modules" line, so only the commands that serve converted files ask for it.
MODELFS_VECTOR_FLAGS=(--add-modules jdk.incubator.vector)

say() { printf 'modelfs: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

java_major() { # $1 = java binary; prints its feature version
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | head -n1 | cut -d. -f1
}

# Sets JAVA_HOME to a JDK >= 25: $JAVA_HOME, then the usual install folders.
find_jdk() {
  local c v
  for c in "${JAVA_HOME:-}" /usr/lib/jvm/* /opt/java/* /opt/jdk* /usr/local/java/* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
    [ -n "$c" ] && [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] || continue
    v=$(java_major "$c/bin/java")
    if [ -n "$v" ] && [ "$v" -ge 25 ] 2>/dev/null; then
      export JAVA_HOME="$c"
      return 0
    fi
  done
  die "no JDK >= 25 found (looked at \$JAVA_HOME and /usr/lib/jvm/*). Install one, e.g. Temurin 25, and set JAVA_HOME."
}

need_root_or_say() { # $1 = what, rest = packages
  local what="$1"; shift
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing $what: $*"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1; then
      apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || die "could not install $*"
    fi
  else
    die "$what missing; run: sudo apt-get install -y $*"
  fi
}

# FUSE 2 runtime: the fusermount helper and libfuse.so.2 (Debian: fuse + libfuse2; never fuse3).
ensure_fuse() {
  if ! command -v fusermount >/dev/null || ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep 'libfuse\.so\.2' >/dev/null; then
    need_root_or_say "FUSE 2 (fusermount, libfuse.so.2)" fuse libfuse2
  fi
  [ -e /dev/fuse ] || die "/dev/fuse is missing: this machine cannot mount FUSE filesystems (load the fuse module or run the container with --device /dev/fuse)"
}

# The fault-injecting lower filesystem of the stalled-store tests (integration-tests/faultfs/faultfs.c, built
# by the tests with gcc against libfuse2's headers): Debian gcc + libfuse-dev (FUSE 2's, never fuse3's).
ensure_faultfs_build() {
  { command -v gcc >/dev/null && [ -f /usr/include/fuse/fuse.h ]; } \
    || need_root_or_say "gcc and libfuse-dev (the fault-injecting store of the stalled-store tests)" gcc libfuse-dev
}

# llama.cpp's multimodal CLI of the image checks (DialectGgufTest; integration-tests/mtmd/build-mtmd-cli.sh builds it
# once from the bundled llama.cpp source into ~/.cache/modelfs/llama-mtmd, linked against node-llama-cpp's prebuilt
# libraries): a C++ compiler, and cmake for the whole-llama.cpp fallback on platforms without them.
ensure_mtmd_build() {
  { command -v cmake >/dev/null && command -v c++ >/dev/null; } \
    || need_root_or_say "cmake and g++ (llama-mtmd-cli for the image checks)" cmake g++
}

ensure_maven() {
  command -v mvn >/dev/null || need_root_or_say "Apache Maven" maven
}

# Builds the CLI jar when it is missing or older than any source or pom.
build_if_needed() {
  find_jdk
  if [ -f "$MODELFS_JAR" ] && [ -z "$(find "$MODELFS_TOP" \( -path "$MODELFS_TOP/*/target" -o -name node_modules -o -name .git \) -prune -o \( -name '*.java' -o -name 'pom.xml' -o -name '*.properties' \) -newer "$MODELFS_JAR" -print -quit)" ]; then
    return 0
  fi
  ensure_maven
  say "building (mvn package)…"
  local log; log=$(mktemp)
  if ! (cd "$MODELFS_TOP" && mvn -q -B -Dstyle.color=never -DskipTests package) > "$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; die "build failed"
  fi
  rm -f "$log"
}

# The AOT cache of the serving commands (JDK 25: JEP 483's ahead-of-time class loading and linking, JEP 514's
# one-step -XX:AOTCacheOutput, JEP 515's method profiles): the JVM maps the classes a start-up loaded, as they were
# after loading (and linking, when the module graph allows it), instead of finding, parsing and verifying them
# again; BENCHMARKS.md "Start-up" (stop 42) has what it saves. One cache per key = the jar's SHA-256, the JDK's
# runtime version and the JVM flags (a cache made with other flags or another JDK is refused by the JVM), kept in
# ${XDG_CACHE_HOME:-~/.cache}/modelfs/aot/ ($MODELFS_AOT_DIR). Appends -XX:AOTCache to the array named $1 when this
# key's cache exists; else starts, once per key, a training run in the background (niced, detached: the hidden
# `modelfs aot-train`, which mounts demo's sample store and lists every view, then serves it over NFS on 127.0.0.1
# and reads it through a loopback client; its output in modelfs-KEY.aot.log) and adds nothing, so that this start
# runs as before and the next one uses the cache. A missing, stale, corrupt or refused cache never stops a start:
# the JVM then starts without it (its checksum is verified), and its AOT log lines are off. MODELFS_AOT=off opts out.
aot_flags() {
  local -n aot_into=$1
  [ "${MODELFS_AOT:-}" != off ] || return 0
  local dir="${MODELFS_AOT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/modelfs/aot}"
  mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ] || return 0
  local quiet=(-Xlog:aot*=off -Xlog:cds*=off)
  # a damaged cache that still looks like one crashes the JVM: its checksum is checked first (no measurable time;
  # a failed check starts without it)
  local use=(-XX:+VerifySharedSpaces "${quiet[@]}")
  # the jar's hash, computed once per version of the file (device, inode, size, mtime)
  # (under the launcher's `set -e`: nothing here may fail the start)
  local id; id="$dir/jar-$(stat -Lc '%d-%i-%s-%Y' "$MODELFS_JAR" 2>/dev/null)" || return 0
  local sum; sum=$(cat "$id" 2>/dev/null) || sum=
  if [ "${#sum}" != 64 ]; then
    sum=$(sha256sum < "$MODELFS_JAR" | cut -c1-64) || return 0
    { echo "$sum" > "$id.$$" && mv -f "$id.$$" "$id"; } 2>/dev/null || rm -f "$id.$$"
  fi
  local jdk; jdk=$(sed -n 's/^JAVA_RUNTIME_VERSION="\(.*\)"$/\1/p' "$JAVA_HOME/release" 2>/dev/null) || jdk=
  [ -n "$jdk" ] || jdk="$JAVA_HOME"
  local key; key=$(printf '%s\n' "$sum" "$jdk" "${aot_into[@]}" | sha256sum | cut -c1-16)
  local cache="$dir/modelfs-$key.aot"
  if [ -s "$cache" ]; then
    aot_into+=("-XX:AOTCache=$cache" "${use[@]}")
    return 0
  fi
  # at most one training run per key: its marker is made atomically and stays, also when the training fails
  ( set -o noclobber; : > "$cache.trained" ) 2>/dev/null || return 0
  # caches and markers unused for 30 days (older jars, JDKs) go
  find "$dir" -maxdepth 1 \( -name 'modelfs-*.aot' -atime +30 -o -name 'modelfs-*.aot.*' -mtime +30 -o -name 'jar-*' -mtime +30 \) \
    -delete 2>/dev/null || true
  # written beside the cache and renamed when whole: a start never sees half a cache (double fork: no zombie
  # under the exec'd JVM, nothing holding the caller's output open)
  ( cd / && setsid bash -c 'tmp=$1 cache=$2; shift 2; nice -n 19 "$@" aot-train && [ -s "$tmp" ] && mv -f "$tmp" "$cache"; rm -f "$tmp" "$tmp.config"' \
      aot-train "$cache.$$.tmp" "$cache" "$JAVA_HOME/bin/java" "${aot_into[@]}" "${quiet[@]}" \
      "-XX:AOTCacheOutput=$cache.$$.tmp" -jar "$MODELFS_JAR" < /dev/null > "$cache.log" 2>&1 & )
}

# Python venv with the pinned test clients (safetensors, gguf, numpy, ml_dtypes, torch, transformers).
ensure_python_venv() {
  local req="$MODELFS_TOP/integration-tests/python/requirements.txt"
  local venv="${MODELFS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/modelfs/venv}"
  local stamp="$venv/.requirements.sha256"
  local want; want=$(sha256sum "$req" | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    MODELFS_PYTHON="$venv/bin/python"; return 0
  fi
  command -v python3 >/dev/null || need_root_or_say "Python 3" python3 python3-venv
  python3 -m venv "$venv" 2>/dev/null || { need_root_or_say "python3-venv" python3-venv; python3 -m venv "$venv"; } || die "cannot create a venv at $venv"
  say "installing Python test packages into $venv (from the configured package indexes)…"
  # diffusers is a development build (requirements.txt admits pre-releases); CI machines keep its wheel
  # beside the checkout, a user's machine gets it from its package index
  local links=()
  [ -d "$MODELFS_TOP/../shared/wheels" ] && links=(--find-links "$MODELFS_TOP/../shared/wheels")
  "$venv/bin/pip" install --retries 0 --timeout 60 -q "${links[@]}" -r "$req" >&2 || die "pip install failed (see above); the test clients are required"
  echo "$want" > "$stamp"
  MODELFS_PYTHON="$venv/bin/python"
}

# llama.cpp as a test client: node-llama-cpp's prebuilt CPU build, pinned by package-lock.json.
ensure_node_client() {
  command -v node >/dev/null && command -v npm >/dev/null || need_root_or_say "Node.js >= 20 and npm" nodejs npm
  local dir="$MODELFS_TOP/integration-tests/node"
  local stamp="$dir/node_modules/.modelfs-lock.sha256"
  local want; want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing the llama.cpp test client (npm install in integration-tests/node)…"
    local try
    for try in 1 2 3; do      # the registry sometimes drops a connection (EIDLETIMEOUT): try again
      (cd "$dir" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --omit=optional --no-save --no-audit --no-fund \
          --prefer-offline --fetch-retries=5 --fetch-retry-mintimeout=5000 --fetch-timeout=120000) >&2 && break
      [ "$try" = 3 ] && die "npm install failed 3 times in $dir (llama.cpp client for the tests)"
      say "npm install failed (try $try of 3); retrying in 10 s…"; sleep 10
    done
    echo "$want" > "$stamp"
  fi
}

# llama.cpp's own Python converter (convert_hf_to_gguf.py + gguf-py), an independent oracle for the
# GGUF <-> Hugging Face views: node-llama-cpp ships the exact llama.cpp source its prebuilt binary was
# built from as a git bundle; clone it once beside node_modules (never committed).
ensure_llama_cpp_source() {
  local bundle="$MODELFS_TOP/integration-tests/node/node_modules/node-llama-cpp/llama/gitRelease.bundle"
  local dest="$MODELFS_TOP/integration-tests/node/node_modules/.llama.cpp-src"
  [ -f "$bundle" ] || die "llama.cpp source bundle missing at $bundle (npm install in integration-tests/node)"
  if [ ! -f "$dest/convert_hf_to_gguf.py" ]; then
    rm -rf "$dest"
    git clone -q "$bundle" "$dest" 2>/dev/null || die "cannot unpack the llama.cpp source bundle into $dest"
  fi
  export MODELFS_LLAMA_CPP_SRC="$dest"
}

# NFS test clients and the re-export server: libnfs's nfs-ls/nfs-cat/nfs-cp, and nfs-ganesha with its
# VFS backend (Debian's policy-rc.d keeps it from starting as a service; the tests start it themselves).
ensure_nfs_clients() {
  command -v nfs-cat >/dev/null && command -v nfs-ls >/dev/null && command -v nfs-cp >/dev/null \
    || need_root_or_say "libnfs command-line clients (nfs-ls, nfs-cat, nfs-cp)" libnfs-utils
  { command -v ganesha.nfsd || [ -x /usr/sbin/ganesha.nfsd ]; } >/dev/null && compgen -G '/usr/lib/*/ganesha/libfsalvfs.so' >/dev/null \
    || need_root_or_say "nfs-ganesha with the VFS backend (the re-export test)" nfs-ganesha nfs-ganesha-vfs
}

# The kernel NFS client test (KernelNfsClientTest): QEMU, busybox-static and the guest it boots, built
# once into ~/.cache/modelfs/qemu from Debian's linux-image-amd64 (integration-tests/qemu/build-guest.sh).
ensure_qemu_guest() {
  command -v qemu-system-x86_64 >/dev/null || need_root_or_say "QEMU (the kernel NFS client test)" --no-install-recommends qemu-system-x86
  { command -v busybox >/dev/null && ! ldd "$(command -v busybox)" >/dev/null 2>&1; } \
    || need_root_or_say "busybox-static (the userland of the kernel NFS test guest)" busybox-static
  bash "$MODELFS_TOP/integration-tests/qemu/build-guest.sh" "${XDG_CACHE_HOME:-$HOME/.cache}/modelfs/qemu" >/dev/null \
    || die "cannot build the kernel NFS test guest (see above)"
}

# The Debian package and its test (scripts/package.sh, DebianPackageTest): dpkg-deb, systemd-analyze.
ensure_packaging_tools() {
  command -v dpkg-deb >/dev/null || need_root_or_say "dpkg-deb (scripts/package.sh)" dpkg
  command -v systemd-analyze >/dev/null || need_root_or_say "systemd-analyze (checks the packaged units)" systemd
}

# The Prometheus server (Debian prometheus), which the metrics test starts itself to scrape a running
# mount; without its recommended node exporter (policy-rc.d, where present, keeps the service from starting).
ensure_prometheus() {
  command -v prometheus >/dev/null || need_root_or_say "the Prometheus server (the metrics test)" --no-install-recommends prometheus
}

# CPU load beside the soak test (SoakTest runs `stress-ng --cpu 2` for its duration: it must pass with both CPUs busy).
ensure_stress_ng() {
  command -v stress-ng >/dev/null || need_root_or_say "stress-ng (CPU load beside the soak test)" stress-ng
}

# Go's own text/template, the oracle of the chat-template translation (OllamaChatTemplatesTest builds
# integration-tests/go/render_template.go with it): Debian's golang-go, standard library only.
ensure_go() {
  command -v go >/dev/null || need_root_or_say "Go (the chat-template oracle)" --no-install-recommends golang-go
}
