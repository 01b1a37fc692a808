/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs ublk add and recover: the daemon that serves a subsystem's
 * namespaces as ublk block devices (src/ublk/), started as a mount's is
 * (daemon.c); recover's takes over the devices a daemon added with
 * --recovery left when it died, with the options their records keep.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ublk.h"
#include "../export/engine.h"

/* -i's default stops here, as mount's: each worker pins its buffers. */
#define UBLK_AUTO_MAX_WORKERS 4

enum { OPT_RECOVERY = OPT_MAX_IO + 1 };

struct add_args {
	struct connect_args conn;
	struct path_args paths;
	struct nvmefs_ublk_opts ublk;
	struct daemon_args d;
	/* "nvmefs ublk add" or "recover": the foreground's lines start so. */
	char prefix[32];
};

static void on_ready(void *arg, const char *out)
{
	struct add_args *a = arg;

	daemon_ready(&a->d, out);
}

static int serve_devices(void *arg)
{
	struct add_args *a = arg;
	struct nvmefs_subsys *subsys = NULL;
	struct nvmefs_ctrl *ctrl = NULL;
	struct nvmefs_io_opts io;
	const char *(*why)(void) = nvmefs_ublk_errmsg;
	int ret;

	a->ublk.ready = on_ready;
	a->ublk.ready_arg = a;
	ret = nvmefs_ublk_check_memlock(&a->ublk, daemon_pinning_paths(&a->conn, &a->paths));
	if (ret == 0) {
		nvmefs_ublk_io_opts(&a->ublk, &io);
		ret = daemon_connect(&a->conn, &a->paths, &io, a->d.cmd, &ctrl, &subsys, &why);
	}
	if (ret == 0) {
		why = nvmefs_ublk_errmsg;
		ret = nvmefs_ublk_run(ctrl, subsys, &a->ublk);
	}
	if (ret < 0) {
		char msg[1100];

		snprintf(msg, sizeof(msg), "nvmefs %s: %s\n", a->d.cmd, why());
		daemon_fail(&a->d, msg);
	}
	daemon_disconnect(ctrl, subsys);
	return ret < 0 ? EXIT_FAIL : EXIT_OK;
}

static int number(const char *cmd, const char *name, const char *value, unsigned int min,
		  unsigned int max, unsigned int *out)
{
	uint64_t v;

	if (parse_uint(value, min, max, &v))
		return usage_error(cmd, "%s '%s' is not a number from %u to %u", name, value, min,
				   max);
	*out = (unsigned int)v;
	return EXIT_OK;
}

static int add_option(struct add_args *a, int opt, const char *value)
{
	static const char *const cmd = "ublk add";
	uint64_t v;

	switch (opt) {
	case 'n':
		if (!*value)
			return usage_error(cmd, "-n/--nqn needs a value, got an empty one");
		a->conn.opts.subnqn = value;
		return EXIT_OK;
	case 'i':
		return number(cmd, "-i/--nr-io-queues", value, 1, 64, &a->ublk.workers);
	case 'Q':
		return number(cmd, "-Q/--queue-size", value, 2, 4096, &a->ublk.queue_size);
	case OPT_IODEPTH:
		return number(cmd, "--iodepth", value, 1, NVMEFS_UBLK_MAX_DEPTH, &a->ublk.depth);
	case OPT_IO_TIMEOUT:
		return number(cmd, "--io-timeout", value, 1, NVMEFS_MAX_TIMEOUT_MS,
			      &a->ublk.io_timeout_ms);
	case OPT_MAX_IO:
		if (parse_size(value, 4096, 1u << 20, &v) || v % 4096)
			return usage_error(cmd, "--max-io %s: give a multiple of 4k from 4k to 1M",
					   value);
		a->ublk.max_io = v;
		return EXIT_OK;
	case OPT_RECOVERY:
		a->ublk.recovery = true;
		return EXIT_OK;
	case 'f':
		a->d.foreground = true;
		return EXIT_OK;
	case OPT_PIDFILE:
		a->d.pidfile = value;
		return EXIT_OK;
	}
	return EXIT_USAGE;
}

/* Without -i: one queue and worker per CPU, at most UBLK_AUTO_MAX_WORKERS. */
static void choose_workers(struct add_args *a)
{
	cpu_set_t allowed;
	int cpus = sched_getaffinity(0, sizeof(allowed), &allowed) ? 1 : CPU_COUNT(&allowed);

	a->ublk.workers = cpus < 1 ? 1 : cpus > UBLK_AUTO_MAX_WORKERS ? UBLK_AUTO_MAX_WORKERS
									: (unsigned int)cpus;
}

/* A new add's defaults, its daemon's messages naming @cmd; NULL when out of memory. */
static struct add_args *add_args_new(const char *cmd)
{
	struct add_args *a = calloc(1, sizeof(*a));

	if (!a) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		return NULL;
	}
	connect_args_init(&a->conn);
	path_args_init(&a->paths);
	daemon_args_init(&a->d, cmd);
	a->ublk.depth = 32;
	a->ublk.max_io = 128u << 10;
	a->ublk.io_timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS;
	return a;
}

/*
 * add's options in @argv into @a: EXIT_OK, else the exit status (a line
 * said why; --help printed is EXIT_OK with *@helped).  With @recorded
 * (those a device's record kept for recover), the daemon's own (-f,
 * --pidfile, -o), which recover gives afresh, are left out.
 */
static int add_parse(struct add_args *a, int argc, char **argv, bool recorded, bool *helped)
{
	static const char *const cmd = "ublk add";
	static const struct option longopts[] = {
		DAEMON_LONGOPTS,
		{ "output-format", required_argument, NULL, 'o' },
		{ "max-io", required_argument, NULL, OPT_MAX_IO },
		{ "recovery", no_argument, NULL, OPT_RECOVERY },
		{ NULL, 0, NULL, 0 },
	};
	bool handled;
	int opt, ret;

	*helped = false;
	optind = 0;
	while ((opt = next_option(argc, argv, DAEMON_SHORTOPTS "o:", longopts)) != -1) {
		if (opt == '?')
			return EXIT_USAGE;
		if (recorded && (opt == 'f' || opt == OPT_PIDFILE || opt == 'o'))
			continue;
		ret = connect_args_option(&a->conn, cmd, opt, optarg, &handled);
		if (!ret && !handled)
			ret = path_args_option(&a->paths, cmd, opt, optarg, &handled);
		if (!ret && !handled && opt == 'h') {
			ublk_help();
			*helped = true;
			return finish_output(cmd, EXIT_OK);
		}
		if (!ret && !handled)
			ret = add_option(a, opt, optarg);
		if (ret)
			return ret;
	}
	return EXIT_OK;
}

/* The options @a holds checked, then its devices served by a daemon (or
 * in the foreground): the command's exit status. */
static int add_run(struct add_args *a)
{
	const char *cmd = a->d.cmd;

	a->conn.multipath = path_args_multipath(&a->paths);
	if (connect_args_check(&a->conn, cmd) || path_args_check(&a->paths, &a->conn, cmd))
		return EXIT_USAGE;
	if (!a->conn.opts.subnqn)
		return usage_error(cmd, "the subsystem NQN is missing: give it with -n/--nqn "
				   "('nvmefs discover' lists them)");
	/* A line each in the devices' records (record_fmt.c). */
	if (a->ublk.recovery && a->ublk.nr_args > NVMEFS_UBLK_MAX_ARGS)
		return usage_error(cmd, "--recovery keeps at most %d options for recover: give fewer "
				   "(-J/--config can hold the connect ones)", NVMEFS_UBLK_MAX_ARGS);
	for (unsigned int i = 0; a->ublk.recovery && i < a->ublk.nr_args; i++)
		if (strchr(a->ublk.args[i], '\n'))
			return usage_error(cmd, "--recovery: an option holds a newline, which the "
					   "device's record for recover cannot keep");
	if (!a->ublk.recovery)
		a->ublk.nr_args = 0;
	a->ublk.subnqn = a->conn.opts.subnqn;
	a->ublk.json = a->conn.fmt == OUTPUT_JSON;
	if (!a->ublk.workers)
		choose_workers(a);
	snprintf(a->prefix, sizeof(a->prefix), "nvmefs %s", cmd);
	if (daemon_prepare(&a->d, a->prefix) != EXIT_OK)
		return EXIT_FAIL;
	return daemon_run(&a->d, serve_devices, a);
}

int ublk_add(int argc, char **argv)
{
	struct add_args *a = add_args_new("ublk add");
	bool helped;
	int ret = EXIT_FAIL;

	if (!a)
		return EXIT_FAIL;
	ret = add_parse(a, argc, argv, false, &helped);
	/* Recorded for recover as given: the daemon's own options too, which
	 * recover leaves out. */
	a->ublk.args = argv + 1;
	a->ublk.nr_args = (unsigned int)argc - 1;
	if (ret == EXIT_OK && !helped)
		ret = add_run(a);
	daemon_done(&a->d);
	free(a);
	return ret;
}

/*
 * The devices of @dead's daemon that a new one takes over, in *@out (of
 * *@nr, the device itself among them): every one of them quiesced.
 */
static int takeover_list(const struct rec *dead, struct nvmefs_ublk_takeover **out,
			 unsigned int *nr)
{
	unsigned int n;
	struct rec *all = rec_all(&n);
	struct nvmefs_ublk_takeover *t = calloc(n ? n : 1, sizeof(*t));

	*nr = 0;
	for (unsigned int i = 0; t && i < n; i++)
		if (all[i].pid == dead->pid && all[i].quiesced)
			t[(*nr)++] = (struct nvmefs_ublk_takeover){ .id = all[i].id,
								    .nsid = all[i].nsid };
	free(all);
	*out = t;
	return t ? 0 : -ENOMEM;
}

/* recover's own options in @argv (the device taken out) into @a. */
static int recover_parse(struct add_args *a, int argc, char **argv, bool *helped)
{
	static const char *const cmd = "ublk recover";
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "pidfile", required_argument, NULL, OPT_PIDFILE },
		{ "output-format", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*helped = false;
	optind = 0;
	while ((opt = next_option(argc, argv, ":fo:h", longopts)) != -1) {
		switch (opt) {
		case '?':
			return EXIT_USAGE;
		case 'h':
			ublk_help();
			*helped = true;
			return finish_output(cmd, EXIT_OK);
		case 'o':
			if (output_format_parse(optarg, &a->conn.fmt))
				return usage_error(cmd, "-o/--output-format '%s' is not a format: use "
						   "'normal' or 'json'", optarg);
			break;
		default:
			add_option(a, opt, optarg);
		}
	}
	return EXIT_OK;
}

/*
 * A device added with --recovery whose daemon died, taken over with every
 * other device of that daemon by a new daemon, started with the options
 * their records keep (ublksrv's `ublk recover`).
 */
int ublk_recover(int argc, char **argv)
{
	static const char *const cmd = "ublk recover";
	struct nvmefs_ublk_takeover *takeover = NULL;
	struct nvmefs_ublk_record rec = { .args = NULL };
	struct nvmefs_ublk_info info;
	struct add_args *a = NULL;
	char path[64], **args = NULL;
	struct rec r;
	bool helped;
	int64_t id;
	FILE *f;
	int ret = EXIT_FAIL;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		ublk_help();
		return finish_output(cmd, EXIT_OK);
	}
	if (argc < 2 || argv[1][0] == '-')
		return usage_error(cmd, "give one device (/dev/ublkbN or N) first");
	if (parse_dev(argv[1], &id))
		return usage_error(cmd, "'%s' is not a ublk device (/dev/ublkbN or N)", argv[1]);
	/* Its options after it, as the command's: checked first. */
	argv[1] = argv[0];
	a = add_args_new(cmd);
	if (!a)
		return EXIT_FAIL;
	ret = recover_parse(a, argc - 1, argv + 1, &helped);
	if (ret != EXIT_OK || helped)
		goto out;
	ret = EXIT_FAIL;
	if (rec_read((int)id, &r) < 0) {
		fprintf(stderr, "nvmefs %s: /dev/ublkb%d is not a device nvmefs serves: 'nvmefs ublk "
			"list' lists them\n", cmd, (int)id);
		goto out;
	}
	if (!r.dead) {
		fprintf(stderr, "nvmefs %s: /dev/ublkb%d is served by a live daemon (PID %ld): there "
			"is nothing to recover\n", cmd, (int)id, r.pid);
		goto out;
	}
	nvmefs_ublk_record_path(path, sizeof(path), (int)id);
	f = fopen(path, "re");
	if (f && nvmefs_ublk_record_read(f, &rec) < 0)
		rec.nr_args = 0;
	if (f)
		fclose(f);
	if (!r.quiesced || !rec.nr_args || nvmefs_ublk_dev_info((int)id, &info) < 0) {
		fprintf(stderr, "nvmefs %s: /dev/ublkb%d was not added with --recovery: its daemon "
			"(PID %ld) died, and the kernel stopped it; 'nvmefs ublk del' it and add it "
			"again\n", cmd, (int)id, r.pid);
		goto out;
	}
	/* The recorded options as a command's argument vector. */
	args = calloc(rec.nr_args + 2, sizeof(*args));
	if (!args || takeover_list(&r, &takeover, &a->ublk.nr_takeover) < 0) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		goto out;
	}
	args[0] = (char *)cmd;
	memcpy(args + 1, rec.args, rec.nr_args * sizeof(*args));
	ret = add_parse(a, (int)rec.nr_args + 1, args, true, &helped);
	if (ret != EXIT_OK)
		goto out;
	/* Recorded again by the new daemon, for another recover. */
	a->ublk.args = rec.args;
	a->ublk.nr_args = rec.nr_args;
	a->ublk.takeover = takeover;
	a->ublk.takeover_pid = (pid_t)r.pid;
	/* The queues the device has, whatever CPUs this process may use now. */
	a->ublk.workers = info.nr_queues;
	ret = add_run(a);
out:
	free(args);
	free(takeover);
	nvmefs_ublk_record_free(&rec);
	if (a)
		daemon_done(&a->d);
	free(a);
	return ret;
}

