/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs mount: connect to an NVM subsystem and serve its namespaces as
 * files through FUSE (src/fuse/), in the foreground or as a daemon.
 *
 * Also the program mount.fuse3 runs for an /etc/fstab line of type
 * fuse.nvmefs: `nvmefs SUBNQN MOUNTPOINT -o OPTIONS`, with the connect
 * parameters among the options.
 *
 * The daemon and its connection are daemon.c's, shared with ublk add.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	       "                            dhchap_ctrl_secret_file=, tls, tls_key=, identity=,\n"
	       "                            compat, concat, rkey_per_io=, hdr_digest, data_digest,\n"
	       "                            path= (repeatable), all_paths, iopolicy=\n"
	       DAEMON_CONNECT_HELP, DAEMON_CONNECT_HELP_ARGS);
}

/* The mount is live: say so, with the PID, to whoever waits. */
static void on_ready(void *arg)
{
	struct mount_args *m = arg;

	exp_logp(LOG_INFO, "serving %s at %s", m->conn.opts.subnqn, m->mountpoint);
	daemon_ready(&m->d, NULL);
}

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


/* Connects and serves; returns the exit status. */
static int serve(void *arg)
{
	struct mount_args *m = arg;
	struct nvmefs_subsys *subsys = NULL;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts io;
	int ret;
	const char *(*why)(void) = nvmefs_errmsg;

	m->fs.ready = on_ready;
	m->fs.ready_arg = m;
	/* Before connecting: the admin queue's registration would fail first,
	 * with a smaller sum than the mount needs. */
	ret = nvmefs_fs_check_memlock(&m->fs, daemon_pinning_paths(&m->conn, &m->paths));
	if (ret < 0) {
		why = nvmefs_fs_errmsg;
		goto done;
	}
	/* The paths' queues are made here, as the mount would make them. */
	nvmefs_fs_io_opts(&m->fs, &io);
	ret = daemon_connect(&m->conn, &m->paths, &io, cmd, &ctrl, &subsys, &why);
	if (ret == 0) {
		why = nvmefs_fs_errmsg;
		ret = nvmefs_fs_run(ctrl, subsys, &m->fs);
	}
done:
	if (ret < 0) {
		char msg[1100];

		snprintf(msg, sizeof(msg), "nvmefs %s: %s\n", cmd, why());
		daemon_fail(&m->d, msg);
	}
	daemon_disconnect(ctrl, subsys);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

int cmd_mount(int argc, char **argv)
{
	static const struct option longopts[] = {
		DAEMON_LONGOPTS,
		{ "depth", required_argument, NULL, OPT_IODEPTH },
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
	daemon_args_init(&m->d, cmd);
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
		opt = getopt_long(argc, argv, DAEMON_SHORTOPTS "o:", longopts, NULL);
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
			m->d.foreground = true;
			break;
		case OPT_PIDFILE:
			m->d.pidfile = optarg;
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
	ret = daemon_prepare(&m->d, "nvmefs mount");
	if (ret == EXIT_OK)
		ret = daemon_run(&m->d, serve, m);
out:
	daemon_done(&m->d);
	for (unsigned int i = 0; i < m->nr_owned; i++)
		free(m->owned[i]);
	free(m);
	return ret;
}
