/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs mount's options: -o (ours, the connect options by their fstab
 * names, and FUSE's), and the checks that run before anything connects or
 * registers memory, so that a mistake costs a line and status 2, not a
 * connection.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount.h"

static const char *const cmd = "mount";

static int add_fuse_option(struct mount_args *m, const char *opt)
{
	size_t len = strlen(m->fuse_options);

	if (len + strlen(opt) + 2 > sizeof(m->fuse_options))
		return usage_error(cmd, "too many -o options");
	snprintf(m->fuse_options + len, sizeof(m->fuse_options) - len, "%s%s", len ? "," : "", opt);
	return EXIT_OK;
}

/* Mount's numbers, each an option and an -o key: one range for both. */
struct mount_number {
	int opt;
	const char *key;
	const char *name;	/* the option as --help spells it */
	const char *unit;	/* "" or " of milliseconds" */
	unsigned int min, max;
	size_t field;		/* offsetof(struct nvmefs_fs_opts, ...) */
};

static const struct mount_number mount_numbers[] = {
	{ 'i', "nr_io_queues", "-i/--nr-io-queues", "", 1, 64,
	  offsetof(struct nvmefs_fs_opts, workers) },
	{ 'Q', "queue_size", "-Q/--queue-size", "", 2, 4096,
	  offsetof(struct nvmefs_fs_opts, queue_size) },
	{ OPT_IODEPTH, "iodepth", "--iodepth", "", 1, 1024, offsetof(struct nvmefs_fs_opts, depth) },
	/* The old spelling, which fstab lines still carry. */
	{ OPT_IODEPTH, "depth", "--iodepth", "", 1, 1024, offsetof(struct nvmefs_fs_opts, depth) },
	{ OPT_IO_TIMEOUT, "io_timeout", "--io-timeout", " of milliseconds", 1,
	  NVMEFS_MAX_TIMEOUT_MS, offsetof(struct nvmefs_fs_opts, io_timeout_ms) },
};

/* Sets @n from @value, given as the option (@as_key false) or the -o key. */
static int mount_number_set(struct mount_args *m, const struct mount_number *n, bool as_key,
			    const char *value)
{
	uint64_t v;

	if (!value || parse_uint(value, n->min, n->max, &v)) {
		if (as_key)
			return usage_error(cmd, "-o %s=%s: give a number%s from %u to %u", n->key,
					   value ? value : "", n->unit, n->min, n->max);
		return usage_error(cmd, "%s '%s' is not a number%s from %u to %u", n->name, value,
				   n->unit, n->min, n->max);
	}
	*(unsigned int *)((char *)&m->fs + n->field) = (unsigned int)v;
	return EXIT_OK;
}

static const struct mount_number *mount_number_find(int opt, const char *key)
{
	for (size_t i = 0; i < sizeof(mount_numbers) / sizeof(mount_numbers[0]); i++)
		if (key ? !strcmp(key, mount_numbers[i].key) : opt == mount_numbers[i].opt)
			return &mount_numbers[i];
	return NULL;
}

/* The keys of -o that are ours; the rest goes to FUSE. */
static int mount_option(struct mount_args *m, char *opt)
{
	const struct mount_number *number;
	static const char *const connect_keys[][2] = {
		{ "transport", "-t" }, { "traddr", "-a" }, { "trsvcid", "-s" },
		{ "host_traddr", "-w" },
		{ "hostnqn", "-q" }, { "hostid", "-I" }, { "keep_alive_tmo", "-k" },
		{ "timeout", "--timeout" }, { "reconnect_delay", "-c" }, { "ctrl_loss_tmo", "-l" },
		{ "fast_io_fail_tmo", "--fast_io_fail_tmo" }, { "dhchap_secret", "-S" },
		{ "dhchap_ctrl_secret", "-C" }, { "dhchap_secret_file", "--dhchap-secret-file" },
		{ "dhchap_ctrl_secret_file", "--dhchap-ctrl-secret-file" },
		{ "rkey_per_io", "--rkey-per-io" }, { "host_iface", "--host-iface" }, { "tos", "-T" },
		{ "tls_key", "--tls-key" }, { "identity", "--identity" },
	};
	/* Through connect_args_option(): the same checks and ranges as the options. */
	static const int connect_opts[] = { 't', 'a', 's', 'w', 'q', 'I', 'k', OPT_TIMEOUT, 'c', 'l',
					    'F', 'S', 'C', OPT_DHCHAP_SECRET_FILE,
					    OPT_DHCHAP_CTRL_SECRET_FILE, OPT_RKEY_PER_IO, OPT_HOST_IFACE,
					    'T', OPT_TLS_KEY, OPT_TLS_IDENTITY };
	_Static_assert(sizeof(connect_keys) / sizeof(connect_keys[0]) ==
		       sizeof(connect_opts) / sizeof(connect_opts[0]), "one option per -o key");
	char *value = strchr(opt, '=');
	uint64_t v;
	bool handled;

	if (value)
		*value++ = '\0';
	/* What fstab and mount(8) add for themselves. */
	if (!strcmp(opt, "_netdev") || !strcmp(opt, "nofail") || !strcmp(opt, "defaults") ||
	    !strcmp(opt, "auto") || !strcmp(opt, "noauto") || !strcmp(opt, "user") ||
	    !strcmp(opt, "users") || !strcmp(opt, "nouser") || !strcmp(opt, "rw") ||
	    !strncmp(opt, "x-", 2))
		return EXIT_OK;
	for (size_t i = 0; i < sizeof(connect_opts) / sizeof(connect_opts[0]); i++) {
		if (strcmp(opt, connect_keys[i][0]))
			continue;
		if (!value || !*value)
			return usage_error(cmd, "-o %s needs a value (%s=...)", opt, opt);
		if (m->nr_owned == sizeof(m->owned) / sizeof(m->owned[0]) ||
		    !(m->owned[m->nr_owned] = strdup(value)))
			return usage_error(cmd, "too many -o options");
		return connect_args_option(&m->conn, cmd, connect_opts[i], m->owned[m->nr_owned++],
					   &handled);
	}
	/* Multipath: path=TRADDR[:TRSVCID] (repeatable), all_paths, iopolicy=. */
	if (!strcmp(opt, "path") || !strcmp(opt, "iopolicy")) {
		if (!value || !*value)
			return usage_error(cmd, "-o %s needs a value (%s=...)", opt, opt);
		return path_args_option(&m->paths, cmd, !strcmp(opt, "path") ? OPT_PATH : OPT_IOPOLICY,
					value, &handled);
	}
	if (!strcmp(opt, "hdr_digest") || !strcmp(opt, "data_digest"))
		return connect_args_option(&m->conn, cmd, opt[0] == 'h' ? 'g' : 'G', NULL, &handled);
	if (!strcmp(opt, "tls") || !strcmp(opt, "compat") || !strcmp(opt, "concat"))
		return connect_args_option(&m->conn, cmd, opt[0] == 't' ? OPT_TLS :
					   !strcmp(opt, "compat") ? OPT_TLS_COMPAT : OPT_TLS_CONCAT,
					   NULL, &handled);
	if (!strcmp(opt, "disable_sqflow") || !strcmp(opt, "duplicate_connect"))
		return connect_args_option(&m->conn, cmd, opt[1] == 'i' ? OPT_DISABLE_SQFLOW : 'D',
					   NULL, &handled);
	if (!strcmp(opt, "all_paths"))
		return path_args_option(&m->paths, cmd, OPT_ALL_PATHS, NULL, &handled);
	if (!strcmp(opt, "uid") || !strcmp(opt, "gid")) {
		if (!value || parse_uint(value, 0, UINT32_MAX - 1, &v))
			return usage_error(cmd, "-o %s=%s: give a numeric ID", opt, value ? value : "");
		if (!strcmp(opt, "uid"))
			m->fs.uid = (int64_t)v;
		else
			m->fs.gid = (int64_t)v;
		return EXIT_OK;
	}
	if (!strcmp(opt, "cached") || !strcmp(opt, "direct")) {
		if (m->cache_opt && strcmp(m->cache_opt, opt))
			return usage_error(cmd, "-o cached and -o direct do not go together: give one");
		m->cache_opt = !strcmp(opt, "cached") ? "cached" : "direct";
		m->fs.cached = !strcmp(opt, "cached");
		return EXIT_OK;
	}
	if (!strcmp(opt, "io_uring")) {
		if (!value || !strcmp(value, "on"))
			m->fs.io_uring = NVMEFS_FS_RING_ON;
		else if (!strcmp(value, "auto"))
			m->fs.io_uring = NVMEFS_FS_RING_AUTO;
		else if (!strcmp(value, "off"))
			m->fs.io_uring = NVMEFS_FS_RING_OFF;
		else
			return usage_error(cmd, "-o io_uring=%s: give auto, on or off", value);
		return EXIT_OK;
	}
	/* FUSE's max_read is ours to set, from max_io: another one makes the
	 * kernel's INIT fail after the mount is made. */
	if (!strcmp(opt, "max_read"))
		return usage_error(cmd, "-o max_read is set by nvmefs: give -o max_io=SIZE instead");
	if (!strcmp(opt, "max_io")) {
		if (!value || parse_size(value, 4096, 1u << 20, &v) || v % 4096)
			return usage_error(cmd, "-o max_io=%s: give a multiple of 4k from 4k to 1M",
					   value ? value : "");
		m->fs.max_io = v;
		return EXIT_OK;
	}
	number = mount_number_find(0, opt);
	if (number)
		return mount_number_set(m, number, true, value);
	if (value)
		value[-1] = '=';
	/* nvme-cli's -o for the output format, which mount has none of. */
	if (!strcmp(opt, "json") || !strcmp(opt, "normal") || !strcmp(opt, "binary"))
		return usage_error(cmd, "-o %s is not a mount option: mount prints no output to "
				   "format; give mount options to -o", opt);
	/* Before connecting: FUSE would refuse it only once all is set up. */
	if (!nvmefs_fs_fuse_option_ok(opt))
		return usage_error(cmd, "-o %s is not an option of nvmefs mount or of FUSE", opt);
	return add_fuse_option(m, opt);
}

/*
 * The secrets in an -o list of the command line, overwritten as -S's are:
 * the daemon keeps its arguments for its lifetime, and with them what ps,
 * /proc/PID/cmdline and a core dump show.
 */
static void hide_secrets(char *list)
{
	static const char *const keys[] = { "dhchap_secret=", "dhchap_ctrl_secret=",
					    "tls_key=NVMeTLSkey-1:" };
	char *opt = list, *end;
	size_t len, k;

	for (; opt; opt = end ? end + 1 : NULL) {
		end = strchr(opt, ',');
		len = end ? (size_t)(end - opt) : strlen(opt);
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			k = strlen(keys[i]);
			if (len > k && !strncmp(opt, keys[i], k))
				memset(opt + k, 'x', len - k);
		}
	}
}

int mount_options(struct mount_args *m, char *list)
{
	size_t len = strlen(list);
	char *copy = strdup(list), *save = NULL, *opt;
	int ret = EXIT_OK;

	hide_secrets(list);
	if (!copy)
		return usage_error(cmd, "out of memory");
	for (opt = strtok_r(copy, ",", &save); opt && !ret; opt = strtok_r(NULL, ",", &save))
		ret = mount_option(m, opt);
	explicit_bzero(copy, len);
	free(copy);
	return ret;
}

int mount_number_option(struct mount_args *m, int opt, const char *value)
{
	return mount_number_set(m, mount_number_find(opt, NULL), false, value);
}

int mount_args_check(struct mount_args *m, const char *mountpoint)
{
	struct stat st;

	/* The daemon leaves the working directory: keep the mount point's path whole. */
	if (!realpath(mountpoint, m->mountpoint)) {
		fprintf(stderr, "nvmefs %s: the mount point %s: %s: create the directory first\n", cmd,
			mountpoint, strerror(errno));
		return EXIT_FAIL;
	}
	if (stat(m->mountpoint, &st) || !S_ISDIR(st.st_mode))
		return usage_error(cmd, "the mount point %s is not a directory: give a directory",
				   m->mountpoint);
	/* fusermount3 mounts for a user only on a directory it may write to. */
	if (access(m->mountpoint, W_OK))
		return usage_error(cmd, "the mount point %s is not writable by this user (uid %u): "
				   "mount on a directory it owns or may write to", m->mountpoint,
				   (unsigned int)getuid());
	return EXIT_OK;
}
