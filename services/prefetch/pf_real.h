/*
 * pf_real.h: the C library's own calls, for code that runs inside the
 * interposer as well as in the manager.  In libloggp-prefetch.so they are the
 * next definitions (dlsym RTLD_NEXT, interpose.c), so the prefetcher's own
 * descriptors and advice are never tracked; elsewhere the C library's
 * (real_libc.c).
 */
#ifndef PF_REAL_H
#define PF_REAL_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A close-on-exec duplicate, or -1 with errno. */
int pf_real_dupfd(int fd);
int pf_real_close(int fd);
int pf_real_fadvise(int fd, off_t off, off_t len, int advice);

#ifdef __cplusplus
}
#endif

#endif
