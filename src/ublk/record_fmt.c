/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device's record, the file its daemon keeps under NVMEFS_UBLK_RUN_DIR:
 * a line each for the subsystem NQN, the namespace, the daemon's PID and
 * its namespace's state (live or gone), then the number of the daemon's
 * options recorded for ublk recover and those options, a line each.
 * Read by list, del and recover, which trust nothing in it: a file under
 * /run outlives the daemon that wrote it and may be left half-written.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "devices.h"

int nvmefs_ublk_record_write(FILE *f, const struct nvmefs_ublk_record *r)
{
	if (r->nr_args > NVMEFS_UBLK_MAX_ARGS)
		return -EINVAL;
	for (unsigned int i = 0; i < r->nr_args; i++)
		if (strchr(r->args[i], '\n'))
			return -EINVAL;
	if (fprintf(f, "%s\n%" PRIu32 "\n%ld\n%s\n%u\n", r->nqn, r->nsid, r->pid,
		    r->gone ? "gone" : "live", r->nr_args) < 0)
		return -EIO;
	for (unsigned int i = 0; i < r->nr_args; i++)
		if (fprintf(f, "%s\n", r->args[i]) < 0)
			return -EIO;
	return 0;
}

/* The next line of @f without its newline in *@line (getline's buffer of
 * *@cap bytes): its length, or -1 at the end or for a line with none. */
static ssize_t next_line(FILE *f, char **line, size_t *cap)
{
	ssize_t n = getline(line, cap, f);

	if (n <= 0 || (*line)[n - 1] != '\n')
		return -1;
	(*line)[--n] = '\0';
	return n;
}

/* Line @s as a number from @min to @max: 0, or -EINVAL. */
static int number(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v < min || *v > max ? -EINVAL : 0;
}

void nvmefs_ublk_record_free(struct nvmefs_ublk_record *r)
{
	for (unsigned int i = 0; r->args && i < r->nr_args; i++)
		free(r->args[i]);
	free(r->args);
	r->args = NULL;
	r->nr_args = 0;
}

int nvmefs_ublk_record_read(FILE *f, struct nvmefs_ublk_record *r)
{
	char *line = NULL;
	size_t cap = 0;
	uint64_t v, nr = 0;
	ssize_t n;
	int ret = -EINVAL;

	memset(r, 0, sizeof(*r));
	n = next_line(f, &line, &cap);
	if (n <= 0 || (size_t)n >= sizeof(r->nqn) || strpbrk(line, " \t"))
		goto out;
	memcpy(r->nqn, line, (size_t)n + 1);
	if (next_line(f, &line, &cap) < 0 || number(line, 1, UINT32_MAX, &v))
		goto out;
	r->nsid = (uint32_t)v;
	if (next_line(f, &line, &cap) < 0 || number(line, 1, INT32_MAX, &v))
		goto out;
	r->pid = (long)v;
	if (next_line(f, &line, &cap) < 0 || (strcmp(line, "live") && strcmp(line, "gone")))
		goto out;
	r->gone = !strcmp(line, "gone");
	if (next_line(f, &line, &cap) < 0 || number(line, 0, NVMEFS_UBLK_MAX_ARGS, &nr))
		goto out;
	if (nr) {
		r->args = calloc(nr, sizeof(*r->args));
		if (!r->args) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (; r->nr_args < nr; r->nr_args++) {
		if (next_line(f, &line, &cap) < 0)
			goto out;
		r->args[r->nr_args] = strdup(line);
		if (!r->args[r->nr_args]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = 0;
out:
	free(line);
	if (ret < 0)
		nvmefs_ublk_record_free(r);
	return ret;
}

void nvmefs_ublk_record_path(char *path, size_t len, int id)
{
	snprintf(path, len, NVMEFS_UBLK_RUN_DIR "/%d", id);
}

void nvmefs_ublk_stats_path(char *path, size_t len, long pid)
{
	snprintf(path, len, NVMEFS_UBLK_RUN_DIR "/%ld.stats", pid);
}
