/*
 * Preloaded into 'nvmefs ublk add' by test-ublk.sh: mapping any ublk queue
 * but the first fails, as the kernel would refuse it, so the daemon fails
 * to start with its first queue's thread already running and its commands
 * fetched.  Only mmap() of a /dev/ublkcN at a queue's offset past the
 * first (the descriptors of queue 0 are at offset 0) is refused.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*real)(void *, size_t, int, int, int, off_t);
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (fd >= 0 && off > 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			if (!strncmp(path, "/dev/ublkc", strlen("/dev/ublkc"))) {
				errno = ENOMEM;
				return MAP_FAILED;
			}
		}
	}
	*(void **)&real = dlsym(RTLD_NEXT, "mmap");
	return real(addr, len, prot, flags, fd, off);
}
