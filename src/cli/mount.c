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

#include "mount.h"
#include "../export/engine.h"

/* -i's default stops here: each worker pins --iodepth x (max_io + 16 KiB) of
 * buffers (2.25 MiB by default), which a memlock limit has to cover. */
#define MOUNT_AUTO_MAX_WORKERS 4

static const char *const cmd = "mount";

static void help(void)
{
	printf("Usage: nvmefs mount [-t %s] -a TRADDR [-s TRSVCID] -n SUBNQN\n"
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
	       "  -Q, --queue-size=N        entries per I/O queue (default: enough for --iodepth)\n"
	       "      --iodepth=N           FUSE requests each worker keeps in flight (default 16;\n"
	       "                            --depth, its old spelling, too)\n"
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
	       "                            queue_size=, iodepth= (or depth=), keep_alive_tmo=,\n"
	       "                            timeout=, io_timeout=, reconnect_delay=,\n"
	       "                            ctrl_loss_tmo=, fast_io_fail_tmo=, dhchap_secret=,\n"
	       "                            dhchap_ctrl_secret=, dhchap_secret_file=,\n"
	       "                            dhchap_ctrl_secret_file=, rkey_per_io=,\n"
	       "                            hdr_digest, data_digest, path= (repeatable),\n"
	       "                            all_paths, iopolicy=\n"
	       "  -t, --transport=TRTYPE    transport type: %s\n"
	       "  -a, --traddr=TRADDR       target address (IPv4, IPv6 or host name); required\n"
	       "  -s, --trsvcid=TRSVCID     target port (default %s)\n"
	       "  -w, --host-traddr=ADDR    local address to connect from\n"
	       "      --host-iface=IFACE    NVMe/TCP: connect through the network interface IFACE\n"
	       "  -q, --hostnqn=HOSTNQN     host NQN (default: /etc/nvme/hostnqn, else generated)\n"
	       "  -I, --hostid=HOSTID       host ID, a UUID (default: /etc/nvme/hostid, else derived)\n"
	       "  -k, --keep-alive-tmo=SEC  keep-alive timeout in seconds (default 5)\n"
	       "      --timeout=MS          connect and admin command timeout in milliseconds\n"
	       "                            (default 5000)\n"
	       RECONNECT_HELP
	       DHCHAP_HELP
	       RKEY_HELP
	       DIGEST_HELP
	       LINK_HELP
	       PATHS_HELP
	       "  -v, --verbose             tell on stderr what is done, as whom\n"
	       HELP_HELP, transports_text(true), transports_text(false),
	       ports_text("with --all-paths, the discovery log"));
}

/*
 * --pidfile, opened before anything connects: a file that cannot be
 * written fails the mount with a line, not a log entry once it is live.
 * One that was there (a previous run's) is reused, and left if the mount
 * fails; one made here goes with the mount.
 */
static int open_pidfile(struct mount_args *m)
{
	m->pidfile_fd = open(m->pidfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
	if (m->pidfile_fd >= 0)
		m->pidfile_written = true;
	else if (errno == EEXIST)
		m->pidfile_fd = open(m->pidfile, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (m->pidfile_fd < 0) {
		fprintf(stderr, "nvmefs %s: --pidfile %s cannot be written: %s: give a file in a "
			"directory this user may write to\n", cmd, m->pidfile, strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static void write_pidfile(struct mount_args *m)
{
	char line[32];
	int len = snprintf(line, sizeof(line), "%ld\n", (long)getpid());

	if (ftruncate(m->pidfile_fd, 0) || pwrite(m->pidfile_fd, line, (size_t)len, 0) != len)
		exp_log("writing the pidfile %s failed: %m", m->pidfile);
	close(m->pidfile_fd);
	m->pidfile_fd = -1;
	m->pidfile_written = true;
}

/* The mount is live: say so, with the PID, to whoever waits. */
static void on_ready(void *arg)
{
	struct mount_args *m = arg;
	int null;

	if (m->pidfile_fd >= 0)
		write_pidfile(m);
	exp_logp(LOG_INFO, "serving %s at %s", m->conn.opts.subnqn, m->mountpoint);
	if (m->ready_fd < 0)
		return;
	if (write(m->ready_fd, "", 1) != 1)
		exp_log("telling the parent that the mount is live failed: %m");
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
 * thread (exp_logp() is thread-safe; in the foreground the line goes to
 * stderr too).  Losing the controller is a warning (I/O is held
 * and may yet succeed), giving it up an error, being live again news.
 */
static void on_ctrl_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	int prio = st->state == NVMEFS_CTRL_LIVE ? LOG_INFO
		   : st->state == NVMEFS_CTRL_DELETED ? LOG_ERR : LOG_WARNING;

	(void)arg;
	exp_logp(prio, "%s", msg);
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
		"use (%d), at most %u, as each pins --iodepth x (max_io + 16 KiB) of buffers; -i sets them",
		m->fs.workers, m->fs.workers == 1 ? "" : "s", m->fs.workers == 1 ? "" : "s", cpus,
		MOUNT_AUTO_MAX_WORKERS);
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
	ret = nvmefs_fs_check_memlock(&m->fs, mount_pinning_paths(m));
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
		/* The daemon's parent prints it; in the foreground, we do. */
		if (m->ready_fd >= 0 && write(m->ready_fd, msg, strlen(msg)) < 0)
			m->ready_fd = -1;
		if (m->foreground)
			fputs(msg, stderr);
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
			exp_logp(LOG_WARNING, "chdir / failed: %m");
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
		{ "iodepth", required_argument, NULL, OPT_IODEPTH },
		{ "depth", required_argument, NULL, OPT_IODEPTH },
		{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
		{ "foreground", no_argument, NULL, 'f' },
		{ "pidfile", required_argument, NULL, OPT_PIDFILE },
		RECONNECT_LONGOPTS,
		DHCHAP_LONGOPTS,
		RKEY_LONGOPTS,
		DIGEST_LONGOPTS,
		LINK_LONGOPTS,
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
	m->pidfile_fd = -1;
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
				  DHCHAP_SHORTOPTS DIGEST_SHORTOPTS LINK_SHORTOPTS,
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
		/* EXIT_USAGE, or EXIT_FAIL from a check that could not run. */
		ret = opt == 'o' ? mount_options(m, optarg)
		      : connect_args_option(&m->conn, cmd, opt, optarg, &handled);
		if (!ret && opt != 'o' && !handled)
			ret = path_args_option(&m->paths, cmd, opt, optarg, &handled);
		if (ret)
			goto out;
		ret = EXIT_USAGE;
		if (opt == 'o' || handled)
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
		case OPT_IODEPTH:
		case OPT_IO_TIMEOUT:
			if (mount_number_option(m, opt, optarg))
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
	m->conn.multipath = path_args_multipath(&m->paths);
	if (connect_args_check(&m->conn, cmd) || path_args_check(&m->paths, &m->conn, cmd))
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
	ret = mount_args_check(m, mountpoint);
	if (ret)
		goto out;
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
	if (m->pidfile) {
		ret = open_pidfile(m);
		if (ret)
			goto out;
	}
	/* In the foreground, lines on stderr as every command prints them,
	 * without the system log's "nvmefs[PID]: ". */
	openlog("nvmefs", LOG_PID, LOG_DAEMON);
	exp_log_stderr(m->foreground ? "nvmefs mount" : NULL);
	ret = m->foreground ? serve(m) : daemonize_and_serve(m);
	/* A daemon that failed removed what it made; one never started did not. */
	if (ret != EXIT_OK && m->pidfile_written)
		unlink(m->pidfile);
out:
	if (m->pidfile_fd >= 0)
		close(m->pidfile_fd);
	for (unsigned int i = 0; i < m->nr_owned; i++)
		free(m->owned[i]);
	free(m);
	return ret;
}
