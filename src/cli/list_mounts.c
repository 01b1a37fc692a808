/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `nvmefs list`'s findings: the fuse.nvmefs lines of a mountinfo file, and
 * what each mount's info and stats files say.  The files are read by a child
 * process, so that a daemon that stopped answering (its open(2) waits for
 * ever) costs the listing a timeout, not the command.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "list.h"

/* ---------------------------------------------------------------------- */
/* mountinfo                                                               */
/* ---------------------------------------------------------------------- */

/* The kernel writes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* Whether the comma-separated @opts hold @name=VALUE; VALUE into *@value. */
static bool option_value(const char *opts, const char *name, unsigned long *value)
{
	size_t len = strlen(name);

	for (const char *p = opts; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		char *end;

		if (strncmp(p, name, len) || p[len] != '=')
			continue;
		errno = 0;
		*value = strtoul(p + len + 1, &end, 10);
		return !errno && end != p + len + 1 && (*end == ',' || !*end);
	}
	return false;
}

static bool option_present(const char *opts, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = opts; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
	}
	return false;
}

/*
 * FUSE lets a mount's files be read by its owner, or by anyone with
 * allow_other; root is shown every mount, and told when it cannot read one.
 */
static bool visible(const char *super_opts, uid_t uid)
{
	unsigned long owner;

	if (uid == 0 || option_present(super_opts, "allow_other"))
		return true;
	return option_value(super_opts, "user_id", &owner) && owner == uid;
}

/*
 * A mountinfo line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] -
 * FSTYPE SOURCE SUPER_OPTS.  Points *@mountpoint, *@source and *@super_opts
 * into @line (unescaped) when it is an nvmefs mount.
 */
static bool nvmefs_line(char *line, char **mountpoint, char **source, char **super_opts)
{
	char *save = NULL, *field[5] = { NULL }, *tok;
	int i = 0;

	line[strcspn(line, "\n")] = '\0';
	for (tok = strtok_r(line, " ", &save); tok && i < 5; tok = strtok_r(NULL, " ", &save))
		field[i++] = tok;
	if (i < 5)
		return false;
	while (tok && strcmp(tok, "-"))
		tok = strtok_r(NULL, " ", &save);
	tok = tok ? strtok_r(NULL, " ", &save) : NULL;
	if (!tok || strcmp(tok, "fuse.nvmefs"))
		return false;
	*source = strtok_r(NULL, " ", &save);
	*super_opts = strtok_r(NULL, " ", &save);
	if (!*source || !*super_opts)
		return false;
	*mountpoint = field[4];
	unescape_octal(*mountpoint);
	unescape_octal(*source);
	return true;
}

/* ---------------------------------------------------------------------- */
/* Reading a mount's files, bounded                                        */
/* ---------------------------------------------------------------------- */

/* The child's report of one file: its -errno or 0, then its length and bytes. */
struct frame {
	int32_t error;
	uint32_t len;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* In the child: FILE's frame to @fd. */
static int send_file(int fd, const char *dir, const char *name, char *buf)
{
	struct frame f = { 0, 0 };
	char path[PATH_MAX];
	FILE *in;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		f.error = -ENAMETOOLONG;
	} else if (!(in = fopen(path, "re"))) {
		f.error = -errno;
	} else {
		size_t n = fread(buf, 1, LIST_FILE_MAX + 1, in);

		if (ferror(in))
			f.error = -EIO;
		else if (n > LIST_FILE_MAX)
			f.error = -EFBIG;
		else
			f.len = (uint32_t)n;
		fclose(in);
	}
	if (write_all(fd, &f, sizeof(f)) || write_all(fd, buf, f.len))
		return -1;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* All the child writes, until it closes the pipe or @timeout_ms pass. */
static int collect(int fd, int timeout_ms, char **buf, size_t *len)
{
	size_t cap = 0, max = 2 * (sizeof(struct frame) + LIST_FILE_MAX);
	int64_t deadline = now_ms() + timeout_ms;

	*buf = NULL;
	*len = 0;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
		if (*len == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nbuf;

			if (cap >= max)
				return -EFBIG;
			nbuf = realloc(*buf, ncap);
			if (!nbuf)
				return -ENOMEM;
			*buf = nbuf;
			cap = ncap;
		}
		n = read(fd, *buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		*len += (size_t)n;
	}
}

/* The next frame of @buf, as a string of its own. */
static int take_frame(const char *buf, size_t len, size_t *pos, char **text)
{
	struct frame f;

	if (len - *pos < sizeof(f))
		return -EIO;
	memcpy(&f, buf + *pos, sizeof(f));
	*pos += sizeof(f);
	if (f.error)
		return f.error < 0 ? f.error : -EIO;
	if (f.len > len - *pos)
		return -EIO;
	*text = strndup(buf + *pos, f.len);
	if (!*text)
		return -ENOMEM;
	*pos += f.len;
	return 0;
}

/*
 * The info and stats files of the mount at @dir, as strings to free.
 * 0, or -errno (ETIMEDOUT: the mount did not answer in time).
 */
static int read_files(const char *dir, int timeout_ms, char **info, char **stats)
{
	size_t len = 0, pos = 0;
	int fds[2], ret, status;
	char *buf = NULL;
	pid_t pid;

	*info = *stats = NULL;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (!pid) {
		char *file = malloc(LIST_FILE_MAX + 1);

		close(fds[0]);
		_exit(!file || send_file(fds[1], dir, "info", file) ||
		      send_file(fds[1], dir, "stats", file));
	}
	close(fds[1]);
	ret = collect(fds[0], timeout_ms, &buf, &len);
	close(fds[0]);
	/* A child stuck in the mount's open(2) dies of SIGKILL: FUSE's waits are killable. */
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ret)
		ret = take_frame(buf, len, &pos, info);
	if (!ret)
		ret = take_frame(buf, len, &pos, stats);
	free(buf);
	if (ret) {
		free(*info);
		*info = NULL;
	}
	return ret;
}

/* ---------------------------------------------------------------------- */
/* What the files say                                                      */
/* ---------------------------------------------------------------------- */

/* Member @key of @obj, of @type, or NULL. */
static struct json_object *member(struct json_object *obj, const char *key, json_type type)
{
	struct json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

/* A copy of string member @key: 0, -EBADMSG when it is missing, -ENOMEM. */
static int get_string(struct json_object *obj, const char *key, char **out)
{
	struct json_object *v = member(obj, key, json_type_string);

	if (!v)
		return -EBADMSG;
	*out = strdup(json_object_get_string(v));
	return *out ? 0 : -ENOMEM;
}

static int get_u64(struct json_object *obj, const char *key, uint64_t max, uint64_t *out)
{
	struct json_object *v = member(obj, key, json_type_int);

	/* json-c reads a negative number as a negative int64 (a huge one as INT64_MAX). */
	if (!v || json_object_get_int64(v) < 0)
		return -EBADMSG;
	*out = json_object_get_uint64(v);
	return *out <= max ? 0 : -EBADMSG;
}

static int parse_paths(struct list_mount *m, struct json_object *info, struct json_object *stats)
{
	struct json_object *ipaths = member(info, "paths", json_type_array);
	struct json_object *spaths = member(stats, "paths", json_type_array);
	size_t n;
	int ret;

	if (!ipaths) {
		/* One path: info names it (since nvmefs 0.2), stats has no paths. */
		m->paths = calloc(1, sizeof(*m->paths));
		if (!m->paths)
			return -ENOMEM;
		m->nr_paths = 1;
		if (!member(info, "trtype", json_type_string))
			return 0;
		if ((ret = get_string(info, "trtype", &m->paths[0].trtype)) ||
		    (ret = get_string(info, "traddr", &m->paths[0].traddr)) ||
		    (ret = get_string(info, "trsvcid", &m->paths[0].trsvcid)))
			return ret;
		return 0;
	}
	n = json_object_array_length(ipaths);
	if (!n || !spaths || json_object_array_length(spaths) != n)
		return -EBADMSG;
	if ((ret = get_string(info, "iopolicy", &m->iopolicy)))
		return ret;
	m->paths = calloc(n, sizeof(*m->paths));
	if (!m->paths)
		return -ENOMEM;
	m->nr_paths = n;
	for (size_t i = 0; i < n; i++) {
		struct json_object *ip = json_object_array_get_idx(ipaths, i);
		struct json_object *sp = json_object_array_get_idx(spaths, i);
		struct list_path *p = &m->paths[i];

		if ((ret = get_string(ip, "trtype", &p->trtype)) ||
		    (ret = get_string(ip, "traddr", &p->traddr)) ||
		    (ret = get_string(ip, "trsvcid", &p->trsvcid)) ||
		    (ret = get_string(sp, "state", &p->state)))
			return ret;
	}
	return 0;
}

static int parse_namespaces(struct list_mount *m, struct json_object *info)
{
	struct json_object *ns = member(info, "namespaces", json_type_array);
	size_t n;
	int ret;

	if (!ns)
		return -EBADMSG;
	n = json_object_array_length(ns);
	if (!n)
		return 0;
	m->ns = calloc(n, sizeof(*m->ns));
	if (!m->ns)
		return -ENOMEM;
	m->nr_ns = n;
	for (size_t i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(ns, i);
		uint64_t nsid;

		if ((ret = get_string(o, "file", &m->ns[i].file)) ||
		    (ret = get_u64(o, "nsid", UINT32_MAX, &nsid)) ||
		    (ret = get_u64(o, "size", UINT64_MAX, &m->ns[i].size)))
			return ret;
		m->ns[i].nsid = (uint32_t)nsid;
	}
	return 0;
}

/* @m's description from its files' text: 0, -EBADMSG, -ENOMEM. */
static int parse_mount(struct list_mount *m, const char *info_text, const char *stats_text)
{
	struct json_object *info = json_tokener_parse(info_text);
	struct json_object *stats = json_tokener_parse(stats_text);
	struct json_object *ctrl = member(stats, "controller", json_type_object);
	struct json_object *total = member(stats, "total", json_type_object);
	char *subnqn = NULL;
	int ret = -EBADMSG;

	if (!member(info, "namespaces", json_type_array) || !ctrl || !total)
		goto out;
	if ((ret = get_string(info, "subnqn", &subnqn)) ||
	    (ret = get_string(ctrl, "state", &m->state)) ||
	    (ret = get_u64(total, "reads", UINT64_MAX, &m->reads)) ||
	    (ret = get_u64(total, "writes", UINT64_MAX, &m->writes)) ||
	    (ret = get_u64(total, "read_bytes", UINT64_MAX, &m->read_bytes)) ||
	    (ret = get_u64(total, "write_bytes", UINT64_MAX, &m->write_bytes)) ||
	    (ret = get_u64(total, "errors", UINT64_MAX, &m->errors)) ||
	    (ret = parse_paths(m, info, stats)) ||
	    (ret = parse_namespaces(m, info)))
		goto out;
	free(m->subnqn);
	m->subnqn = subnqn;
	subnqn = NULL;
out:
	free(subnqn);
	json_object_put(info);
	json_object_put(stats);
	return ret;
}

static void mount_clear(struct list_mount *m)
{
	for (size_t i = 0; i < m->nr_paths; i++) {
		free(m->paths[i].trtype);
		free(m->paths[i].traddr);
		free(m->paths[i].trsvcid);
		free(m->paths[i].state);
	}
	for (size_t i = 0; i < m->nr_ns; i++)
		free(m->ns[i].file);
	free(m->paths);
	free(m->ns);
	free(m->state);
	free(m->iopolicy);
	m->paths = NULL;
	m->ns = NULL;
	m->state = m->iopolicy = NULL;
	m->nr_paths = m->nr_ns = 0;
}

/* Fills @m for the mount at @mountpoint; what went wrong goes to m->error. */
static int describe(struct list_mount *m, const char *mountpoint, const char *source, int timeout_ms)
{
	char *info = NULL, *stats = NULL;
	int ret;

	m->mountpoint = strdup(mountpoint);
	/* nvmefs mounts name themselves nvmefs:NQN (src/fuse/serve.c). */
	m->subnqn = strdup(strncmp(source, "nvmefs:", 7) ? source : source + 7);
	if (!m->mountpoint || !m->subnqn)
		return -ENOMEM;
	ret = read_files(mountpoint, timeout_ms, &info, &stats);
	if (!ret)
		ret = parse_mount(m, info, stats);
	free(info);
	free(stats);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		mount_clear(m);
		m->error = ret;
	}
	return 0;
}

void list_mounts_free(struct list_mount *m, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		mount_clear(&m[i]);
		free(m[i].mountpoint);
		free(m[i].subnqn);
	}
	free(m);
}

int list_mounts(const char *mountinfo, uid_t uid, int timeout_ms,
		struct list_mount **out, size_t *nr)
{
	struct list_mount *m = NULL;
	size_t n = 0, linecap = 0;
	char *line = NULL;
	int ret = 0;
	FILE *in;

	in = fopen(mountinfo, "re");
	if (!in)
		return -errno;
	while (getline(&line, &linecap, in) > 0) {
		char *mountpoint, *source, *super_opts;
		struct list_mount *more;

		if (!nvmefs_line(line, &mountpoint, &source, &super_opts) || !visible(super_opts, uid))
			continue;
		more = realloc(m, (n + 1) * sizeof(*m));
		if (!more) {
			ret = -ENOMEM;
			break;
		}
		m = more;
		memset(&m[n], 0, sizeof(*m));
		ret = describe(&m[n++], mountpoint, source, timeout_ms);
		if (ret)
			break;
	}
	if (!ret && ferror(in))
		ret = -EIO;
	free(line);
	fclose(in);
	if (ret) {
		list_mounts_free(m, n);
		return ret;
	}
	*out = m;
	*nr = n;
	return 0;
}

const char *list_error_text(int error)
{
	switch (error) {
	case -ENOTCONN:
		return "its daemon is gone (Transport endpoint is not connected): unmount it with 'fusermount3 -u MOUNTPOINT'";
	case -ETIMEDOUT:
		return "it did not answer in time: its daemon is stuck or stopped";
	case -EACCES:
	case -EPERM:
		return "only its owner can read it (Permission denied)";
	case -EBADMSG:
	case -EFBIG:
		return "its info or stats file is not what this nvmefs reads: an nvmefs of another version serves it";
	case -ENOENT:
		return "it has no info or stats file: not an nvmefs mount this nvmefs knows";
	default:
		return strerror(-error);
	}
}
