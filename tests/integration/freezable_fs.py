#!/usr/bin/python3
"""freezable_fs.py SOURCE MOUNTPOINT FLAG: SOURCE passed through at MOUNTPOINT (FUSE), where
every call blocks -- neither answers nor fails -- while the file FLAG exists, as on a
hard-mounted NFS share whose server stopped answering. Removing FLAG lets the blocked calls
go on. Attributes and names are not cached by the kernel, so every stat(2) asks the file
system. Runs in the foreground (one thread per call) until unmounted.
"""
import errno
import os
import sys
import time

try:
    from fusepy import FUSE, FuseOSError, Operations  # Debian's python3-fusepy
except ImportError:
    from fuse import FUSE, FuseOSError, Operations


class Freezable(Operations):
    def __init__(self, source, flag):
        self.source = os.path.realpath(source)
        self.flag = flag

    def _path(self, path):
        # While FLAG exists nothing answers: the caller's thread sleeps in the kernel.
        while os.path.exists(self.flag):
            time.sleep(0.05)
        return os.path.join(self.source, path.lstrip("/"))

    def __call__(self, op, *args):
        try:
            return super().__call__(op, *args)
        except OSError as e:
            raise FuseOSError(e.errno or errno.EIO)

    def access(self, path, mode):
        if not os.access(self._path(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = os.lstat(self._path(path))
        return {k: getattr(st, k) for k in (
            "st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size",
            "st_atime", "st_mtime", "st_ctime")} | {
            "st_mtime_ns": st.st_mtime_ns}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._path(path))

    def chmod(self, path, mode):
        os.chmod(self._path(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self._path(path), uid, gid)

    def mkdir(self, path, mode):
        os.mkdir(self._path(path), mode)

    def rmdir(self, path):
        os.rmdir(self._path(path))

    def unlink(self, path):
        os.unlink(self._path(path))

    def rename(self, old, new):
        os.rename(self._path(old), self._path(new))

    def link(self, target, source):
        os.link(self._path(source), self._path(target))

    def symlink(self, target, source):
        os.symlink(source, self._path(target))

    def readlink(self, path):
        return os.readlink(self._path(path))

    def utimens(self, path, times=None):
        os.utime(self._path(path), times)

    def statfs(self, path):
        st = os.statvfs(self._path(path))
        return {k: getattr(st, k) for k in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree",
            "f_files", "f_flag", "f_frsize", "f_namemax")}

    def open(self, path, flags):
        return os.open(self._path(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def read(self, path, size, offset, fh):
        self._path(path)
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        self._path(path)
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        os.truncate(self._path(path), length)

    def flush(self, path, fh):
        self._path(path)

    def release(self, path, fh):
        os.close(fh)

    def fsync(self, path, datasync, fh):
        self._path(path)
        os.fsync(fh)

    def fsyncdir(self, path, datasync, fh):
        self._path(path)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: freezable_fs.py SOURCE MOUNTPOINT FLAG")
    source, mountpoint, flag = sys.argv[1:]
    FUSE(Freezable(source, flag), mountpoint, foreground=True, nothreads=False,
         attr_timeout=0, entry_timeout=0, negative_timeout=0, default_permissions=True)


if __name__ == "__main__":
    main()
