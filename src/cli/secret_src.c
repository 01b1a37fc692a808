/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Secrets from an option, a file or the environment (secret_src.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "secret_src.h"

char *secret_page(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Best effort: the library locks its own parsed copy for good. */
	(void)mlock(p, size);
	(void)madvise(p, size, MADV_DONTDUMP);
	return p;
}

void secret_page_free(char *page, size_t size)
{
	if (!page)
		return;
	explicit_bzero(page, size);
	munmap(page, size);
}

/* Copy @len bytes of @src and a NUL into @buf, unless they do not fit. */
static int copy_in(const char *cmd, const char *from, const char *what, const char *src,
		   size_t len, char *buf, size_t size)
{
	if (!len)
		return usage_error(cmd, "%s is empty", from);
	if (len >= size)
		return usage_error(cmd, "%s is %zu characters long; %s is at most %zu", from, len,
				   what, size - 1);
	memcpy(buf, src, len);
	buf[len] = '\0';
	return EXIT_OK;
}

int secret_from_arg(const char *cmd, const char *opt, const char *what, char *arg, char *buf,
		    size_t size)
{
	size_t len = strlen(arg);
	int ret = copy_in(cmd, opt, what, arg, len, buf, size);

	memset(arg, 'x', len);
	return ret;
}

int secret_from_file(const char *cmd, const char *opt, const char *what, const char *path,
		     char *buf, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd;

	if (!*path)
		return usage_error(cmd, "%s needs a file name, got an empty one", opt);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return usage_error(cmd, "%s: cannot open %s: %s", opt, path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return usage_error(cmd, "%s: %s is not a regular file", opt, path);
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		close(fd);
		return usage_error(cmd, "%s: %s can be read or written by other users (mode %04o): "
				   "'chmod 600 %s' so that only its owner can", opt, path,
				   (unsigned int)(st.st_mode & 07777), path);
	}
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return usage_error(cmd, "%s: reading %s failed: %s", opt, path, strerror(errno));
	if ((size_t)n == size) {
		explicit_bzero(buf, size);
		return usage_error(cmd, "%s: %s holds more than %s (%zu bytes or more)", opt, path,
				   what, size);
	}
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (!n)
		return usage_error(cmd, "%s: %s is empty", opt, path);
	return EXIT_OK;
}

int secret_from_env(const char *cmd, const char *name, const char *what, char *buf,
		    size_t size, int *found)
{
	char *value = getenv(name);
	size_t len;
	int ret;

	*found = value != NULL;
	if (!value)
		return EXIT_OK;
	len = strlen(value);
	ret = buf ? copy_in(cmd, name, what, value, len, buf, size) : EXIT_OK;
	/* getenv()'s string is the one /proc/PID/environ shows. */
	explicit_bzero(value, len);
	unsetenv(name);
	return ret;
}
