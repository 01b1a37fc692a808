/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs ublk: a subsystem's namespaces as ublk block devices (src/ublk/),
 * served by a daemon as a mount is (add and recover: ublk_add.c), listed,
 * deleted and their daemons' statistics shown (here, from the devices'
 * records) as the ublk utilities do.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/ublk_cmd.h>

#include "ublk.h"
#include "../common/json.h"

void ublk_help(void)
{
	printf("Usage: nvmefs ublk add [-t %s] -a TRADDR [-s TRSVCID] -n SUBNQN [OPTIONS]\n"
	       "       nvmefs ublk list [-o json]\n"
	       "       nvmefs ublk del /dev/ublkbN|N|SUBNQN\n"
	       "       nvmefs ublk stats /dev/ublkbN|N\n"
	       "       nvmefs ublk recover /dev/ublkbN|N [-f] [--pidfile=FILE] [-o FMT]\n"
	       "\n"
	       "add: connect to the NVM subsystem SUBNQN and serve each of its active namespaces\n"
	       "as a block device /dev/ublkbN through the kernel's ublk driver (ublk_drv; root),\n"
	       "printing each device once it exists.  Runs as a daemon unless -f; it ends, and its\n"
	       "devices go, on SIGTERM, SIGINT or SIGHUP or once 'del' removed them.\n"
	       "list: the devices nvmefs serves.  del: remove a device, or every device of SUBNQN;\n"
	       "I/O held for a removed device (an outage) fails at once, the others serve on.\n"
	       "stats: the statistics of the daemon serving a device (all its devices), as JSON,\n"
	       "as a mount's stats file has them; refreshed every second.\n"
	       "recover: a device added with --recovery whose daemon died (list says quiesced)\n"
	       "taken over, with every other device of that daemon, by a new daemon started with\n"
	       "the options it was added with; the I/O that waited goes on, none lost.\n"
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
	       "      --recovery            a daemon that dies leaves its devices in place, their\n"
	       "                            I/O waiting, for 'recover' (else they go)\n"
	       DAEMON_CONNECT_HELP, DAEMON_CONNECT_HELP_ARGS);
}

int rec_read(int id, struct rec *r)
{
	struct nvmefs_ublk_info info;
	struct nvmefs_ublk_record rec;
	char path[64];
	bool exited;
	FILE *f;
	int ret;

	nvmefs_ublk_record_path(path, sizeof(path), id);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	ret = nvmefs_ublk_record_read(f, &rec);
	fclose(f);
	if (ret < 0 || nvmefs_ublk_dev_info(id, &info) < 0) {
		nvmefs_ublk_record_free(&rec);
		return -ENOENT;
	}
	r->id = id;
	memcpy(r->nqn, rec.nqn, sizeof(r->nqn));
	r->nsid = rec.nsid;
	r->pid = rec.pid;
	r->gone = rec.gone;
	nvmefs_ublk_record_free(&rec);
	exited = kill((pid_t)r->pid, 0) < 0 && errno == ESRCH;
	/* A device the kernel stopped has no daemon (-1); one it quiesced
	 * still names the dead one, and is quiesced only once that daemon
	 * died, whoever has its PID now. */
	r->dead = (exited && (info.pid == -1 || info.pid == r->pid)) ||
		  (info.state == UBLK_S_DEV_QUIESCED && info.pid == r->pid);
	r->quiesced = r->dead && info.state != UBLK_S_DEV_DEAD;
	if (info.pid != r->pid && !r->dead)
		return -ENOENT;
	return 0;
}

struct rec *rec_all(unsigned int *nr)
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
	return r->quiesced ? "quiesced" : r->dead ? "dead" : r->gone ? "gone" : "live";
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
			ublk_help();
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
		printf("%-16s %-9s %-10s %-8s %s\n", "Node", "Namespace", "PID", "State",
		       "SubsystemNQN");
		printf("%-16s %-9s %-10s %-8s %s\n", "----------------", "---------", "----------",
		       "--------", "------------------------------------");
	}
	for (unsigned int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/dev/ublkb%d", all[i].id);
		if (fmt != OUTPUT_JSON) {
			printf("%-16s %-9u %-10ld %-8s %s\n", path, all[i].nsid, all[i].pid,
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

/* A dead daemon cannot remove its statistics file: once none of its
 * devices is left, its file goes, as a daemon's own stop removes it. */
static void unrecord_dead_stats(long pid)
{
	unsigned int nr;
	struct rec *all = rec_all(&nr);
	char path[64];

	for (unsigned int i = 0; all && i < nr; i++)
		if (all[i].pid == pid) {
			free(all);
			return;
		}
	free(all);
	nvmefs_ublk_stats_path(path, sizeof(path), pid);
	unlink(path);
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
		nvmefs_ublk_record_path(path, sizeof(path), del[k].id);
		unlink(path);
		printf("/dev/ublkb%d: its daemon (PID %ld) had died; deleted what the kernel kept of it\n",
		       del[k].id, del[k].pid);
		unrecord_dead_stats(del[k].pid);
	}
	return ret;
}

int parse_dev(const char *what, int64_t *id)
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
		ublk_help();
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
	nvmefs_ublk_stats_path(path, sizeof(path), r.pid);
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
		ublk_help();
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
		{ "recover", "ublk recover", ublk_recover },
	};

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		ublk_help();
		return finish_output("ublk", EXIT_OK);
	}
	for (size_t i = 0; argc >= 2 && i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(argv[1], subs[i].name)) {
			argv[1] = (char *)subs[i].summary;
			optind = 1;
			return subs[i].fn(argc - 1, argv + 1);
		}
	return usage_error("ublk", argc < 2 ? "give add, list, del, stats or recover"
				   : "'%s' is not add, list, del, stats or recover",
			   argc < 2 ? "" : argv[1]);
}
