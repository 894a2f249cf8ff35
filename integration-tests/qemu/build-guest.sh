#!/usr/bin/env bash
# Builds (once) the QEMU guest that KernelNfsClientTest boots: the real kernel of Debian's
# linux-image-amd64 (downloaded with apt-get download, unpacked with dpkg -x, never installed) and a
# busybox-static initramfs holding the kernel's e1000 and NFS client modules, `init` and `report.sh`.
#   build-guest.sh CACHE_DIR     prints CACHE_DIR/vmlinuz and CACHE_DIR/initrd.gz, one a line
# The guest is rebuilt when init, report.sh or this script change; the kernel package is kept.
# Exits non-zero, saying why, when the kernel package or busybox-static cannot be had.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:?usage: build-guest.sh CACHE_DIR}"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 600 9 || { echo "build-guest.sh: $cache is locked by another build" >&2; exit 2; }

want=$(cat "$here/build-guest.sh" "$here/init" "$here/report.sh" | sha256sum | cut -d' ' -f1)
if [ -f "$cache/vmlinuz" ] && [ -f "$cache/initrd.gz" ] && [ "$(cat "$cache/stamp" 2>/dev/null)" = "$want" ]; then
  printf '%s\n' "$cache/vmlinuz" "$cache/initrd.gz"; exit 0
fi

busybox=$(command -v busybox || echo /bin/busybox)
[ -x "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 \
  || { echo "build-guest.sh: no statically linked busybox (apt-get install busybox-static)" >&2; exit 2; }

# The kernel: the package linux-image-amd64 depends on, downloaded once and kept in the cache.
if ! compgen -G "$cache/linux-image-*.deb" >/dev/null; then
  depends() { apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1; }
  pkg=$(depends)
  [ -n "$pkg" ] || { apt-get update -qq >/dev/null 2>&1 || true; pkg=$(depends); }
  [ -n "$pkg" ] || { echo "build-guest.sh: apt-cache knows no linux-image-amd64 (apt-get update?)" >&2; exit 2; }
  (cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || { echo "build-guest.sh: apt-get download $pkg failed" >&2; exit 2; }
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$(compgen -G "$cache/linux-image-*.deb" | head -n1)" "$work/kernel"
vmlinuz=$(compgen -G "$work/kernel/boot/vmlinuz-*" | head -n1)
kver=${vmlinuz##*/vmlinuz-}
moddir="$work/kernel/lib/modules/$kver"

# The initramfs: busybox, init, report.sh and the modules e1000 and nfsv3 need, dependencies first
# (each .ko's .modinfo "depends=" names the modules it needs; Debian's modules are not compressed).
root="$work/root"
mkdir -p "$root"/{bin,dev,proc,sys,mnt,many,tmp,lib/modules}
cp "$busybox" "$root/bin/busybox"
cp "$here/init" "$root/init"; cp "$here/report.sh" "$root/bin/report.sh"; chmod 755 "$root/init" "$root/bin/report.sh"
declare -A seen=()
order=()
add_module() {
  local name=$1 ko deps d
  [ -n "${seen[$name]:-}" ] && return 0
  seen[$name]=1
  ko=$(find "$moddir/kernel" -name "$name.ko" -print -quit)
  [ -n "$ko" ] || { echo "build-guest.sh: module $name not found in $kver" >&2; exit 2; }
  deps=$(tr '\0' '\n' < "$ko" | sed -n 's/^depends=//p' | head -n1)
  for d in ${deps//,/ }; do add_module "$d"; done
  cp "$ko" "$root/lib/modules/$name.ko"
  order+=("$name")
}
add_module e1000
add_module nfsv3
printf '%s\n' "${order[@]}" > "$root/lib/modules/order"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1) > "$cache/initrd.gz.tmp"
cp "$vmlinuz" "$cache/vmlinuz.tmp"
mv "$cache/initrd.gz.tmp" "$cache/initrd.gz"; mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
echo "$want" > "$cache/stamp"
printf '%s\n' "$cache/vmlinuz" "$cache/initrd.gz"
