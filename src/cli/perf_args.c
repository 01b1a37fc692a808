/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs perf's command line: its options, their checks, and the layout
 * (queues, threads, CPUs, mode) chosen where they leave it open; perf.c
 * runs what they describe.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "paths.h"
#include "perf.h"
#include "perf_report.h"
#include "util_parse.h"

static const char *const cmd = "perf";

enum {
	OPT_NSID = OPT_FIRST_COMMAND_OPTION,
	OPT_RW,
	OPT_MIX,
	OPT_BS,
	OPT_IODEPTH,
	OPT_THREADS,
	OPT_CPUS,
	OPT_TIME,
	OPT_SIZE,
	OPT_OFFSET,
	OPT_VERIFY,
	OPT_MODE,
	OPT_IO_TIMEOUT,
	OPT_QUIET,
};

static void help(void)
{
	printf("Usage: nvmefs perf [-t %s] -a TRADDR [-s TRSVCID] -n SUBNQN [--nsid=NSID]\n"
	       "                   [--rw=WORKLOAD] [--bs=SIZE] [--iodepth=N] [-i N] [--threads=N]\n"
	       "                   [--time=SEC] [--verify] ...\n"
	       "\n"
	       "Drive namespace NSID of subsystem SUBNQN with a workload over I/O queues (each\n"
	       "thread keeping --iodepth I/Os in flight from registered buffers, spread over its\n"
	       "queues), print a progress line each second on stderr, then IOPS, bandwidth, CPU\n"
	       "time and latency percentiles (of reads and writes apart too, with randrw).\n"
	       "Without -i, --threads and --cpus, the layout is chosen for speed (-v says which).\n"
	       "\n"
	       "Options:\n"
	       "  -n, --nqn=SUBNQN          subsystem NQN; required\n"
	       "      --nsid=NSID           namespace (default 1)\n"
	       "      --rw=WORKLOAD         read, write, randread, randwrite or randrw (default\n"
	       "                            randread)\n"
	       "      --mix=PCT             reads in percent of randrw (default 50)\n"
	       "      --bs=SIZE             bytes per I/O, K/M suffixes (default 4k)\n"
	       "      --iodepth=N           I/Os in flight per thread, spread over its queues\n"
	       "                            (default 32; --qd, its old spelling, too)\n"
	       "  -i, --nr-io-queues=N      I/O queues (default: one per 8 of --iodepth per\n"
	       "                            thread; --queues, its old spelling, too)\n"
	       "      --threads=N           threads driving them, each spreading its I/Os over\n"
	       "                            every N-th queue (default 1, or one per 16 queues)\n"
	       "      --cpus=LIST|none      run thread t on the t-th CPU of LIST, round robin\n"
	       "                            (taskset -c style: 0,2 or 1-3; default: the first\n"
	       "                            CPUs this process may use; none: unpinned)\n"
	       "  -Q, --queue-size=N        entries per I/O queue (default: room for every I/O\n"
	       "                            whole at the controller's largest transfer)\n"
	       "      --time=SEC            how long to run (default 10)\n"
	       "      --size=SIZE           bytes of the namespace to use (default: to its end)\n"
	       "      --offset=SIZE         where that region starts (default 0)\n"
	       "      --verify              write the region once, then check every block read\n"
	       "      --mode=MODE           'event': sleep until completions come (the default\n"
	       "                            above --iodepth 1); 'poll': spin on the completion\n"
	       "                            queues (yielding the CPU when nothing came), the\n"
	       "                            lowest latency (the default at --iodepth 1)\n"
	       "      --io-timeout=MS       fail the controller when an I/O takes longer\n"
	       "                            (default 30000)\n"
	       "      --quiet               no progress lines on stderr (errors and the result\n"
	       "                            still come)\n"
	       CONNECT_HELP
	       PATHS_HELP
	       HELP_HELP, transports_text(true), CONNECT_HELP_ARGS);
}

/* Writes @n CPU numbers as a list like "0,1" into @buf. */
static void format_cpu_numbers(const unsigned int *cpus, unsigned int n, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < n && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%u", i ? "," : "", cpus[i]);
}

/* Writes the CPUs of @set as a list like "0-3,6" into @buf. */
static void format_cpu_set(const cpu_set_t *set, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && len < size; c++) {
		int last = c;

		if (!CPU_ISSET(c, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		len += snprintf(buf + len, size - len, last > c ? "%s%d-%d" : "%s%d",
				len ? "," : "", c, last);
		c = last;
	}
}

/* Takes --cpus: CPUs this process may run on, in the order given. */
static int check_cpus(struct perf_args *a, const char *arg)
{
	cpu_set_t allowed;
	char list[256];

	if (!strcmp(arg, "none")) {
		a->unpinned = true;
		a->nr_cpus = 0;
		return 0;
	}
	a->unpinned = false;
	if (parse_cpu_list(arg, CPU_SETSIZE - 1, a->cpus, MAX_CPUS, &a->nr_cpus))
		return usage_error(cmd, "--cpus '%s' is not a CPU list: give CPU numbers and ranges "
				   "like 0, 0,2 or 1-3, at most %u of them, or none", arg, MAX_CPUS);
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		fprintf(stderr, "nvmefs %s: --cpus: reading the CPUs this process may use failed: %s\n",
			cmd, strerror(errno));
		return EXIT_FAIL;
	}
	for (unsigned int i = 0; i < a->nr_cpus; i++) {
		if (!CPU_ISSET(a->cpus[i], &allowed)) {
			format_cpu_set(&allowed, list, sizeof(list));
			return usage_error(cmd, "--cpus: CPU %u is not one this process may run on; "
					   "pick from %s", a->cpus[i], list);
		}
	}
	snprintf(a->cpus_text, sizeof(a->cpus_text), "%s", arg);
	return 0;
}

/*
 * What the command line leaves open, chosen for speed from the depth and the
 * CPUs this process may use (perf_layout.h), and said with -v; then the
 * checks of what it gave.
 */
static int choose_layout(struct perf_args *a)
{
	const bool auto_queues = !a->queues, auto_threads = !a->threads;
	unsigned int most_queues;
	cpu_set_t allowed;
	char list[256];

	if (!a->threads)
		a->threads = a->queues ? perf_auto_threads(a->queues) : 1;
	if (!a->queues) {
		a->queues = perf_auto_queues(a->qd, a->threads);
		a->queues_chosen = true;
	}
	if (a->threads > a->queues)
		return usage_error(cmd, "--threads %u is more than the %u queue%s: a queue is driven "
				   "by one thread; raise -i/--nr-io-queues or lower --threads", a->threads,
				   a->queues, a->queues == 1 ? "" : "s");
	most_queues = (a->queues + a->threads - 1) / a->threads;
	if (most_queues > MAX_QUEUES_PER_THREAD)
		return usage_error(cmd, "-i/--nr-io-queues %u over --threads %u gives a thread more than %u "
				   "queues: raise --threads", a->queues, a->threads,
				   MAX_QUEUES_PER_THREAD);
	if (a->qd < most_queues)
		return usage_error(cmd, "--iodepth %u is fewer I/Os than a thread's %u queues: "
				   "each queue needs one; raise --iodepth or lower -i/--nr-io-queues", a->qd, most_queues);
	if (a->queue_size && perf_queue_depth_most(a) >= a->queue_size)
		return usage_error(cmd, "--iodepth %u puts %u I/Os on a queue, which needs more "
				   "than %u entries: raise -Q/--queue-size or lower --iodepth", a->qd,
				   perf_queue_depth_most(a), perf_queue_depth_most(a));
	if (!a->nr_cpus && !a->unpinned) {
		if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
			fprintf(stderr, "nvmefs %s: reading the CPUs this process may use failed: %s; "
				"leave the threads unpinned with --cpus none\n", cmd, strerror(errno));
			return EXIT_FAIL;
		}
		a->nr_cpus = perf_auto_cpus(&allowed, a->threads, a->cpus, MAX_CPUS);
		format_cpu_set(&allowed, list, sizeof(list));
		format_cpu_numbers(a->cpus, a->nr_cpus, a->cpus_text, sizeof(a->cpus_text));
		verbose(&a->conn, cmd, "threads pinned to CPU%s %s (of the %s this process may use; "
			"--cpus none leaves them to the scheduler)", a->nr_cpus == 1 ? "" : "s",
			a->cpus_text, list);
	}
	if (!a->mode_given) {
		a->event_mode = a->qd > 1;
		verbose(&a->conn, cmd, "%s mode, chosen: %s; --mode sets it",
			a->event_mode ? "event" : "poll", a->event_mode ? "with more than one I/O in "
			"flight a thread sleeps until completions come" : "with one I/O in flight, "
			"spinning on it is the lowest latency");
	}
	if (auto_queues)
		verbose(&a->conn, cmd, "%u I/O queue%s, chosen: one per %u I/Os of --iodepth (RDMA "
			"devices like soft-RoCE work through one queue pair's packets at a time); "
			"-i/--nr-io-queues sets them", a->queues, a->queues == 1 ? "" : "s",
			PERF_DEPTH_PER_QUEUE);
	verbose(&a->conn, cmd, "%u thread%s%s, each keeping --iodepth %u I/Os in flight over its "
		"queues (at most %u on one)", a->threads, a->threads == 1 ? "" : "s",
		auto_threads ? " (chosen; --threads sets them)" : "", a->qd, perf_queue_depth_most(a));
	return 0;
}

int cmd_perf(int argc, char **argv)
{
	static const struct option longopts[] = {
		CONNECT_LONGOPTS,
		PATHS_LONGOPTS,
		{ "nqn", required_argument, NULL, 'n' },
		{ "nsid", required_argument, NULL, OPT_NSID },
		{ "rw", required_argument, NULL, OPT_RW },
		{ "mix", required_argument, NULL, OPT_MIX },
		{ "bs", required_argument, NULL, OPT_BS },
		{ "iodepth", required_argument, NULL, OPT_IODEPTH },
		{ "qd", required_argument, NULL, OPT_IODEPTH },
		{ "nr-io-queues", required_argument, NULL, 'i' },
		{ "queues", required_argument, NULL, 'i' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "queue-size", required_argument, NULL, 'Q' },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "offset", required_argument, NULL, OPT_OFFSET },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "io-timeout", required_argument, NULL, OPT_IO_TIMEOUT },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ NULL, 0, NULL, 0 },
	};
	struct perf_args a = {
		.nsid = 1, .rw = WL_RANDREAD, .mix = 50, .bs = 4096, .qd = 32,
		.seconds = 10, .io_timeout_ms = NVMEFS_DEFAULT_IO_TIMEOUT_MS, .event_mode = true,
	};
	bool handled, mix_given = false;
	uint64_t v;
	int opt, ret;
	unsigned int i;

	connect_args_init(&a.conn);
	path_args_init(&a.paths);
	while ((opt = next_option(argc, argv, ":" CONNECT_SHORTOPTS "n:i:Q:h", longopts)) != -1) {
		ret = connect_args_option(&a.conn, cmd, opt, optarg, &handled);
		if (!ret && !handled)
			ret = path_args_option(&a.paths, cmd, opt, optarg, &handled);
		if (ret)
			return ret;
		if (handled)
			continue;
		switch (opt) {
		case 'n':
			if (!*optarg)
				return usage_error(cmd, "-n/--nqn needs a value, got an empty one");
			a.conn.opts.subnqn = optarg;
			break;
		case OPT_NSID:
			if (parse_uint(optarg, 1, 0xfffffffe, &v))
				return usage_error(cmd, "--nsid '%s' is not a namespace ID: give a number "
						   "from 1 to 4294967294", optarg);
			a.nsid = (uint32_t)v;
			break;
		case OPT_RW:
			for (i = 0; i < 5 && strcmp(optarg, workload_names[i]); i++)
				;
			if (i == 5)
				return usage_error(cmd, "--rw '%s' is not a workload: give read, write, "
						   "randread, randwrite or randrw", optarg);
			a.rw = (enum workload)i;
			break;
		case OPT_MIX:
			if (parse_uint(optarg, 0, 100, &v))
				return usage_error(cmd, "--mix '%s' is not a percentage from 0 to 100", optarg);
			a.mix = (unsigned int)v;
			mix_given = true;
			break;
		case OPT_BS:
			if (parse_size(optarg, 512, 64u << 20, &v) || (v & 511))
				return usage_error(cmd, "--bs '%s' is not a block size: give a multiple of "
						   "512 from 512 to 64M, like 4k or 128k", optarg);
			a.bs = (uint32_t)v;
			break;
		case OPT_IODEPTH:
			if (parse_uint(optarg, 1, 4095, &v))
				return usage_error(cmd, "--iodepth '%s' is not a queue depth from 1 to 4095",
						   optarg);
			a.qd = (unsigned int)v;
			break;
		case 'i':
			if (parse_uint(optarg, 1, PERF_MAX_QUEUES, &v))
				return usage_error(cmd, "-i/--nr-io-queues '%s' is not a number of queues "
						   "from 1 to %u", optarg, PERF_MAX_QUEUES);
			a.queues = (unsigned int)v;
			break;
		case OPT_THREADS:
			if (parse_uint(optarg, 1, PERF_MAX_QUEUES, &v))
				return usage_error(cmd, "--threads '%s' is not a number of threads from 1 "
						   "to %u", optarg, PERF_MAX_QUEUES);
			a.threads = (unsigned int)v;
			break;
		case OPT_CPUS:
			ret = check_cpus(&a, optarg);
			if (ret)
				return ret;
			break;
		case 'Q':
			if (parse_uint(optarg, 2, 4096, &v))
				return usage_error(cmd, "-Q/--queue-size '%s' is not a queue size from 2 to "
						   "4096", optarg);
			a.queue_size = (unsigned int)v;
			break;
		case OPT_TIME:
			if (parse_uint(optarg, 1, 86400, &v))
				return usage_error(cmd, "--time '%s' is not a number of seconds from 1 to 86400",
						   optarg);
			a.seconds = (unsigned int)v;
			break;
		case OPT_SIZE:
			if (parse_size(optarg, 512, UINT64_MAX, &a.size))
				return usage_error(cmd, "--size '%s' is not a size like 64M or 1G", optarg);
			break;
		case OPT_OFFSET:
			if (parse_size(optarg, 0, UINT64_MAX, &a.offset))
				return usage_error(cmd, "--offset '%s' is not a size like 0 or 1G", optarg);
			break;
		case OPT_VERIFY:
			a.verify = true;
			break;
		case OPT_QUIET:
			a.quiet = true;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "poll") && strcmp(optarg, "event"))
				return usage_error(cmd, "--mode '%s' is not 'poll' or 'event'", optarg);
			a.event_mode = !strcmp(optarg, "event");
			a.mode_given = true;
			break;
		case OPT_IO_TIMEOUT:
			if (parse_uint(optarg, 1, NVMEFS_MAX_TIMEOUT_MS, &v))
				return usage_error(cmd, "--io-timeout '%s' is not a number of milliseconds "
						   "from 1 to %d", optarg, NVMEFS_MAX_TIMEOUT_MS);
			a.io_timeout_ms = (unsigned int)v;
			break;
		case 'h':
			help();
			return finish_output(cmd, EXIT_OK);
		default:
			return EXIT_USAGE;
		}
	}
	a.conn.multipath = path_args_multipath(&a.paths);
	ret = connect_args_check(&a.conn, cmd);
	if (ret == EXIT_OK)
		ret = path_args_check(&a.paths, &a.conn, cmd);
	if (ret)
		return ret;
	if (!a.conn.opts.subnqn)
		return usage_error(cmd, "the subsystem NQN is missing: give it with -n/--nqn "
				   "('nvmefs discover' lists them)");
	if (mix_given && a.rw != WL_RANDRW)
		return usage_error(cmd, "--mix is the share of reads in --rw randrw, and --rw is %s: "
				   "give --rw randrw or leave --mix out", workload_names[a.rw]);
	ret = choose_layout(&a);
	if (ret)
		return ret;
	return perf_run(&a);
}
