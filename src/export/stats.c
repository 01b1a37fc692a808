/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The export's statistics as JSON (the mount's stats file): each worker's
 * counters and latencies and their sum, the controller's state, with
 * several paths each path's, the heap in use and the memory pinned, and
 * what per-I/O remote keys went through.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "export_priv.h"
#include "../common/json.h"
#include "../common/rkeys_json.h"

/* The counters and latencies of @s, as members of the object open in @j. */
static void stats_members(struct json *j, const struct exp_stats *s, const struct histogram *lat)
{
	json_uint(j, "reads", atomic_load(&s->reads));
	json_uint(j, "writes", atomic_load(&s->writes));
	json_uint(j, "read_bytes", atomic_load(&s->read_bytes));
	json_uint(j, "write_bytes", atomic_load(&s->write_bytes));
	json_uint(j, "flushes", atomic_load(&s->flushes));
	json_uint(j, "write_zeroes", atomic_load(&s->write_zeroes));
	json_uint(j, "deallocates", atomic_load(&s->deallocates));
	json_uint(j, "errors", atomic_load(&s->errors));
	json_object_begin(j, "lat_us");
	json_double(j, "mean", hist_mean(lat) / 1000);
	json_double(j, "p50", hist_percentile(lat, 50) / 1000);
	json_double(j, "p90", hist_percentile(lat, 90) / 1000);
	json_double(j, "p99", hist_percentile(lat, 99) / 1000);
	json_double(j, "p999", hist_percentile(lat, 99.9) / 1000);
	json_double(j, "max", hist_max(lat) / 1000.0);
	json_object_end(j);
}

void exp_ctrl_address_json(struct json *j, const struct nvmefs_ctrl *ctrl)
{
	json_string(j, "trtype", nvmefs_ctrl_trtype(ctrl));
	json_string(j, "traddr", nvmefs_ctrl_traddr(ctrl));
	json_string(j, "trsvcid", nvmefs_ctrl_trsvcid(ctrl));
	if (nvmefs_ctrl_tls_suite(ctrl))
		json_string(j, "tls", nvmefs_ctrl_tls_suite(ctrl));
}

/* Each path of a multipath mount: where, its state, how it reaches each
 * namespace, and what went through it. */
static void paths_json(struct exp *e, const struct exp_ns *ns, unsigned int nr_ns, struct json *j)
{
	json_string(j, "iopolicy", nvmefs_iopolicy_name(nvmefs_subsys_iopolicy(e->subsys)));
	json_array_begin(j, "paths");
	for (unsigned int i = 0; i < nvmefs_subsys_path_count(e->subsys); i++) {
		struct nvmefs_ctrl *ctrl = nvmefs_subsys_path(e->subsys, i);
		struct nvmefs_ctrl_status cs;
		struct nvmefs_path_stats ps;
		struct nvmefs_rkey_stats ks;

		nvmefs_ctrl_status(ctrl, &cs);
		nvmefs_ctrl_rkey_stats(ctrl, &ks);
		nvmefs_subsys_path_stats(e->subsys, i, &ps);
		json_object_begin(j, NULL);
		exp_ctrl_address_json(j, ctrl);
		json_uint(j, "cntlid", nvmefs_ctrl_cntlid(ctrl));
		json_string(j, "state", nvmefs_ctrl_state_name(cs.state));
		json_uint(j, "reconnects", cs.reconnects);
		json_string(j, "last_error", cs.reason);
		json_uint(j, "ios", ps.ios);
		json_uint(j, "errors", ps.errors);
		json_uint(j, "failovers", ps.failovers);
		json_uint(j, "pinned_bytes", nvmefs_ctrl_pinned_bytes(ctrl));
		rkeys_json(j, &ks);
		json_array_begin(j, "ana");
		for (unsigned int k = 0; k < nr_ns; k++) {
			json_object_begin(j, NULL);
			json_uint(j, "nsid", ns[k].nsid);
			json_string(j, "state",
				    nvmefs_ana_state_name(nvmefs_ns_ana_state(ctrl, ns[k].nsid)));
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

/*
 * The bytes malloc has handed out and not had back, in every arena.  Unlike
 * the resident size it does not move with where the allocator places things,
 * so a leak shows in it and nothing else does.
 */
static uint64_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + mi.hblkhd;
}

/* What every path registered (the request buffers are registered on each). */
static uint64_t pinned(struct exp *e)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < nvmefs_subsys_path_count(e->subsys); i++)
		sum += nvmefs_ctrl_pinned_bytes(nvmefs_subsys_path(e->subsys, i));
	return sum;
}

char *exp_stats_json(struct exp *e, const struct exp_ns *ns, unsigned int nr_ns, size_t *len)
{
	struct exp_stats *total = calloc(1, sizeof(*total));
	struct nvmefs_rkey_stats keys;
	struct nvmefs_ctrl_status cs;
	struct timespec now;
	char *text = NULL;
	struct json j;
	FILE *out;

	out = total ? open_memstream(&text, len) : NULL;
	if (!out) {
		free(total);
		return NULL;
	}
	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "queues");
	for (unsigned int i = 0; i < e->opts.workers; i++) {
		const struct exp_stats *s = &e->workers[i].stats;

		json_object_begin(&j, NULL);
		json_uint(&j, "queue", i + 1);
		stats_members(&j, s, &s->lat);
		json_object_end(&j);
		total->reads += atomic_load(&s->reads);
		total->writes += atomic_load(&s->writes);
		total->read_bytes += atomic_load(&s->read_bytes);
		total->write_bytes += atomic_load(&s->write_bytes);
		total->flushes += atomic_load(&s->flushes);
		total->write_zeroes += atomic_load(&s->write_zeroes);
		total->deallocates += atomic_load(&s->deallocates);
		total->errors += atomic_load(&s->errors);
		hist_merge(&total->lat, &s->lat);
	}
	json_array_end(&j);
	json_object_begin(&j, "total");
	stats_members(&j, total, &total->lat);
	json_object_end(&j);
	/* Kept from before reconnect: scripts read it; 0 while live. */
	json_int(&j, "controller_failed", nvmefs_ctrl_failed(e->ctrl));
	nvmefs_ctrl_status(e->ctrl, &cs);
	clock_gettime(CLOCK_MONOTONIC, &now);
	json_object_begin(&j, "controller");
	json_string(&j, "state", nvmefs_ctrl_state_name(cs.state));
	json_uint(&j, "reconnects", cs.reconnects);
	json_uint(&j, "attempts", cs.attempts);
	json_string(&j, "last_error", cs.reason);
	json_int(&j, "error", cs.error);
	json_int(&j, "time_in_state_ms",
		 (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - cs.since_ms);
	json_int(&j, "longest_outage_ms", cs.longest_outage_ms);
	json_uint(&j, "io_failing", cs.io_failing ? 1 : 0);
	json_uint(&j, "io_queues", cs.io_queues);
	if (nvmefs_ctrl_tls_suite(e->ctrl))
		json_string(&j, "tls", nvmefs_ctrl_tls_suite(e->ctrl));
	json_object_end(&j);
	if (nvmefs_subsys_multipath(e->subsys))
		paths_json(e, ns, nr_ns, &j);
	/* How the front end takes requests, and whether writes overlapped. */
	json_bool(&j, "io_uring", atomic_load(&e->io_uring));
	json_uint(&j, "writes_inflight_max", atomic_load(&e->writes_inflight_max));
	json_object_begin(&j, "memory");
	json_uint(&j, "heap_bytes", heap_in_use());
	json_uint(&j, "pinned_bytes", pinned(e));
	json_object_end(&j);
	nvmefs_subsys_rkey_stats(e->subsys, &keys);
	rkeys_json(&j, &keys);
	json_object_end(&j);
	fputc('\n', out);
	fclose(out);
	free(total);
	return text;
}

