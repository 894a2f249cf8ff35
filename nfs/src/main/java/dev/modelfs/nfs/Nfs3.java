package dev.modelfs.nfs;

/** Numbers of the NFS version 3 protocol (RFC 1813): program, procedures, status codes, access bits. */
final class Nfs3 {
    private Nfs3() {}

    static final int PROGRAM = 100003;
    static final int VERSION = 3;

    // procedures
    static final int NULL = 0, GETATTR = 1, SETATTR = 2, LOOKUP = 3, ACCESS = 4, READLINK = 5, READ = 6, WRITE = 7,
            CREATE = 8, MKDIR = 9, SYMLINK = 10, MKNOD = 11, REMOVE = 12, RMDIR = 13, RENAME = 14, LINK = 15,
            READDIR = 16, READDIRPLUS = 17, FSSTAT = 18, FSINFO = 19, PATHCONF = 20, COMMIT = 21;

    // nfsstat3
    static final int OK = 0, ERR_NOENT = 2, ERR_IO = 5, ERR_ACCES = 13, ERR_NOTDIR = 20, ERR_ISDIR = 21, ERR_INVAL = 22,
            ERR_ROFS = 30, ERR_NAMETOOLONG = 63, ERR_STALE = 70, ERR_BADHANDLE = 10001, ERR_BAD_COOKIE = 10003,
            ERR_TOOSMALL = 10005, ERR_SERVERFAULT = 10006;

    // ftype3
    static final int NF3REG = 1, NF3DIR = 2;

    // ACCESS bits
    static final int ACCESS_READ = 0x01, ACCESS_LOOKUP = 0x02, ACCESS_EXECUTE = 0x20;

    /** FSINFO properties: every file has the same properties (no links, no settable times). */
    static final int FSF3_HOMOGENEOUS = 0x08;

    /** Largest READ served (FSINFO rtmax) and directory read preference. */
    static final int RTMAX = 1024 * 1024;
    static final int DTPREF = 64 * 1024;
    /** Largest WRITE a client may send (FSINFO wtmax; every write is refused): bounds call records. */
    static final int WTMAX = 64 * 1024;

    /** Fixed size of an encoded fattr3. */
    static final int FATTR3_BYTES = 84;
    /** Largest nfs_fh3 the protocol allows. */
    static final int FHSIZE3 = 64;
}
