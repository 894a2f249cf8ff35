#!/bin/sh
# report.sh sums|stats|names DIR: one sorted line per file (sums), per path (stats) or per entry of DIR
# (names), with paths relative to DIR. KernelNfsClientTest runs it twice, with the guest's busybox on
# the kernel NFS mount and with the host's coreutils on the FUSE mount, and compares the outputs.
#   sums:  "<sha256> ./path", or "ERR <strerror> ./path" when the file cannot be opened or read
#   names: every entry but . and .. (modelfs nfs lists neither; docs/SEMANTICS.md)
#   stats: "<mode hex> <size> <inode> <mtime> <ctime> <links> <uid> <gid> ./path" (stat -c)
export TZ=UTC LC_ALL=C
cd "$2" || exit 1
case "$1" in
  sums)
    err=/tmp/report-sums.$$
    find . -type f | sort | while IFS= read -r f; do
      if s=$(sha256sum "$f" 2>"$err"); then
        echo "${s%% *} $f"
      else
        echo "ERR $(sed -n '$s/.*: //p' "$err") $f"
      fi
    done
    rm -f "$err" ;;
  stats) find . -exec stat -c '%f %s %i %y %z %h %u %g %n' {} + | sort ;;
  names) ls -A | sort ;;
  *) echo "usage: report.sh sums|stats|names DIR" >&2; exit 1 ;;
esac
