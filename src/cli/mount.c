/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs mount: connect to an NVM subsystem and serve its namespaces as
 * files through FUSE (src/fuse/), in the foreground or as a daemon.
 *
 * Also the program mount.fuse3 runs for an /etc/fstab line of type
 * fuse.nvmefs: `nvmefs SUBNQN MOUNTPOINT -o OPTIONS`, with the connect
 * parameters among the options.
 *
 * The daemon forks before it connects: memory registered with an RDMA
 * device does not survive fork() (the child would write to copies the
 * device never sees).  The parent waits on a pipe for the child to say the
 * mount is live, or why it failed, and exits with that.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cli.h"
#include "paths.h"
#include "../fuse/fs.h"

/* -i's default stops here: each worker pins --depth x (max_io + 16 KiB) of
 * buffers (2.25 MiB by default), which a memlock limit has to cover. */
#define MOUNT_AUTO_MAX_WORKERS 4

static const char *const cmd = "mount";

enum {
	OPT_PIDFILE = OPT_FIRST_COMMAND_OPTION,
	OPT_DEPTH,
	OPT_IO_TIMEOUT,
};

struct mount_args {
	struct connect_args conn;
	struct path_args paths;
	struct nvmefs_fs_opts fs;
	bool foreground;
	const char *pidfile;
	/* on_ready() wrote it: remove it on the way out, whatever the outcome. */
	bool pidfile_written;
	char mountpoint[PATH_MAX];
	/* Options for FUSE, comma-separated, built from -o. */
	char fuse_options[1024];
	/* Strings taken from -o (traddr=... and the like) live here. */
	char *owned[16];
	unsigned int nr_owned;
	/* The daemon's channel to its waiting parent, or -1. */
	int ready_fd;
};

static void help(void)
{
	printf("Usage: nvmefs mount [-t rdma|tcp] -a TRADDR [-s TRSVCID] -n SUBNQN\n"
	       "                    [-o OPTIONS] [-f] MOUNTPOINT\n"
	       "       nvmefs SUBNQN MOUNTPOINT -o traddr=TRADDR[,OPTIONS]   (as mount.fuse3 runs it)\n"
	       "\n"
	       "Connect to the NVM subsystem SUBNQN and serve each of its active namespaces as a\n"
	       "file nN (n1, n2, ...) under MOUNTPOINT, with read-only 'info' and 'stats' files.\n"
	       "Runs as a daemon unless -f; unmount with 'fusermount3 -u MOUNTPOINT' or umount,\n"
	       "or stop it with SIGTERM, SIGINT or SIGHUP (in-flight I/O finishes, then a flush).\n"
	       "\n"
	       "Options:\n"
	       "  -n, --nqn=SUBNQN          subsystem NQN; required\n"
	       "  -i, --nr-io-queues=N      I/O queues, one worker thread each (default: one per\n"
	       "                            CPU this process may use, at most 4)\n"
	       "  -Q, --queue-size=N        entries per I/O queue (default: enough for --depth)\n"
	       "      --depth=N             FUSE requests each worker keeps in flight (default 16)\n"
	       "      --io-timeout=MS       fail the controller when an I/O takes longer\n"
	       "                            (default 30000)\n"
	       "  -f, --foreground          stay in the foreground, log to stderr\n"
	       "      --pidfile=FILE        write the daemon's PID to FILE once the mount is live\n"
	       "  -o OPTIONS                comma-separated mount options: max_io=SIZE (largest\n"
	       "                            read or write, default 128k), cached (page cache) or\n"
	       "                            direct (the default), io_uring=auto|on|off (FUSE over\n"
	       "                            io_uring: when offered; or fail; or /dev/fuse, the\n"
	       "                            default), uid=N and gid=N (the files'\n"
	       "                            owner), allow_other, allow_root and other FUSE\n"
	       "                            options; and, for /etc/fstab, transport=, traddr=,\n"
	       "                            trsvcid=, host_traddr=, hostnqn=, hostid=, nr_io_queues=,\n"
	       "                            queue_size=, depth=, keep_alive_tmo=, timeout=,\n"
	       "                            io_timeout=, reconnect_delay=, ctrl_loss_tmo=,\n"
	       "                            fast_io_fail_tmo=, dhchap_secret=,\n"
	       "                            dhchap_ctrl_secret=, dhchap_secret_file=,\n"
	       "                            dhchap_ctrl_secret_file=, rkey_per_io=,\n"
	       "                            hdr_digest, data_digest, path= (repeatable),\n"
	       "                            all_paths, iopolicy=\n"
	       "  -t, --transport=TRTYPE    transport type: 'rdma' (the default) or 'tcp'\n"
	       "  -a, --traddr=TRADDR       target address (IPv4, IPv6 or host name); required\n"
	       "  -s, --trsvcid=TRSVCID     target port (default " NVMEFS_DEFAULT_TRSVCID "; with\n"
	       "                            --all-paths over TCP, where the discovery log is: "
	       NVMEFS_TCP_DISCOVERY_TRSVCID ")\n"
	       "  -w, --host-traddr=ADDR    local address to connect from\n"
	       "  -q, --hostnqn=HOSTNQN     host NQN (default: /etc/nvme/hostnqn, else generated)\n"
	       "  -I, --hostid=HOSTID       host ID, a UUID (default: /etc/nvme/hostid, else derived)\n"
	       "  -k, --keep-alive-tmo=SEC  keep-alive timeout in seconds (default 5)\n"
	       "      --timeout=MS          connect and admin command timeout in milliseconds\n"
	       "                            (default 5000)\n"
	       RECONNECT_HELP
	       DHCHAP_HELP
	       RKEY_HELP
	       DIGEST_HELP
	       PATHS_HELP
	       "  -v, --verbose             tell on stderr what is done, as whom\n"
	       HELP_HELP);
}

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
	{ OPT_DEPTH, "depth", "--depth", "", 1, 1024, offsetof(struct nvmefs_fs_opts, depth) },
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
		{ "rkey_per_io", "--rkey-per-io" },
	};
	/* Through connect_args_option(): the same checks and ranges as the options. */
	static const int connect_opts[] = { 't', 'a', 's', 'w', 'q', 'I', 'k', OPT_TIMEOUT, 'c', 'l',
					    OPT_FAST_IO_FAIL_TMO, 'S', 'C', OPT_DHCHAP_SECRET_FILE,
					    OPT_DHCHAP_CTRL_SECRET_FILE, OPT_RKEY_PER_IO };
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
	return add_fuse_option(m, opt);
}

/*
 * The secrets in an -o list of the command line, overwritten as -S's are:
 * the daemon keeps its arguments for its lifetime, and with them what ps,
 * /proc/PID/cmdline and a core dump show.
 */
static void hide_secrets(char *list)
{
	static const char *const keys[] = { "dhchap_secret=", "dhchap_ctrl_secret=" };
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

static int mount_options(struct mount_args *m, char *list)
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

static void write_pidfile(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f)) {
		syslog(LOG_ERR, "writing the pidfile %s failed: %m", path);
		if (f)
			fclose(f);
	}
}

/* The mount is live: say so, with the PID, to whoever waits. */
static void on_ready(void *arg)
{
	struct mount_args *m = arg;
	int null;

	if (m->pidfile) {
		write_pidfile(m->pidfile);
		m->pidfile_written = true;
	}
	syslog(LOG_INFO, "serving %s at %s", m->conn.opts.subnqn, m->mountpoint);
	if (m->ready_fd < 0)
		return;
	if (write(m->ready_fd, "", 1) != 1)
		syslog(LOG_ERR, "telling the parent that the mount is live failed: %m");
	close(m->ready_fd);
	m->ready_fd = -1;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
}

/*
 * Each controller state transition, logged once, from the library's
 * thread: syslog is thread-safe, and in the foreground LOG_PERROR puts
 * the line on stderr too.  Losing the controller is a warning (I/O is held
 * and may yet succeed), giving it up an error, being live again news.
 */
static void on_ctrl_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	int prio = st->state == NVMEFS_CTRL_LIVE ? LOG_INFO
		   : st->state == NVMEFS_CTRL_DELETED ? LOG_ERR : LOG_WARNING;

	(void)arg;
	syslog(prio, "%s", msg);
}

/* Why no path could be connected, for the daemon's parent and syslog. */
static const char *no_path_subnqn;

static const char *no_path_msg(void)
{
	static char msg[400];

	snprintf(msg, sizeof(msg), "no path to %s could be connected (each one's reason is above, "
		 "or in the foreground's output)", no_path_subnqn);
	return msg;
}

/* Each path's transitions are logged as the single controller's are. */
static void setup_path(struct nvmefs_ctrl *ctrl, void *arg)
{
	nvmefs_ctrl_set_event_cb(ctrl, on_ctrl_event, arg);
}

/* Connects and serves; returns the exit status. */
/* Without -i: one queue and worker per CPU this process may use, as the
 * kernel initiator opens one queue per CPU, but no more than
 * MOUNT_AUTO_MAX_WORKERS, as each worker pins its buffers in memory. */
static void choose_workers(struct mount_args *m)
{
	cpu_set_t allowed;
	int cpus = sched_getaffinity(0, sizeof(allowed), &allowed) ? 1 : CPU_COUNT(&allowed);

	m->fs.workers = cpus < 1 ? 1 : cpus > MOUNT_AUTO_MAX_WORKERS ? MOUNT_AUTO_MAX_WORKERS
								      : (unsigned int)cpus;
	verbose(&m->conn, cmd, "%u I/O queue%s and worker%s, chosen: one per CPU this process may "
		"use (%d), at most %u, as each pins --depth x (max_io + 16 KiB) of buffers; -i sets them",
		m->fs.workers, m->fs.workers == 1 ? "" : "s", m->fs.workers == 1 ? "" : "s", cpus,
		MOUNT_AUTO_MAX_WORKERS);
}

/* Whether a path over @trtype (NULL: the default, RDMA) pins what it
 * registers: RDMA does, NVMe/TCP registers nothing. */
static bool trtype_pins(const char *trtype)
{
	return !trtype || !strcmp(trtype, "rdma");
}

/* How many of the mount's paths pin its buffers, each its own registration.
 * --all-paths learns its paths from discovery, after this is asked: they
 * are taken to be one, over -t's transport, as the check always took them. */
static unsigned int pinning_paths(const struct mount_args *m)
{
	unsigned int n = trtype_pins(m->conn.opts.trtype);

	if (m->paths.all_paths)
		return n;
	for (unsigned int i = 0; i < m->paths.nr; i++)
		n += trtype_pins(m->paths.trtype[i] ? m->paths.trtype[i] : m->conn.opts.trtype);
	return n;
}

static int serve(struct mount_args *m)
{
	struct nvmefs_subsys *subsys = NULL;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts io;
	char addr[300];
	int ret;
	const char *(*why)(void) = nvmefs_errmsg;

	m->fs.ready = on_ready;
	m->fs.ready_arg = m;
	/* Before connecting: the admin queue's registration would fail first,
	 * with a smaller sum than the mount needs. */
	ret = nvmefs_fs_check_memlock(&m->fs, pinning_paths(m));
	if (ret < 0) {
		why = nvmefs_fs_errmsg;
		goto done;
	}
	if (path_args_multipath(&m->paths)) {
		/* The paths' queues are made here, as the mount would make them. */
		nvmefs_fs_io_opts(&m->fs, &io);
		ret = paths_connect(&m->conn, &m->paths, &io, cmd, setup_path, NULL, &subsys) ? -EIO
		      : 0;
		if (ret == 0) {
			ctrl = nvmefs_subsys_path(subsys, 0);
			why = nvmefs_fs_errmsg;
			ret = nvmefs_fs_run(ctrl, subsys, &m->fs);
		} else {
			/* paths_connect() told why on stderr; the daemon's parent
			 * and syslog get the gist. */
			why = no_path_msg;
			no_path_subnqn = m->conn.opts.subnqn;
		}
		goto done;
	}
	verbose(&m->conn, cmd, "connecting to %s at %s, timeout %u ms", m->conn.opts.subnqn,
		connect_args_where(&m->conn.opts, addr, sizeof(addr)), m->conn.opts.timeout_ms);
	ret = nvmefs_ctrl_connect(&m->conn.opts, &ctrl);
	connect_args_forget_secrets(&m->conn);
	if (ret == 0) {
		verbose_connected(&m->conn, cmd, ctrl);
		nvmefs_ctrl_set_event_cb(ctrl, on_ctrl_event, NULL);
		/* A head of this one path, which all I/O goes through. */
		nvmefs_fs_io_opts(&m->fs, &io);
		ret = nvmefs_ctrl_create_io_queues(ctrl, &io);
		if (ret == 0)
			ret = nvmefs_subsys_create_single(ctrl, &subsys);
	}
	if (ret == 0) {
		why = nvmefs_fs_errmsg;
		ret = nvmefs_fs_run(ctrl, subsys, &m->fs);
	}
done:
	if (ret < 0) {
		char msg[1100];

		snprintf(msg, sizeof(msg), "nvmefs %s: %s\n", cmd, why());
		/* The daemon's parent prints it; in the foreground, syslog's
		 * LOG_PERROR puts it on stderr. */
		if (m->ready_fd >= 0 && write(m->ready_fd, msg, strlen(msg)) < 0)
			m->ready_fd = -1;
		syslog(LOG_ERR, "%.*s", (int)strlen(msg) - 1, msg);
	}
	/* Tearing the controllers down on the way out is no outage to log. */
	if (subsys) {
		for (unsigned int i = 0; i < nvmefs_subsys_path_count(subsys); i++)
			nvmefs_ctrl_set_event_cb(nvmefs_subsys_path(subsys, i), NULL, NULL);
		nvmefs_subsys_destroy(subsys);
	} else {
		if (ctrl)
			nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
		nvmefs_ctrl_disconnect(ctrl);
	}
	if (m->pidfile_written)
		unlink(m->pidfile);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

static int daemonize_and_serve(struct mount_args *m)
{
	int fds[2], status;
	char buf[1100];
	ssize_t n, len = 0;
	pid_t pid;

	/* Close-on-exec: a helper the daemon runs (fusermount3 for auto_unmount
	 * stays for the life of the mount) must not hold the parent's EOF back. */
	if (pipe2(fds, O_CLOEXEC) < 0) {
		fprintf(stderr, "nvmefs %s: creating a pipe failed: %s\n", cmd, strerror(errno));
		return EXIT_FAIL;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "nvmefs %s: fork failed: %s\n", cmd, strerror(errno));
		return EXIT_FAIL;
	}
	if (pid == 0) {
		close(fds[0]);
		m->ready_fd = fds[1];
		setsid();
		if (chdir("/") < 0)
			syslog(LOG_WARNING, "chdir / failed: %m");
		exit(serve(m));
	}
	close(fds[1]);
	/* One byte: live.  A line: why not.  Nothing: the child died.  Either
	 * answer is whole at its first byte or its newline, EOF or not. */
	while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0) {
		len += n;
		if (buf[0] == '\0' || memchr(buf, '\n', (size_t)len))
			break;
	}
	close(fds[0]);
	if (len == 1 && buf[0] == '\0')
		return EXIT_OK;
	if (len > 0) {
		buf[len] = '\0';
		fputs(buf, stderr);
		waitpid(pid, &status, 0);
		return EXIT_FAIL;
	}
	waitpid(pid, &status, 0);
	fprintf(stderr, "nvmefs %s: the daemon ended before the mount was live (%s %d): see the "
		"system log, or run with -f\n", cmd, WIFSIGNALED(status) ? "signal" : "exit status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return EXIT_FAIL;
}

int cmd_mount(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "traddr", required_argument, NULL, 'a' },
		{ "trsvcid", required_argument, NULL, 's' },
		{ "host-traddr", required_argument, NULL, 'w' },
		{ "hostnqn", required_argument, NULL, 'q' },
		{ "hostid", required_argument, NULL, 'I' },
		{ "keep-alive-tmo", required_argument, NULL, 'k' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "nqn", required_argument, NULL, 'n' },
		{ "nr-io-queues", required_argument, NULL, 'i' },
		{ "queue-size", required_argument, NULL, 'Q' },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
		{ "foreground", no_argument, NULL, 'f' },
		{ "pidfile", required_argument, NULL, OPT_PIDFILE },
		RECONNECT_LONGOPTS,
		DHCHAP_LONGOPTS,
		RKEY_LONGOPTS,
		DIGEST_LONGOPTS,
		PATHS_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct mount_args *m;
	const char *mountpoint = NULL;
	bool handled;
	int opt, ret = EXIT_USAGE;

	m = calloc(1, sizeof(*m));
	if (!m) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		return EXIT_FAIL;
	}
	connect_args_init(&m->conn);
	path_args_init(&m->paths);
	m->fs.depth = 16;
	/* FUSE's own default request size: bigger I/O is split into requests
	 * that go in parallel, and a mount on 4 CPUs pins 9 MiB, not 65. */
	m->fs.max_io = 128u << 10;
	m->fs.io_timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS;
	m->fs.uid = -1;
	m->fs.gid = -1;
	m->ready_fd = -1;
	/* The form mount.fuse3 uses: SUBNQN MOUNTPOINT first, options after. */
	if (argc >= 3 && !strncmp(argv[1], "nqn.", 4)) {
		m->conn.opts.subnqn = argv[1];
		mountpoint = argv[2];
		argv[2] = argv[0];
		argc -= 2;
		argv += 2;
	}
	opterr = 0;
	optind = 1;
	for (;;) {
		opt = getopt_long(argc, argv, ":t:a:s:w:q:I:k:vhn:i:Q:fo:" RECONNECT_SHORTOPTS
				  DHCHAP_SHORTOPTS DIGEST_SHORTOPTS,
				  longopts, NULL);
		if (opt == -1)
			break;
		if (opt == '?' || opt == ':') {
			if (opt == ':')
				usage_error(cmd, "%s needs a value", argv[optind - 1]);
			else
				usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
		if (opt == 'o') {
			if (mount_options(m, optarg))
				goto out;
			continue;
		}
		if (connect_args_option(&m->conn, cmd, opt, optarg, &handled))
			goto out;
		if (!handled && path_args_option(&m->paths, cmd, opt, optarg, &handled))
			goto out;
		if (handled)
			continue;
		switch (opt) {
		case 'n':
			if (!*optarg) {
				usage_error(cmd, "-n/--nqn needs a value, got an empty one");
				goto out;
			}
			m->conn.opts.subnqn = optarg;
			break;
		case 'i':
		case 'Q':
		case OPT_DEPTH:
		case OPT_IO_TIMEOUT:
			if (mount_number_set(m, mount_number_find(opt, NULL), false, optarg))
				goto out;
			break;
		case 'f':
			m->foreground = true;
			break;
		case OPT_PIDFILE:
			m->pidfile = optarg;
			break;
		case 'h':
			help();
			ret = finish_output(cmd, EXIT_OK);
			goto out;
		default:
			goto out;
		}
	}
	if (!mountpoint && optind < argc)
		mountpoint = argv[optind++];
	if (optind < argc) {
		usage_error(cmd, "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (connect_args_check(&m->conn, cmd))
		goto out;
	if (!m->conn.opts.subnqn) {
		usage_error(cmd, "the subsystem NQN is missing: give it with -n/--nqn ('nvmefs "
			    "discover' lists them)");
		goto out;
	}
	if (!mountpoint) {
		usage_error(cmd, "the mount point is missing: give a directory after the options");
		goto out;
	}
	/* The daemon leaves the working directory: keep the mount point's path whole. */
	if (!realpath(mountpoint, m->mountpoint)) {
		fprintf(stderr, "nvmefs %s: the mount point %s: %s: create the directory first\n", cmd,
			mountpoint, strerror(errno));
		ret = EXIT_FAIL;
		goto out;
	}
	m->fs.mountpoint = m->mountpoint;
	m->fs.fuse_options = m->fuse_options[0] ? m->fuse_options : NULL;
	if (!m->fs.workers)
		choose_workers(m);
	if (m->pidfile && m->pidfile[0] != '/') {
		char *abs = realpath(".", NULL);

		if (abs && m->nr_owned < sizeof(m->owned) / sizeof(m->owned[0]) &&
		    asprintf(&m->owned[m->nr_owned], "%s/%s", abs, m->pidfile) > 0)
			m->pidfile = m->owned[m->nr_owned++];
		free(abs);
	}
	openlog("nvmefs", LOG_PID | (m->foreground ? LOG_PERROR : 0), LOG_DAEMON);
	ret = m->foreground ? serve(m) : daemonize_and_serve(m);
out:
	for (unsigned int i = 0; i < m->nr_owned; i++)
		free(m->owned[i]);
	free(m);
	return ret;
}
