/* real_libc.c: pf_real.h outside the interposer: the C library itself. */
#include <fcntl.h>
#include <unistd.h>

#include "pf_real.h"

int pf_real_dupfd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

int pf_real_close(int fd)
{
	return close(fd);
}

int pf_real_fadvise(int fd, off_t off, off_t len, int advice)
{
	return posix_fadvise(fd, off, len, advice);
}
