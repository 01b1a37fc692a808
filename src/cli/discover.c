/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs discover: read a discovery controller's log, and optionally the
 * logs it refers to, and print them as `nvme discover` does.
 *
 * With --persistent, stay connected to the one discovery controller (with
 * a keep-alive, so the library gives it its own thread: Keep Alive, an
 * Asynchronous Event Request outstanding, reconnects) and print its log
 * again each time it changes.  The library's thread only signals the main
 * thread through a pipe; the main thread reads and prints.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <nvme/types.h>

#include "cli.h"
#include "discover.h"
#include "../common/histogram.h"

static const char *const cmd = "discover";

/* Referrals form a graph the library walks once per controller; this only
 * bounds how far a misconfigured fabric can send us. */
#define MAX_REFERRAL_DEPTH 16

/* The keep-alive of a persistent discovery controller unless -k says
 * otherwise: nvme-cli's NVMF_DEF_DISC_TMO. */
#define PERSISTENT_KATO_S 30
/* After a failed read of the log on a live controller, the first pause
 * before the next; it doubles up to the reconnect delay (-c). */
#define REREAD_FIRST_MS 1000

enum {
	OPT_REFERRAL_DEPTH = OPT_FIRST_COMMAND_OPTION,
};

/* ------------------------------------------------------------------------ */
/* --persistent                                                             */
/* ------------------------------------------------------------------------ */

struct watch {
	const struct connect_args *args;
	/* The library's thread -> the main thread: a byte means "look". */
	int wake[2];
	/* The controller said its log changed (or reconnected): read it. */
	atomic_bool changed;
};

/* From the library's thread: must not block, and does not (a full pipe
 * already holds a wake-up). */
static void wake(struct watch *w)
{
	char c = 0;

	if (write(w->wake[1], &c, 1) < 0) {
		/* EAGAIN: the main thread has wake-ups to read already. */
	}
}

static void on_change(void *arg, enum nvmefs_ctrl_change what)
{
	struct watch *w = arg;

	if (what != NVMEFS_CHANGE_DISCOVERY_LOG)
		return;
	atomic_store(&w->changed, true);
	wake(w);
}

/* Each state transition on stderr as it happens; the main thread looks at
 * the new state (deleted: time to go). */
static void on_event(void *arg, const struct nvmefs_ctrl_status *st, const char *msg)
{
	(void)st;
	fprintf(stderr, "nvmefs %s: %s\n", cmd, msg);
	wake(arg);
}

/* Byte for byte, header (generation counter) and records; NULL is no log. */
static bool same_log(const struct nvmf_discovery_log *a, const struct nvmf_discovery_log *b)
{
	if (!a || !b || a->numrec != b->numrec)
		return false;
	return memcmp(a, b, sizeof(*a) + le64toh(a->numrec) * sizeof(a->entries[0])) == 0;
}

/* One log: in JSON one line, in text nvme discover's block, after a line
 * saying why it is printed again (@why NULL for the first). */
static int print_again(const struct watch *w, const struct nvmf_discovery_log *log,
		       const char *why)
{
	uint64_t nrec = le64toh(log->numrec);
	char stamp[64] = "";
	struct tm tm;
	time_t now;

	verbose(w->args, cmd, "discovery log: %" PRIu64 " records, generation %" PRIu64, nrec,
		le64toh(log->genctr));
	if (w->args->fmt == OUTPUT_JSON) {
		print_discovery_log_line(stdout, log, nrec);
	} else {
		if (why) {
			now = time(NULL);
			if (localtime_r(&now, &tm))
				strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S %z", &tm);
			printf("\nDiscovery log changed, %s (%s):\n", why, stamp);
		}
		print_discovery_log(stdout, log, nrec, OUTPUT_NORMAL);
	}
	return finish_output(cmd, EXIT_OK);
}

/* One line on stderr when the controller is given up, for the exit status 1. */
static void report_deleted(const struct watch *w, const struct nvmefs_ctrl_status *cs)
{
	char addr[300], why[80];

	connect_args_where(&w->args->opts, addr, sizeof(addr));
	if (w->args->opts.ctrl_loss_tmo_s == 0)
		snprintf(why, sizeof(why), "not reconnecting (-l 0)");
	else if (w->args->opts.ctrl_loss_tmo_s > 0)
		snprintf(why, sizeof(why), "not reconnected within -l/--ctrl-loss-tmo %d s",
			 w->args->opts.ctrl_loss_tmo_s);
	else
		snprintf(why, sizeof(why), "given up");
	fflush(stdout);
	fprintf(stderr, "nvmefs %s: lost the discovery controller at %s, %s: %s\n", cmd, addr, why,
		cs->reason[0] ? cs->reason : "deleted");
}

static int64_t now_ms(void)
{
	return (int64_t)(hist_now_ns() / 1000000);
}

/* The main loop of --persistent, on a connected controller: returns the exit status. */
static int watch_loop(struct watch *w, struct nvmefs_ctrl *ctrl, int sigfd)
{
	struct nvmf_discovery_log *last = NULL, *log;
	int64_t reread_at = 0, pause_ms = REREAD_FIRST_MS, cap_ms;
	struct nvmefs_ctrl_status cs;
	unsigned int reconnects = 0;
	int ret = EXIT_OK, timeout;
	bool pending = true;
	char drain[64];

	cap_ms = (int64_t)w->args->opts.reconnect_delay_s * 1000;
	for (;;) {
		struct pollfd fds[2] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = w->wake[0], .events = POLLIN },
		};
		struct signalfd_siginfo si;

		if (atomic_exchange(&w->changed, false))
			pending = true;
		nvmefs_ctrl_status(ctrl, &cs);
		if (cs.state == NVMEFS_CTRL_DELETED) {
			report_deleted(w, &cs);
			ret = EXIT_FAIL;
			break;
		}
		if (pending && cs.state == NVMEFS_CTRL_LIVE && now_ms() >= reread_at) {
			pending = false;
			if (nvmefs_get_discovery_log(ctrl, &log) < 0) {
				/* A controller that failed is read again once it has
				 * reconnected; a live one is asked again, less and
				 * less often. */
				pending = true;
				nvmefs_ctrl_status(ctrl, &cs);
				fflush(stdout);
				if (cs.state != NVMEFS_CTRL_LIVE) {
					fprintf(stderr, "nvmefs %s: reading the discovery log failed: %s; "
						"reading it again once reconnected\n", cmd,
						nvmefs_errmsg());
					continue;
				}
				fprintf(stderr, "nvmefs %s: reading the discovery log failed: %s; "
					"trying again in %lld s\n", cmd, nvmefs_errmsg(),
					(long long)(pause_ms / 1000));
				reread_at = now_ms() + pause_ms;
				pause_ms = pause_ms * 2 < cap_ms ? pause_ms * 2 : cap_ms;
				continue;
			}
			reread_at = 0;
			pause_ms = REREAD_FIRST_MS;
			/* A reconnect, or an event for what an earlier read already
			 * showed, may bring the same log: printed once. */
			if (!same_log(log, last)) {
				ret = print_again(w, log, !last ? NULL
						  : cs.reconnects != reconnects ? "found after reconnecting"
						  : "reported by the target");
				free(last);
				last = log;
				if (ret != EXIT_OK)
					break;
			} else {
				verbose(w->args, cmd, "discovery log read again, unchanged (generation "
					"%" PRIu64 ")", le64toh(log->genctr));
				free(log);
			}
			reconnects = cs.reconnects;
			continue;
		}
		timeout = -1;
		if (pending && cs.state == NVMEFS_CTRL_LIVE) {
			int64_t left = reread_at - now_ms();

			timeout = left < 0 ? 0 : (int)left;
		}
		if (poll(fds, 2, timeout) < 0 && errno != EINTR) {
			fprintf(stderr, "nvmefs %s: waiting for events failed: %s\n", cmd, strerror(errno));
			ret = EXIT_FAIL;
			break;
		}
		if ((fds[0].revents & POLLIN) && read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			verbose(w->args, cmd, "%s: disconnecting", strsignal((int)si.ssi_signo));
			ret = EXIT_OK;
			break;
		}
		while (read(w->wake[0], drain, sizeof(drain)) > 0)
			;
	}
	free(last);
	return ret;
}

/* discover --persistent: connect with a keep-alive, print, watch, print again. */
static int persistent(struct connect_args *args)
{
	struct watch w = { .args = args, .wake = { -1, -1 } };
	struct nvmefs_ctrl *ctrl = NULL;
	sigset_t stop, old;
	int sigfd = -1, ret = EXIT_FAIL;
	char addr[300];

	if (args->opts.kato_ms < 0)
		args->opts.kato_ms = PERSISTENT_KATO_S * 1000;
	/* SIGINT and SIGTERM come through a descriptor the main loop polls; the
	 * library's thread, created with them blocked, never sees them.  A reader
	 * gone is a write error to report, not a death by SIGPIPE. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0 || pipe2(w.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		fprintf(stderr, "nvmefs %s: setting up the event loop failed: %s\n", cmd,
			strerror(errno));
		goto out;
	}
	verbose(args, cmd, "connecting to the discovery controller at %s, keep-alive %d s, "
		"timeout %u ms", connect_args_where(&args->opts, addr, sizeof(addr)),
		args->opts.kato_ms / 1000, args->opts.timeout_ms);
	ret = nvmefs_ctrl_connect(&args->opts, &ctrl);
	connect_args_forget_secrets(args);
	if (ret < 0) {
		fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
		goto out;
	}
	verbose_connected(args, cmd, ctrl);
	nvmefs_ctrl_set_event_cb(ctrl, on_event, &w);
	nvmefs_ctrl_set_change_cb(ctrl, on_change, &w);
	ret = watch_loop(&w, ctrl, sigfd);
	/* Disconnecting is no outage to tell. */
	nvmefs_ctrl_set_change_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_set_event_cb(ctrl, NULL, NULL);
	nvmefs_ctrl_disconnect(ctrl);
out:
	if (w.wake[0] >= 0) {
		close(w.wake[0]);
		close(w.wake[1]);
	}
	if (sigfd >= 0) {
		struct signalfd_siginfo si;

		/* A second Ctrl-C while disconnecting is taken here, not by the
		 * default action once the mask is restored. */
		while (read(sigfd, &si, sizeof(si)) == sizeof(si))
			;
		close(sigfd);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

void discover_help(void)
{
	printf("Usage: nvmefs discover [-t %s] [-a TRADDR] [-s TRSVCID] [-q HOSTNQN]\n"
	       "                       [-I HOSTID] [-o normal|json] [-v]\n"
	       "                       [-p | --referral-depth=N]\n"
	       "\n"
	       "Connect to the discovery controller at TRADDR:TRSVCID over RDMA or TCP, read\n"
	       "its discovery log and print it as 'nvme discover' does.  Without -a and -t,\n"
	       "each line of /etc/nvme/discovery.conf names one, as for 'nvme discover'.\n"
	       "\n"
	       "Options:\n"
	       CONNECT_HELP
	       "      --referral-depth=N    also read the logs of referred discovery\n"
	       "                            controllers, up to N referrals deep\n"
	       "                            (default 0: do not follow referrals; at most %d)\n"
	       "  -p, --persistent          stay connected (keep-alive, -k default %d) and\n"
	       "                            print the log again each time it changes, until\n"
	       "                            SIGINT or SIGTERM; with -o json, one line per log\n"
	       HELP_HELP, transports_text(true), CONNECT_HELP_ARGS, MAX_REFERRAL_DEPTH,
	       PERSISTENT_KATO_S);
}

struct discover_state {
	const struct connect_args *args;
	/* Our own stop (a write error), not the library's. */
	bool write_failed;
	/* Referred controllers whose logs could not be read: the walk goes on
	 * without them, and the exit status says the output is incomplete. */
	int referrals_unread;
};

static int print_log(const struct nvmefs_connect_opts *where,
		     const struct nvmf_discovery_log *log, int depth, void *arg)
{
	struct discover_state *st = arg;
	uint64_t nrec;
	char addr[300];

	if (!log) {
		fflush(stdout);
		fprintf(stderr, "nvmefs %s: skipped the referral to %s (depth %d), printing the "
			"other logs: %s\n", cmd, connect_args_where(where, addr, sizeof(addr)), depth,
			nvmefs_errmsg());
		st->referrals_unread++;
		return 0;
	}
	nrec = le64toh(log->numrec);
	verbose(st->args, cmd, "discovery log of %s%s%s (referral depth %d): %" PRIu64
		" records, generation %" PRIu64 "; host NQN %s, host ID %s",
		connect_args_where(where, addr, sizeof(addr)),
		where->subnqn ? " " : "", where->subnqn ? where->subnqn : "", depth, nrec,
		le64toh(log->genctr), where->hostnqn ? where->hostnqn : "(default)",
		where->hostid ? where->hostid : "(default)");
	print_discovery_log(stdout, log, nrec, st->args->fmt);
	if (ferror(stdout)) {
		st->write_failed = true;
		return -EIO;
	}
	return 0;
}

void discover_args_init(struct discover_args *d)
{
	memset(d, 0, sizeof(*d));
	connect_args_init(&d->args);
}

int discover_parse(struct discover_args *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		CONNECT_LONGOPTS,
		{ "referral-depth", required_argument, NULL, OPT_REFERRAL_DEPTH },
		{ "persistent", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	bool handled;
	int opt, ret;

	/* Each argument vector from its start: a file's lines are parsed too. */
	optind = 0;
	while ((opt = next_option(argc, argv, ":" CONNECT_SHORTOPTS "ph", longopts)) != -1) {
		ret = connect_args_option(&d->args, cmd, opt, optarg, &handled);
		if (ret)
			return ret;
		if (handled)
			continue;
		switch (opt) {
		case OPT_REFERRAL_DEPTH:
			if (parse_uint(optarg, 0, MAX_REFERRAL_DEPTH, &d->depth))
				return usage_error(cmd, "--referral-depth '%s' is not a depth: give a "
						   "number from 0 to %d", optarg, MAX_REFERRAL_DEPTH);
			break;
		case 'p':
			d->persist = true;
			break;
		case 'h':
			d->help = true;
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (!d->args.opts.traddr)
		return EXIT_OK;
	ret = connect_args_check(&d->args, cmd);
	if (ret)
		return ret;
	if (!d->args.opts.trsvcid)
		d->args.opts.trsvcid = default_trsvcid(d->args.opts.trtype, true);
	if (d->persist) {
		/* One controller watched, one log per line: a walk has no place. */
		if (d->depth)
			return usage_error(cmd, "--referral-depth cannot go with -p/--persistent, which "
					   "watches only the discovery controller at -a");
		/* Without a keep-alive the library lets a discovery controller go
		 * after reading it: no events, no reconnects. */
		if (d->args.opts.kato_ms == 0)
			return usage_error(cmd, "-p/--persistent needs a keep-alive: give -k 1 or more "
					   "(default %d s)", PERSISTENT_KATO_S);
	}
	return EXIT_OK;
}

int discover_run(struct discover_args *d)
{
	struct discover_state st = { .args = &d->args };
	char addr[300];
	int ret;

	if (d->persist)
		return persistent(&d->args);
	verbose(&d->args, cmd, "connecting to the discovery controller at %s, timeout %u ms",
		connect_args_where(&d->args.opts, addr, sizeof(addr)), d->args.opts.timeout_ms);
	ret = nvmefs_discover(&d->args.opts, (int)d->depth, print_log, &st);
	if (!d->keep_secrets)
		connect_args_forget_secrets(&d->args);
	if (st.write_failed)
		return finish_output(cmd, EXIT_FAIL);
	if (ret) {
		fflush(stdout);
		fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
		return EXIT_FAIL;
	}
	return finish_output(cmd, st.referrals_unread ? EXIT_FAIL : EXIT_OK);
}
