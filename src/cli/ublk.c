/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs ublk add|list|del: a subsystem's namespaces as ublk block devices
 * (src/ublk/), served by a daemon as a mount is (daemon.c), listed and
 * deleted as the ublk utilities do.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "../common/json.h"
#include "../export/engine.h"
#include "../ublk/devices.h"

/* -i's default stops here, as mount's: each worker pins its buffers. */
#define UBLK_AUTO_MAX_WORKERS 4

struct add_args {
	struct connect_args conn;
	struct path_args paths;
	struct nvmefs_ublk_opts ublk;
	struct daemon_args d;
};

static void help(void)
{
	printf("Usage: nvmefs ublk add [-t %s] -a TRADDR [-s TRSVCID] -n SUBNQN [OPTIONS]\n"
	       "       nvmefs ublk list [-o json]\n"
	       "       nvmefs ublk del /dev/ublkbN|N|SUBNQN\n"
	       "       nvmefs ublk stats /dev/ublkbN|N\n"
	       "\n"
	       "add: connect to the NVM subsystem SUBNQN and serve each of its active namespaces\n"
	       "as a block device /dev/ublkbN through the kernel's ublk driver (ublk_drv; root),\n"
	       "printing each device once it exists.  Runs as a daemon unless -f; it ends, and its\n"
	       "devices go, on SIGTERM, SIGINT or SIGHUP or once 'del' removed them.\n"
	       "list: the devices nvmefs serves.  del: remove a device, or every device of SUBNQN;\n"
	       "I/O held for a removed device (an outage) fails at once, the others serve on.\n"
	       "stats: the statistics of the daemon serving a device (all its devices), as JSON,\n"
	       "as a mount's stats file has them; refreshed every second.\n"
	       "\n"
	       "Options of add:\n"
	       "  -n, --nqn=SUBNQN          subsystem NQN; required\n"
	       "  -i, --nr-io-queues=N      I/O queues, one worker thread and ublk queue each\n"
	       "                            (default: one per CPU this process may use, at most 4)\n"
	       "  -Q, --queue-size=N        entries per I/O queue (default: enough for --iodepth)\n"
	       "      --iodepth=N           requests each worker keeps in flight, shared by the\n"
	       "                            devices (default 32)\n"
	       "      --max-io=SIZE         largest request, a multiple of 4k from 4k to 1M\n"
	       "                            (default 128k)\n"
	       "      --io-timeout=MS       fail the controller when an I/O takes longer\n"
	       "                            (default 30000)\n"
	       "  -f, --foreground          stay in the foreground, log to stderr\n"
	       "      --pidfile=FILE        write the daemon's PID to FILE once the devices exist\n"
	       "  -o, --output-format=FMT   output format: normal (a device a line) or json\n"
	       DAEMON_CONNECT_HELP, DAEMON_CONNECT_HELP_ARGS);
}

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
		ret = daemon_connect(&a->conn, &a->paths, &io, "ublk add", &ctrl, &subsys, &why);
	}
	if (ret == 0) {
		why = nvmefs_ublk_errmsg;
		ret = nvmefs_ublk_run(ctrl, subsys, &a->ublk);
	}
	if (ret < 0) {
		char msg[1100];

		snprintf(msg, sizeof(msg), "nvmefs ublk add: %s\n", why());
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

static int ublk_add(int argc, char **argv)
{
	static const char *const cmd = "ublk add";
	static const struct option longopts[] = {
		DAEMON_LONGOPTS,
		{ "output-format", required_argument, NULL, 'o' },
		{ "max-io", required_argument, NULL, OPT_MAX_IO },
		{ NULL, 0, NULL, 0 },
	};
	struct add_args *a = calloc(1, sizeof(*a));
	bool handled;
	int opt, ret = EXIT_USAGE;

	if (!a) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		return EXIT_FAIL;
	}
	connect_args_init(&a->conn);
	path_args_init(&a->paths);
	daemon_args_init(&a->d, cmd);
	a->ublk.depth = 32;
	a->ublk.max_io = 128u << 10;
	a->ublk.io_timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS;
	while ((opt = next_option(argc, argv, DAEMON_SHORTOPTS "o:", longopts)) != -1) {
		if (opt == '?')
			goto out;
		ret = connect_args_option(&a->conn, cmd, opt, optarg, &handled);
		if (!ret && !handled)
			ret = path_args_option(&a->paths, cmd, opt, optarg, &handled);
		if (!ret && !handled && opt == 'h') {
			help();
			ret = finish_output(cmd, EXIT_OK);
			goto out;
		}
		if (!ret && !handled)
			ret = add_option(a, opt, optarg);
		if (ret)
			goto out;
	}
	ret = EXIT_USAGE;
	a->conn.multipath = path_args_multipath(&a->paths);
	if (connect_args_check(&a->conn, cmd) || path_args_check(&a->paths, &a->conn, cmd))
		goto out;
	if (!a->conn.opts.subnqn) {
		usage_error(cmd, "the subsystem NQN is missing: give it with -n/--nqn ('nvmefs "
			    "discover' lists them)");
		goto out;
	}
	a->ublk.subnqn = a->conn.opts.subnqn;
	a->ublk.json = a->conn.fmt == OUTPUT_JSON;
	if (!a->ublk.workers)
		choose_workers(a);
	ret = daemon_prepare(&a->d, "nvmefs ublk add");
	if (ret == EXIT_OK)
		ret = daemon_run(&a->d, serve_devices, a);
out:
	daemon_done(&a->d);
	free(a);
	return ret;
}

/* A device a daemon recorded (serve.c), still served by it. */
struct rec {
	int id;
	char nqn[256];
	unsigned int nsid;
	long pid;
	/* Its namespace was removed or replaced on the target: its I/O fails. */
	bool gone;
	/* Its daemon died (SIGKILL) without deleting it: the kernel stopped
	 * the device and keeps it, with no server, until DEL_DEV. */
	bool dead;
};

/* Device @id's record, if the device exists and the daemon that recorded
 * it still serves it: 0, else -ENOENT. */
static int rec_read(int id, struct rec *r)
{
	struct nvmefs_ublk_info info;
	char path[64], state[8] = "";
	FILE *f;
	int n;

	snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%d", id);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	n = fscanf(f, "%255s %u %ld %7s", r->nqn, &r->nsid, &r->pid, state);
	fclose(f);
	r->id = id;
	r->gone = !strcmp(state, "gone");
	if (n < 3 || nvmefs_ublk_dev_info(id, &info) < 0)
		return -ENOENT;
	r->dead = info.pid == -1 && kill((pid_t)r->pid, 0) < 0 && errno == ESRCH;
	if (info.pid != r->pid && !r->dead)
		return -ENOENT;
	return 0;
}

/* Every recorded device, by id; *@nr of them. */
static struct rec *rec_all(unsigned int *nr)
{
	DIR *dir = opendir(NVMEFS_UBLK_RUN_DIR);
	struct rec *all = NULL, *grown;
	struct dirent *de;
	unsigned int n = 0;
	int64_t id;

	*nr = 0;
	while (dir && (de = readdir(dir))) {
		if (parse_int(de->d_name, 0, INT32_MAX, &id))
			continue;
		grown = realloc(all, (n + 1) * sizeof(*all));
		if (!grown)
			break;
		all = grown;
		if (rec_read((int)id, &all[n]) == 0)
			n++;
	}
	if (dir)
		closedir(dir);
	*nr = n;
	return all;
}

/* What list says of @r: its daemon's state, or its namespace's. */
static const char *rec_state(const struct rec *r)
{
	return r->dead ? "dead" : r->gone ? "gone" : "live";
}

static int ublk_list(int argc, char **argv)
{
	static const char *const cmd = "ublk list";
	static const struct option longopts[] = {
		{ "output-format", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum output_format fmt = OUTPUT_NORMAL;
	struct rec *all;
	unsigned int n;
	struct json j;
	char path[32];
	int opt;

	while ((opt = next_option(argc, argv, ":o:h", longopts)) != -1) {
		if (opt == '?')
			return EXIT_USAGE;
		if (opt == 'h') {
			help();
			return finish_output(cmd, EXIT_OK);
		}
		if (output_format_parse(optarg, &fmt))
			return usage_error(cmd, "-o/--output-format '%s' is not a format: use "
					   "'normal' or 'json'", optarg);
	}
	all = rec_all(&n);
	if (fmt == OUTPUT_JSON) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_array_begin(&j, "Devices");
	} else {
		printf("%-16s %-9s %-10s %-5s %s\n", "Node", "Namespace", "PID", "State",
		       "SubsystemNQN");
		printf("%-16s %-9s %-10s %-5s %s\n", "----------------", "---------", "----------",
		       "-----", "------------------------------------");
	}
	for (unsigned int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/dev/ublkb%d", all[i].id);
		if (fmt != OUTPUT_JSON) {
			printf("%-16s %-9u %-10ld %-5s %s\n", path, all[i].nsid, all[i].pid,
			       rec_state(&all[i]), all[i].nqn);
			continue;
		}
		json_object_begin(&j, NULL);
		json_string(&j, "DevicePath", path);
		json_string(&j, "SubsystemNQN", all[i].nqn);
		json_uint(&j, "NameSpace", all[i].nsid);
		json_int(&j, "PID", all[i].pid);
		json_string(&j, "State", rec_state(&all[i]));
		json_object_end(&j);
	}
	if (fmt == OUTPUT_JSON) {
		json_array_end(&j);
		json_object_end(&j);
		putchar('\n');
	}
	free(all);
	return finish_output(cmd, EXIT_OK);
}

/* Device @id goes: STOP_DEV and DEL_DEV, which its daemon answers by
 * letting go of it (and ending once it serves no other).  STOP_DEV waits
 * for the device's I/O in flight, held I/O too. */
static int del_one(int id)
{
	int ret = nvmefs_ublk_dev_del(id);

	if (ret < 0) {
		fprintf(stderr, "nvmefs ublk del: deleting /dev/ublkb%d failed: %s%s\n", id,
			strerror(-ret), ret == -EPERM || ret == -EACCES ? ": run as root" : "");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Whether every device daemon @pid serves is among @del's @n. */
static bool all_of_daemon(long pid, const struct rec *all, unsigned int nr_all,
			  const struct rec *del, unsigned int n)
{
	for (unsigned int i = 0; i < nr_all; i++) {
		bool listed = false;

		for (unsigned int k = 0; k < n && !listed; k++)
			listed = del[k].id == all[i].id;
		if (all[i].pid == pid && !listed)
			return false;
	}
	return true;
}

/* Whether daemon @pid still serves one of @del's @n devices. */
static bool still_serves(long pid, const struct rec *del, unsigned int n)
{
	struct rec r;

	for (unsigned int k = 0; k < n; k++)
		if (del[k].pid == pid && rec_read(del[k].id, &r) == 0)
			return true;
	return false;
}

/*
 * @del's @n devices go.  A daemon that loses all its devices is asked to
 * end (SIGTERM), as it does on its own: it gives up an outage and fails
 * the I/O held for a path first, as 'nvme disconnect' does, where the
 * kernel's STOP_DEV would wait for that I/O until ctrl_loss_tmo, or for
 * ever for a namespace no path reaches (ANA).  A daemon that keeps other
 * devices is asked to delete each of these alone, giving up only what is
 * held for it, its other devices serving on.  Those of a daemon that died
 * are deleted here.
 */
static int del_devices(const struct rec *del, unsigned int n)
{
	unsigned int nr_all;
	struct rec *all = rec_all(&nr_all);
	int ret = EXIT_OK;

	for (unsigned int k = 0; k < n; k++) {
		long pid = del[k].pid;
		bool first = true;

		for (unsigned int j = 0; j < k && first; j++)
			first = del[j].pid != pid;
		if (del[k].dead)
			continue;
		if (all && all_of_daemon(pid, all, nr_all, del, n)) {
			if (!first || kill((pid_t)pid, SIGTERM) < 0)
				continue;
			while (still_serves(pid, del, n) && kill((pid_t)pid, 0) == 0)
				usleep(20000);
			continue;
		}
		if (nvmefs_ublk_ask_del((pid_t)pid, del[k].id) < 0)
			continue;
		while (still_serves(pid, &del[k], 1) && kill((pid_t)pid, 0) == 0)
			usleep(20000);
	}
	free(all);
	for (unsigned int k = 0; k < n; k++) {
		char path[64];
		struct rec r;

		if (rec_read(del[k].id, &r) < 0)
			continue;
		if (del_one(del[k].id)) {
			ret = EXIT_FAIL;
			continue;
		}
		if (!r.dead)
			continue;
		snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%d", del[k].id);
		unlink(path);
		printf("/dev/ublkb%d: its daemon (PID %ld) had died; deleted what the kernel kept of it\n",
		       del[k].id, del[k].pid);
	}
	return ret;
}

/* A device as del and stats take it, /dev/ublkbN or N: 0 and its
 * number in *@id, or -EINVAL. */
static int parse_dev(const char *what, int64_t *id)
{
	const char *num = !strncmp(what, "/dev/ublkb", 10) ? what + 10 : what;

	return parse_int(num, 0, INT32_MAX, id);
}

/* The statistics of the daemon serving one device, as the mount's stats
 * file has them (every device of that daemon together). */
static int ublk_stats(int argc, char **argv)
{
	static const char *const cmd = "ublk stats";
	char path[64], buf[4096];
	struct rec r;
	int64_t id;
	size_t n;
	FILE *f;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		help();
		return finish_output(cmd, EXIT_OK);
	}
	if (argc != 2 || argv[1][0] == '-')
		return usage_error(cmd, "give one device (/dev/ublkbN or N)");
	if (parse_dev(argv[1], &id))
		return usage_error(cmd, "'%s' is not a ublk device (/dev/ublkbN or N)", argv[1]);
	if (rec_read((int)id, &r) < 0 || r.dead) {
		fprintf(stderr, "nvmefs %s: /dev/ublkb%d is not a device an nvmefs daemon serves: "
			"'nvmefs ublk list' lists them\n", cmd, (int)id);
		return EXIT_FAIL;
	}
	snprintf(path, sizeof(path), NVMEFS_UBLK_RUN_DIR "/%ld.stats", r.pid);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "nvmefs %s: reading %s failed: %s: its daemon (PID %ld) writes it "
			"every second; try again\n", cmd, path, strerror(errno), r.pid);
		return EXIT_FAIL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return finish_output(cmd, EXIT_OK);
}

static int ublk_del(int argc, char **argv)
{
	static const char *const cmd = "ublk del";
	const char *what;
	struct rec *all, r;
	unsigned int n, found = 0;
	int64_t id;
	int ret;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		help();
		return finish_output(cmd, EXIT_OK);
	}
	if (argc != 2 || argv[1][0] == '-')
		return usage_error(cmd, "give one device (/dev/ublkbN or N) or one subsystem NQN");
	what = argv[1];
	if (strncmp(what, "nqn.", 4)) {
		if (parse_dev(what, &id))
			return usage_error(cmd, "'%s' is neither a ublk device (/dev/ublkbN or N) nor "
					   "an NQN", what);
		if (rec_read((int)id, &r) < 0) {
			fprintf(stderr, "nvmefs %s: /dev/ublkb%d is not a device nvmefs serves: "
				"'nvmefs ublk list' lists them\n", cmd, (int)id);
			return EXIT_FAIL;
		}
		return del_devices(&r, 1);
	}
	all = rec_all(&n);
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(all[i].nqn, what))
			all[found++] = all[i];
	if (!found) {
		free(all);
		fprintf(stderr, "nvmefs %s: no device nvmefs serves is of %s: 'nvmefs ublk list' "
			"lists them\n", cmd, what);
		return EXIT_FAIL;
	}
	ret = del_devices(all, found);
	free(all);
	return ret;
}

int cmd_ublk(int argc, char **argv)
{
	/* Each named as its messages name it. */
	static const struct command subs[] = {
		{ "add", "ublk add", ublk_add },
		{ "list", "ublk list", ublk_list },
		{ "del", "ublk del", ublk_del },
		{ "stats", "ublk stats", ublk_stats },
	};

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		help();
		return finish_output("ublk", EXIT_OK);
	}
	for (size_t i = 0; argc >= 2 && i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i].name)) {
			argv[1] = (char *)subs[i].summary;
			optind = 1;
			return subs[i].fn(argc - 1, argv + 1);
		}
	return usage_error("ublk", argc < 2 ? "give add, list, del or stats"
				   : "'%s' is not add, list, del or stats", argc < 2 ? "" : argv[1]);
}
