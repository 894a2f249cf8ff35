#!/usr/bin/env bash
# Builds the Debian package target/modelfs_<version>_amd64.deb (prints its path): the CLI with a
# jlinked Java runtime (jpackage application image, including jdk.incubator.vector, and bin/java
# for `--daemon`), so the machine needs no JDK. It installs
#   /usr/bin/modelfs                           the command (picks the launcher, as ./modelfs does)
#   /usr/lib/modelfs/                          jpackage's image: bin/modelfs, bin/modelfs-vector, lib/
#                                              (lib/app/modelfs-vector.aot: bin/modelfs-vector's AOT cache)
#   /usr/lib/systemd/system/modelfs-{mount,nfs}.service   contrib/systemd, as they are
#   /usr/share/man/man1/modelfs.1.gz           made from the command's own --help
#   /usr/share/doc/modelfs/copyright
# and depends on fuse and libfuse2. Usage: scripts/package.sh [OUT_DIR]   (default: target/)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
build_if_needed
for tool in jpackage jlink jdeps; do
  [ -x "$JAVA_HOME/bin/$tool" ] || die "$JAVA_HOME has no $tool (a full JDK >= 25 is needed to package)"
done
command -v dpkg-deb >/dev/null || need_root_or_say "dpkg-deb" dpkg

out="${1:-$MODELFS_TOP/target}"
mkdir -p "$out"
pom_version=$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$MODELFS_TOP/pom.xml" | head -n1)
[ -n "$pom_version" ] || die "no <version> in pom.xml"
version=${pom_version//-/\~}              # 0.1.0-SNAPSHOT -> 0.1.0~SNAPSHOT (sorts before 0.1.0)
numeric=${pom_version%%[-~]*}             # what jpackage accepts as --app-version
deb="$out/modelfs_${version}_amd64.deb"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/input"
cp "$MODELFS_JAR" "$work/input/modelfs.jar"

# The runtime: the modules the jar uses (jdeps), the Vector API, and not java.desktop (only Jackson's
# optional java.beans support refers to it, and it would pull X11 libraries in).
modules=$("$JAVA_HOME/bin/jdeps" --ignore-missing-deps --print-module-deps --multi-release 25 "$MODELFS_JAR" \
  | tr ',' '\n' | cat - <(echo jdk.incubator.vector) | grep -vx 'java.desktop' | sort -u | paste -sd, -)

# Two launchers with the JVM flags of ./modelfs: bin/modelfs, and bin/modelfs-vector with the Vector
# API kernels (the JVM prints a warning line when it loads the incubator module, so only the commands
# that convert use that one). bin/modelfs-vector, which starts the serving commands, starts from the AOT cache
# trained below (as ./modelfs does, scripts/lib.sh aot_flags; verified, and silently ignored when missing or refused).
aot_use="-XX:AOTCache=\$APPDIR/modelfs-vector.aot -XX:+VerifySharedSpaces -Xlog:aot*=off -Xlog:cds*=off"
printf 'java-options=%s\n' "${MODELFS_JVM_FLAGS[*]} ${MODELFS_VECTOR_FLAGS[*]} $aot_use" > "$work/vector.properties"
say "jpackage: application image with a jlinked runtime ($modules)"
"$JAVA_HOME/bin/jpackage" --type app-image --name modelfs --app-version "$numeric" \
  --input "$work/input" --main-jar modelfs.jar --main-class dev.modelfs.cli.Main \
  --add-modules "$modules" --jlink-options '--strip-debug --no-header-files --no-man-pages' \
  --java-options "${MODELFS_JVM_FLAGS[*]}" --add-launcher modelfs-vector="$work/vector.properties" \
  --dest "$work/image" >&2

root="$work/root"
mkdir -p "$root/DEBIAN" "$root/usr/lib" "$root/usr/bin" "$root/usr/lib/systemd/system" \
  "$root/usr/share/man/man1" "$root/usr/share/doc/modelfs"
cp -a "$work/image/modelfs" "$root/usr/lib/modelfs"

# bin/modelfs-vector's AOT cache (JDK 25 -XX:AOTCacheOutput): one training run of the hidden `modelfs aot-train`
# (demo's sample store mounted and listed, then served over NFS on 127.0.0.1 and read) by the packaged runtime with
# that launcher's flags and class path. The cache records the class path, which the JVM matches after the common
# prefix of here and /usr/lib/modelfs, and the jar's size and mtime, which dpkg keeps. Without FUSE here it trains the NFS part only; a failed training leaves the
# package without a cache, and it starts as before.
app="$root/usr/lib/modelfs"
say "AOT cache of bin/modelfs-vector: a training run of modelfs aot-train"
if ! "$app/lib/runtime/bin/java" "${MODELFS_JVM_FLAGS[@]}" "${MODELFS_VECTOR_FLAGS[@]}" -Xlog:aot*=off -Xlog:cds*=off \
    -XX:AOTCacheOutput="$app/lib/app/modelfs-vector.aot" -cp "$app/lib/app/modelfs.jar" dev.modelfs.cli.Main aot-train \
    > "$work/aot-train.log" 2>&1 || [ ! -s "$app/lib/app/modelfs-vector.aot" ]; then
  say "no AOT cache in the package (its training run failed; the package starts without it):"
  tail -n 5 "$work/aot-train.log" >&2
  rm -f "$app/lib/app/modelfs-vector.aot" "$app/lib/app/modelfs-vector.aot.config"
fi
cat > "$root/usr/bin/modelfs" <<'EOF'
#!/bin/bash
# modelfs (Debian package): the commands that dequantize get the Vector API kernels, as with ./modelfs
# (MODELFS_KERNELS=scalar opts out). The JVM announces the incubator module on stderr before main() runs,
# even for a usage error; the mount's first line names the kernels instead, so that one line is dropped.
case "${1:-}" in
  mount|demo|nfs) [ "${MODELFS_KERNELS:-}" = scalar ] || exec /usr/lib/modelfs/bin/modelfs-vector "$@" \
    2> >(grep --line-buffered -vx 'WARNING: Using incubator modules: jdk.incubator.vector' >&2) ;;
esac
exec /usr/lib/modelfs/bin/modelfs "$@"
EOF
chmod 755 "$root/usr/bin/modelfs"
install -m 644 "$MODELFS_TOP"/contrib/systemd/modelfs-mount.service "$MODELFS_TOP"/contrib/systemd/modelfs-nfs.service \
  "$root/usr/lib/systemd/system/"

# The man page: the command's own --help, for the command and each subcommand it lists.
bin="$root/usr/lib/modelfs/bin/modelfs"
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
{
  printf '.TH MODELFS 1 "" "modelfs %s" "User Commands"\n' "$version"
  printf '.SH NAME\nmodelfs \\- Ollama models as ordinary files: a read-only FUSE filesystem and NFSv3 server\n'
  printf '.SH SYNOPSIS\n.nf\n'; "$bin" --help | roff; printf '.fi\n'
  for cmd in $("$bin" --help | sed -n '/^Commands:/,$s/^  \([a-z][a-z-]*\).*/\1/p' | grep -vx help); do
    printf '.SH "modelfs %s"\n.nf\n' "$cmd"; "$bin" "$cmd" --help | roff; printf '.fi\n'
  done
  printf '.SH FILES\n.nf\n/usr/lib/systemd/system/modelfs-mount.service\n/usr/lib/systemd/system/modelfs-nfs.service\n.fi\n'
  printf '.SH SEE ALSO\nfusermount(1), mount.nfs(8), systemctl(1)\n'
} | gzip -9n > "$root/usr/share/man/man1/modelfs.1.gz"
printf 'Files: *\nCopyright: the modelfs authors\nComment: the bundled Java runtime is OpenJDK (GPL-2.0 with the Classpath Exception)\n' \
  > "$root/usr/share/doc/modelfs/copyright"

cat > "$root/DEBIAN/control" <<EOF
Package: modelfs
Version: $version
Architecture: amd64
Section: utils
Priority: optional
Maintainer: modelfs maintainers <modelfs@localhost>
Depends: fuse, libfuse2, libc6
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Description: Ollama models as ordinary files (read-only FUSE filesystem, NFSv3 server)
 modelfs mounts an Ollama model store so that each model is a folder of ordinary files:
 the original GGUF, reassembled safetensors, Hugging Face folders and dequantized variants.
 modelfs nfs serves the same tree over NFSv3. Includes its own Java runtime and systemd units.
EOF
# let systemd see the units (not enabled, not started: the store path and user need a look first)
cat > "$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload >/dev/null 2>&1 || true; fi
EOF
cp "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
dpkg-deb --root-owner-group -Zgzip -b "$root" "$deb" >&2
echo "$deb"
