/*
 * faultfs: a read-only pass-through FUSE 2 filesystem over a directory that misbehaves on demand, the lower
 * store of the stalled-store tests (StalledStoreTest; docs/SEMANTICS.md "When the store's disk fails").
 *
 *   faultfs SOURCE MOUNTPOINT CONTROL [fuse options]
 *
 * Before every operation it reads CONTROL again when its mtime or size changed. Each line is one fault:
 *   stall [PATTERN]          operations on paths containing PATTERN (every path without one) wait until the line is gone
 *   eio PATTERN START END    reads of paths containing PATTERN that touch bytes [START, END) fail with EIO
 *   short PATTERN N          reads of paths containing PATTERN return at most N bytes each
 * While operations wait on a stall, CONTROL.stalled holds how many (written at every change), so a test waits
 * for its readers to be stuck instead of sleeping.
 *   gone                     the tree is disconnected: the root lists nothing, every other path is ENOENT,
 *                            and reads of files already open fail with EIO (a share that went away)
 *   errno PATTERN N          writes to paths containing PATTERN (create, mkdir, write, truncate, rename to or from
 *                            it) fail with errno N: a disk that is full (28 ENOSPC), over quota (122 EDQUOT) or
 *                            read-only (30 EROFS); the cache-directory tests (CacheDiskFaultsTest)
 * Unknown lines are ignored. Mounted ro, it is a read-only store; mounted rw, writes pass through (the cache directory
 * of the tests), failing as the errno rules say.
 * Built by the tests with: gcc -O2 -Wall -o faultfs faultfs.c $(pkg-config --cflags --libs fuse)
 */
#define FUSE_USE_VERSION 26
#define _GNU_SOURCE
#include <fuse.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define MAX_RULES 64
#define PATTERN_MAX 512
#define PATH_BUF (2 * PATH_MAX)

enum kind { STALL, EIO_RANGE, SHORT, GONE, WRITE_ERRNO };

struct rule {
    enum kind kind;
    char pattern[PATTERN_MAX];
    long long a, b;
};

static char source[PATH_MAX];
static char control[PATH_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rule rules[MAX_RULES];
static int nrules;
static struct timespec control_mtime;
static off_t control_size = -1;
static char stalled_file[PATH_MAX + 16];
static int stalled_now;

/* Writes how many operations wait on a stall now (under lock). */
static void publish_stalled(int delta) {
    stalled_now += delta;
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp", stalled_file);
    FILE *f = fopen(tmp, "w");
    if (f != NULL) {
        fprintf(f, "%d\n", stalled_now);
        fclose(f);
        rename(tmp, stalled_file);
    }
}

/* Reads CONTROL again when it changed (under lock). */
static void reload(void) {
    struct stat st;
    if (stat(control, &st) != 0) {
        st.st_size = -2;
        st.st_mtim.tv_sec = 0;
        st.st_mtim.tv_nsec = 0;
    }
    if (st.st_size == control_size && st.st_mtim.tv_sec == control_mtime.tv_sec
            && st.st_mtim.tv_nsec == control_mtime.tv_nsec) {
        return;
    }
    control_size = st.st_size;
    control_mtime = st.st_mtim;
    nrules = 0;
    FILE *f = fopen(control, "r");
    if (f == NULL) {
        return;
    }
    char line[1024];
    while (nrules < MAX_RULES && fgets(line, sizeof line, f) != NULL) {
        struct rule r;
        memset(&r, 0, sizeof r);
        char word[32];
        int n = sscanf(line, "%31s %511s %lld %lld", word, r.pattern, &r.a, &r.b);
        if (n < 1) {
            continue;
        }
        if (strcmp(word, "stall") == 0) {
            r.kind = STALL;
            if (n < 2) {
                r.pattern[0] = 0;
            }
        } else if (strcmp(word, "eio") == 0 && n == 4) {
            r.kind = EIO_RANGE;
        } else if (strcmp(word, "short") == 0 && n == 3) {
            r.kind = SHORT;
        } else if (strcmp(word, "errno") == 0 && n == 3) {
            r.kind = WRITE_ERRNO;
        } else if (strcmp(word, "gone") == 0) {
            r.kind = GONE;
        } else {
            continue;
        }
        rules[nrules++] = r;
    }
    fclose(f);
}

static int matches(const struct rule *r, const char *path) {
    return r->pattern[0] == 0 || strstr(path, r->pattern) != NULL;
}

static int write_errno(const char *path);

/* Waits while a stall rule matches path; then returns whether the tree is disconnected. */
static int gate(const char *path) {
    int waited = 0;
    for (;;) {
        int stalled = 0, gone = 0;
        pthread_mutex_lock(&lock);
        reload();
        for (int i = 0; i < nrules; i++) {
            if (rules[i].kind == STALL && matches(&rules[i], path)) {
                stalled = 1;
            } else if (rules[i].kind == GONE) {
                gone = 1;
            }
        }
        if (stalled && !waited) {
            publish_stalled(1);
            waited = 1;
        } else if (!stalled && waited) {
            publish_stalled(-1);
        }
        pthread_mutex_unlock(&lock);
        if (!stalled) {
            return gone;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void real(char *out, const char *path) {
    snprintf(out, PATH_BUF, "%s%s", source, path);
}

static int ff_getattr(const char *path, struct stat *st) {
    int gone = gate(path);
    if (gone && strcmp(path, "/") != 0) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    return lstat(p, st) == 0 ? 0 : -errno;
}

static int ff_access(const char *path, int mask) {
    if (gate(path) && strcmp(path, "/") != 0) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    return access(p, mask) == 0 ? 0 : -errno;
}

static int ff_readlink(const char *path, char *buf, size_t size) {
    if (gate(path)) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    ssize_t n = readlink(p, buf, size - 1);
    if (n < 0) {
        return -errno;
    }
    buf[n] = 0;
    return 0;
}

static int ff_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi) {
    (void) off;
    (void) fi;
    int gone = gate(path);
    if (gone) {
        if (strcmp(path, "/") != 0) {
            return -ENOENT;
        }
        fill(buf, ".", NULL, 0);
        fill(buf, "..", NULL, 0);
        return 0;
    }
    char p[PATH_BUF];
    real(p, path);
    DIR *d = opendir(p);
    if (d == NULL) {
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = e->d_ino;
        st.st_mode = DTTOIF(e->d_type);
        if (fill(buf, e->d_name, &st, 0)) {
            break;
        }
    }
    closedir(d);
    return 0;
}

static int ff_open(const char *path, struct fuse_file_info *fi) {
    if (gate(path)) {
        return -ENOENT;
    }
    if ((fi->flags & O_ACCMODE) != O_RDONLY && write_errno(path)) {
        return -write_errno(path);
    }
    char p[PATH_BUF];
    real(p, path);
    int fd = open(p, fi->flags);
    if (fd < 0) {
        return -errno;
    }
    fi->fh = (uint64_t) fd;
    return 0;
}

static int ff_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    if (gate(path)) {
        return -EIO;
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        if (!matches(r, path)) {
            continue;
        }
        if (r->kind == EIO_RANGE && off < r->b && (long long) (off + size) > r->a) {
            pthread_mutex_unlock(&lock);
            return -EIO;
        }
        if (r->kind == SHORT && r->a > 0 && (long long) size > r->a) {
            size = (size_t) r->a;
        }
    }
    pthread_mutex_unlock(&lock);
    ssize_t n = pread((int) fi->fh, buf, size, off);
    return n < 0 ? -errno : (int) n;
}

static int ff_release(const char *path, struct fuse_file_info *fi) {
    (void) path;
    close((int) fi->fh);
    return 0;
}

static int ff_statfs(const char *path, struct statvfs *st) {
    gate(path);
    char p[PATH_BUF];
    real(p, "/");
    return statvfs(p, st) == 0 ? 0 : -errno;
}

/* The errno a write to path fails with under the rules (0: none). */
static int write_errno(const char *path) {
    int e = 0;
    pthread_mutex_lock(&lock);
    reload();
    for (int i = 0; i < nrules; i++) {
        if (rules[i].kind == WRITE_ERRNO && matches(&rules[i], path)) {
            e = (int) rules[i].a;
        }
    }
    pthread_mutex_unlock(&lock);
    return e;
}

static int ff_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
    int e = write_errno(path);
    if (gate(path)) {
        return -ENOENT;
    }
    if (e) {
        return -e;
    }
    char p[PATH_BUF];
    real(p, path);
    int fd = open(p, fi->flags | O_CREAT, mode);
    if (fd < 0) {
        return -errno;
    }
    fi->fh = (uint64_t) fd;
    return 0;
}

static int ff_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    int e = write_errno(path);
    if (gate(path)) {
        return -EIO;
    }
    if (e) {
        return -e;
    }
    ssize_t n = pwrite((int) fi->fh, buf, size, off);
    return n < 0 ? -errno : (int) n;
}

static int ff_mkdir(const char *path, mode_t mode) {
    int e = write_errno(path);
    if (gate(path)) {
        return -ENOENT;
    }
    if (e) {
        return -e;
    }
    char p[PATH_BUF];
    real(p, path);
    return mkdir(p, mode) == 0 ? 0 : -errno;
}

static int ff_unlink(const char *path) {
    if (gate(path)) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    return unlink(p) == 0 ? 0 : -errno;
}

static int ff_rmdir(const char *path) {
    if (gate(path)) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    return rmdir(p) == 0 ? 0 : -errno;
}

static int ff_rename(const char *from, const char *to) {
    int e = write_errno(from);
    e = e ? e : write_errno(to);
    if (gate(from) || gate(to)) {
        return -ENOENT;
    }
    if (e) {
        return -e;
    }
    char a[PATH_BUF], b[PATH_BUF];
    real(a, from);
    real(b, to);
    return rename(a, b) == 0 ? 0 : -errno;
}

static int ff_truncate(const char *path, off_t size) {
    int e = write_errno(path);
    if (gate(path)) {
        return -ENOENT;
    }
    if (e) {
        return -e;
    }
    char p[PATH_BUF];
    real(p, path);
    return truncate(p, size) == 0 ? 0 : -errno;
}

static int ff_utimens(const char *path, const struct timespec tv[2]) {
    if (gate(path)) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    return utimensat(AT_FDCWD, p, tv, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static int ff_chmod(const char *path, mode_t mode) {
    if (gate(path)) {
        return -ENOENT;
    }
    char p[PATH_BUF];
    real(p, path);
    return chmod(p, mode) == 0 ? 0 : -errno;
}

static int ff_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void) path;
    return (datasync ? fdatasync((int) fi->fh) : fsync((int) fi->fh)) == 0 ? 0 : -errno;
}

static struct fuse_operations ops = {
    .create = ff_create,
    .write = ff_write,
    .mkdir = ff_mkdir,
    .unlink = ff_unlink,
    .rmdir = ff_rmdir,
    .rename = ff_rename,
    .truncate = ff_truncate,
    .utimens = ff_utimens,
    .chmod = ff_chmod,
    .fsync = ff_fsync,
    .getattr = ff_getattr,
    .access = ff_access,
    .readlink = ff_readlink,
    .readdir = ff_readdir,
    .open = ff_open,
    .read = ff_read,
    .release = ff_release,
    .statfs = ff_statfs,
};

int main(int argc, char *argv[]) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SOURCE MOUNTPOINT CONTROL [fuse options]\n", argv[0]);
        return 2;
    }
    if (realpath(argv[1], source) == NULL || realpath(argv[3], control) == NULL) {
        perror("faultfs: realpath");
        return 2;
    }
    snprintf(stalled_file, sizeof stalled_file, "%s.stalled", control);
    /* fuse_main sees: faultfs MOUNTPOINT [options] */
    char *fargv[argc];
    int fargc = 0;
    fargv[fargc++] = argv[0];
    fargv[fargc++] = argv[2];
    for (int i = 4; i < argc; i++) {
        fargv[fargc++] = argv[i];
    }
    return fuse_main(fargc, fargv, &ops, NULL);
}
