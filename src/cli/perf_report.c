/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nvmefs perf's report: IOPS, bandwidth, latency percentiles, CPU, the
 * controller or each path, and --verify's counts, as text or JSON. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <nvme/util.h>

#include "perf_report.h"
#include "../common/json.h"
#include "../common/rkeys_json.h"

static const char *const cmd = "perf";

const char *const workload_names[] = { "read", "write", "randread", "randwrite", "randrw" };

/* Each path of a multipath run: where, its state, and what went through it. */
static void report_paths(const struct perf_args *a, struct nvmefs_subsys *subsys, struct json *j)
{
	for (unsigned int i = 0; i < nvmefs_subsys_path_count(subsys); i++) {
		struct nvmefs_ctrl *ctrl = nvmefs_subsys_path(subsys, i);
		struct nvmefs_ctrl_status st;
		struct nvmefs_path_stats ps;
		int ana = nvmefs_ns_ana_state(ctrl, a->nsid);

		nvmefs_ctrl_status(ctrl, &st);
		nvmefs_subsys_path_stats(subsys, i, &ps);
		if (j) {
			json_object_begin(j, NULL);
			json_string(j, "trtype", nvmefs_ctrl_trtype(ctrl));
			json_string(j, "traddr", nvmefs_ctrl_traddr(ctrl));
			json_string(j, "trsvcid", nvmefs_ctrl_trsvcid(ctrl));
			json_uint(j, "cntlid", nvmefs_ctrl_cntlid(ctrl));
			json_string(j, "state", nvmefs_ctrl_state_name(st.state));
			json_string(j, "ana_state", nvmefs_ana_state_name(ana));
			json_uint(j, "ios", ps.ios);
			json_uint(j, "errors", ps.errors);
			json_uint(j, "failovers", ps.failovers);
			json_uint(j, "reconnects", st.reconnects);
			json_object_end(j);
			continue;
		}
		printf("  path %u: %s %s:%s, controller %u, %s, ANA %s: %" PRIu64 " I/Os, %" PRIu64
		       " errors, %" PRIu64 " failed over, %u reconnects\n", i + 1,
		       nvmefs_ctrl_trtype(ctrl), nvmefs_ctrl_traddr(ctrl), nvmefs_ctrl_trsvcid(ctrl),
		       nvmefs_ctrl_cntlid(ctrl), nvmefs_ctrl_state_name(st.state),
		       nvmefs_ana_state_name(ana), ps.ios, ps.errors, ps.failovers, st.reconnects);
	}
}

static const double pcts[] = { 50, 90, 99, 99.9, 99.99 };
static const char *const pct_keys[] = { "p50", "p90", "p99", "p999", "p9999" };

/* The latencies of @h, in microseconds, as the object lat_us. */
static void lat_json(struct json *j, const struct histogram *h)
{
	json_object_begin(j, "lat_us");
	json_double(j, "mean", hist_mean(h) / 1000);
	json_double(j, "min", hist_min(h) / 1000.0);
	json_double(j, "max", hist_max(h) / 1000.0);
	for (unsigned int i = 0; i < 5; i++)
		json_double(j, pct_keys[i], hist_percentile(h, pcts[i]) / 1000);
	json_object_end(j);
}

static void lat_text(const char *indent, const struct histogram *h)
{
	printf("%slatency (us): mean %.1f, min %.1f, max %.1f\n", indent, hist_mean(h) / 1000,
	       hist_min(h) / 1000.0, hist_max(h) / 1000.0);
	printf("%spercentiles (us):", indent);
	for (unsigned int i = 0; i < 5; i++)
		printf(" p%g %.1f%s", pcts[i], hist_percentile(h, pcts[i]) / 1000, i < 4 ? "," : "\n");
}

/* One direction of randrw, as fio and spdk_nvme_perf give them: reads or writes alone. */
struct direction {
	const char *name;
	uint64_t ios;		/* that succeeded */
	struct histogram *h;
};

static void direction_report(const struct perf_args *a, const struct direction *d, double elapsed,
			     struct json *j)
{
	double iops = elapsed > 0 ? d->ios / elapsed : 0, mibs = iops * a->bs / (1 << 20);

	if (j) {
		json_object_begin(j, d->name);
		json_uint(j, "ios", d->ios);
		json_double(j, "iops", iops);
		json_double(j, "bw_mibs", mibs);
		lat_json(j, d->h);
		json_object_end(j);
		return;
	}
	printf("  %s: IOPS %.0f, %.2f MiB/s, %" PRIu64 " I/Os\n", d->name, iops, mibs, d->ios);
	lat_text("    ", d->h);
}

void perf_report(const struct perf_args *a, const char *subnqn, struct worker *workers,
		 double elapsed, double user_s, double sys_s, const struct nvmefs_ctrl_status *cs,
		 struct nvmefs_subsys *subsys)
{
	bool multipath = nvmefs_subsys_multipath(subsys);
	struct nvmefs_rkey_stats keys;
	/* The whole run's, the writes' and the reads'. */
	struct histogram *h = calloc(3, sizeof(*h));
	struct direction dirs[2];
	uint64_t ios = 0, errors = 0, verified = 0, mismatches = 0;
	double iops, mibs;
	unsigned int t, i, d;

	if (!h) {
		fprintf(stderr, "nvmefs %s: out of memory\n", cmd);
		return;
	}
	dirs[0] = (struct direction){ "write", 0, &h[1] };
	dirs[1] = (struct direction){ "read", 0, &h[2] };
	nvmefs_subsys_rkey_stats(subsys, &keys);
	for (t = 0; t < a->threads; t++) {
		for (d = 0; d < 2; d++) {
			hist_merge(h, &workers[t].hist[d]);
			hist_merge(dirs[d].h, &workers[t].hist[d]);
			dirs[d].ios += workers[t].done[d];
		}
		ios += atomic_load(&workers[t].ios);
		errors += workers[t].errors;
		verified += workers[t].verified;
		mismatches += workers[t].mismatches;
	}
	iops = elapsed > 0 ? (ios - errors) / elapsed : 0;
	mibs = iops * a->bs / (1 << 20);
	if (a->conn.fmt == OUTPUT_JSON) {
		struct json j;

		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_object_begin(&j, "job");
		json_string(&j, "subnqn", subnqn);
		json_uint(&j, "nsid", a->nsid);
		json_string(&j, "rw", workload_names[a->rw]);
		if (a->rw == WL_RANDRW)
			json_uint(&j, "mix", a->mix);
		json_uint(&j, "bs", a->bs);
		json_uint(&j, "iodepth", a->qd);
		json_uint(&j, "nr_io_queues", a->queues);
		/* Their old names, which scripts read. */
		json_uint(&j, "qd", a->qd);
		json_uint(&j, "queues", a->queues);
		json_uint(&j, "threads", a->threads);
		if (a->nr_cpus) {
			json_array_begin(&j, "cpus");
			for (i = 0; i < a->threads; i++)
				json_uint(&j, NULL, thread_cpu(a, i));
			json_array_end(&j);
		}
		json_uint(&j, "offset", a->offset);
		json_uint(&j, "size", a->size);
		json_string(&j, "mode", a->event_mode ? "event" : "poll");
		json_object_end(&j);
		json_double(&j, "runtime_s", elapsed);
		json_uint(&j, "ios", ios);
		json_uint(&j, "errors", errors);
		json_double(&j, "iops", iops);
		json_double(&j, "bw_mibs", mibs);
		lat_json(&j, h);
		if (a->rw == WL_RANDRW) {
			direction_report(a, &dirs[1], elapsed, &j);
			direction_report(a, &dirs[0], elapsed, &j);
		}
		json_object_begin(&j, "cpu");
		json_double(&j, "user_s", user_s);
		json_double(&j, "sys_s", sys_s);
		json_object_end(&j);
		json_object_begin(&j, "controller");
		json_string(&j, "state", nvmefs_ctrl_state_name(cs->state));
		json_uint(&j, "reconnects", cs->reconnects);
		json_int(&j, "longest_outage_ms", cs->longest_outage_ms);
		json_uint(&j, "io_queues", cs->io_queues);
		json_object_end(&j);
		if (multipath) {
			json_string(&j, "iopolicy", nvmefs_iopolicy_name(nvmefs_subsys_iopolicy(subsys)));
			json_array_begin(&j, "paths");
			report_paths(a, subsys, &j);
			json_array_end(&j);
		}
		rkeys_json(&j, &keys);
		if (a->verify) {
			json_object_begin(&j, "verify");
			json_uint(&j, "blocks_read", verified);
			json_uint(&j, "mismatches", mismatches);
			json_object_end(&j);
		}
		json_object_end(&j);
		putchar('\n');
	} else {
		printf("%s: %s, bs %u, iodepth %u, %u queue%s, %u thread%s%s%s, %.1f s, namespace %u of %s\n",
		       cmd, workload_names[a->rw], a->bs, a->qd, a->queues, a->queues == 1 ? "" : "s",
		       a->threads, a->threads == 1 ? "" : "s",
		       !a->nr_cpus ? "" : a->nr_cpus == 1 ? " on CPU " : " on CPUs ",
		       a->nr_cpus ? a->cpus_text : "", elapsed, a->nsid, subnqn);
		printf("  IOPS %.0f, %.2f MiB/s, %" PRIu64 " I/Os, %" PRIu64 " errors\n", iops, mibs,
		       ios, errors);
		lat_text("  ", h);
		if (a->rw == WL_RANDRW) {
			direction_report(a, &dirs[1], elapsed, NULL);
			direction_report(a, &dirs[0], elapsed, NULL);
		}
		printf("  CPU: user %.2f s, system %.2f s (%.0f%% of one core)\n", user_s, sys_s,
		       elapsed > 0 ? (user_s + sys_s) * 100 / elapsed : 0);
		if (multipath) {
			printf("  paths: %u, I/O policy %s\n", nvmefs_subsys_path_count(subsys),
			       nvmefs_iopolicy_name(nvmefs_subsys_iopolicy(subsys)));
			report_paths(a, subsys, NULL);
		} else if (cs->reconnects || cs->state != NVMEFS_CTRL_LIVE)
			/* Quiet on a run without outages, as most are. */
			printf("  reconnects: %u, longest outage: %" PRId64 " ms%s%s\n", cs->reconnects,
			       cs->longest_outage_ms, cs->state == NVMEFS_CTRL_LIVE ? "" : ", now ",
			       cs->state == NVMEFS_CTRL_LIVE ? "" : nvmefs_ctrl_state_name(cs->state));
		if (a->conn.verbose)
			printf("  remote keys: %s, %" PRIu64 " bound, %" PRIu64 " invalidated by the "
			       "target, %" PRIu64 " by us\n", keys.per_io ? "per I/O" : "standing",
			       keys.bound, keys.invalidated_by_target, keys.invalidated_locally);
		if (a->verify)
			printf("  verify: %" PRIu64 " blocks read and checked, %" PRIu64 " mismatches\n",
			       verified, mismatches);
	}
	free(h);
}

