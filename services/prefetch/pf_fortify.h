/*
 * pf_fortify.h: glibc's fortified entry points, which its headers declare
 * only with _FORTIFY_SOURCE (and then as inline redirects).  The
 * interposer defines them; its test program calls them directly.
 */
#ifndef PF_FORTIFY_H
#define PF_FORTIFY_H

#include <stdio.h>
#include <sys/types.h>

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);

#endif
