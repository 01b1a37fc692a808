/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs list: this host's nvmefs mounts, as `nvme list` lists the kernel's
 * NVMe devices: a table, or JSON (doc/json/list.schema.json).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../common/json.h"
#include "list.h"
#include "../common/text.h"

#define MOUNTINFO "/proc/self/mountinfo"

enum { COL_MOUNT, COL_NQN, COL_NS, COL_TRANSPORT, COL_PATHS, COL_READS, COL_WRITES, COL_STATE, NR_COLS };

static const char *const heading[NR_COLS] = {
	"Mount point", "Subsystem NQN", "Namespaces", "Transport", "Paths", "Reads", "Writes", "State",
};

/* The fields of one row, escaped for the terminal. */
struct row {
	char *col[NR_COLS];
};

/* @s (freed) with @sep and @add after it, @sep only if @s is not empty; NULL on ENOMEM. */
static char *append(char *s, const char *sep, const char *add)
{
	char *out;

	/* NULL in, NULL out: a chain of appends reports ENOMEM once, at its end. */
	if (!s)
		return NULL;
	if (asprintf(&out, "%s%s%s", s, *s ? sep : "", add) < 0)
		out = NULL;
	free(s);
	return out;
}

static char *escaped(const char *s)
{
	size_t size = TEXT_ESCAPED_SIZE(strlen(s));
	char *out = malloc(size);

	if (out)
		text_escape(out, size, s, strlen(s));
	return out;
}

static char *number(uint64_t v)
{
	char *out;

	return asprintf(&out, "%" PRIu64, v) < 0 ? NULL : out;
}

/* Each path as ADDR:PORT, with its state where it is not live; escaped. */
static char *paths_text(const struct list_mount *m)
{
	char *s = strdup(""), where[512];

	for (size_t i = 0; s && i < m->nr_paths; i++) {
		const struct list_path *p = &m->paths[i];

		if (!p->traddr) {
			s = append(s, ", ", "-");
			continue;
		}
		text_where(where, sizeof(where), p->traddr, p->trsvcid);
		s = append(s, ", ", where);
		if (s && p->state && strcmp(p->state, "live")) {
			char *state = escaped(p->state);

			s = state ? append(append(append(s, "", " ("), "", state), "", ")") : NULL;
			free(state);
		}
	}
	return s;
}

/* The transports of the paths, each once. */
static char *transport_text(const struct list_mount *m)
{
	char *s = strdup("");

	for (size_t i = 0; s && i < m->nr_paths; i++) {
		const char *t = m->paths[i].trtype ? m->paths[i].trtype : "-";
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(m->paths[j].trtype ? m->paths[j].trtype : "-", t);
		if (!seen)
			s = append(s, ",", t);
	}
	return s;
}

static int fill_row(struct row *r, const struct list_mount *m)
{
	char *raw[NR_COLS] = { NULL };
	int ret = 0;

	r->col[COL_MOUNT] = escaped(m->mountpoint);
	r->col[COL_NQN] = escaped(m->subnqn);
	if (m->error) {
		for (int c = COL_NS; c < COL_STATE; c++)
			r->col[c] = strdup("-");
		raw[COL_STATE] = append(strdup("error: "), "", list_error_text(m->error));
	} else {
		raw[COL_NS] = strdup("");
		for (size_t i = 0; raw[COL_NS] && i < m->nr_ns; i++)
			raw[COL_NS] = append(raw[COL_NS], ",", m->ns[i].file);
		raw[COL_TRANSPORT] = transport_text(m);
		r->col[COL_PATHS] = paths_text(m);
		r->col[COL_READS] = number(m->reads);
		r->col[COL_WRITES] = number(m->writes);
		raw[COL_STATE] = strdup(m->state);
	}
	/* What came from the mount's files goes through the escaper too. */
	for (int c = 0; c < NR_COLS; c++) {
		if (raw[c]) {
			r->col[c] = escaped(raw[c]);
			free(raw[c]);
		}
	}
	for (int c = 0; c < NR_COLS; c++)
		if (!r->col[c])
			ret = -ENOMEM;
	return ret;
}

static int print_table(FILE *out, const struct list_mount *m, size_t nr)
{
	size_t width[NR_COLS];
	struct row *rows = calloc(nr ? nr : 1, sizeof(*rows));
	int ret = 0;

	if (!rows)
		return -ENOMEM;
	for (int c = 0; c < NR_COLS; c++)
		width[c] = strlen(heading[c]);
	for (size_t i = 0; i < nr && !ret; i++) {
		ret = fill_row(&rows[i], &m[i]);
		for (int c = 0; !ret && c < NR_COLS; c++)
			if (strlen(rows[i].col[c]) > width[c])
				width[c] = strlen(rows[i].col[c]);
	}
	if (!ret) {
		for (int c = 0; c < NR_COLS; c++) {
			if (c == NR_COLS - 1)
				fprintf(out, "%s\n", heading[c]);
			else
				fprintf(out, "%-*s  ", (int)width[c], heading[c]);
		}
		for (int c = 0; c < NR_COLS; c++) {
			for (size_t k = 0; k < width[c]; k++)
				fputc('-', out);
			fputs(c == NR_COLS - 1 ? "\n" : "  ", out);
		}
		for (size_t i = 0; i < nr; i++) {
			for (int c = 0; c < NR_COLS; c++) {
				/* Counters align right, as nvme list's sizes do. */
				if (c == COL_READS || c == COL_WRITES)
					fprintf(out, "%*s  ", (int)width[c], rows[i].col[c]);
				else if (c == NR_COLS - 1)
					fprintf(out, "%s\n", rows[i].col[c]);
				else
					fprintf(out, "%-*s  ", (int)width[c], rows[i].col[c]);
			}
		}
	}
	for (size_t i = 0; i < nr; i++)
		for (int c = 0; c < NR_COLS; c++)
			free(rows[i].col[c]);
	free(rows);
	return ret;
}

static void print_json(FILE *out, const struct list_mount *m, size_t nr)
{
	struct json j;

	json_init(&j, out);
	json_object_begin(&j, NULL);
	json_array_begin(&j, "mounts");
	for (size_t i = 0; i < nr; i++) {
		json_object_begin(&j, NULL);
		json_string(&j, "mountpoint", m[i].mountpoint);
		json_string(&j, "subnqn", m[i].subnqn);
		if (m[i].error) {
			json_string(&j, "state", "error");
			json_string(&j, "error", list_error_text(m[i].error));
			json_int(&j, "errno", m[i].error);
			json_object_end(&j);
			continue;
		}
		json_string(&j, "state", m[i].state);
		if (m[i].iopolicy)
			json_string(&j, "iopolicy", m[i].iopolicy);
		json_array_begin(&j, "paths");
		for (size_t p = 0; p < m[i].nr_paths; p++) {
			const struct list_path *path = &m[i].paths[p];

			json_object_begin(&j, NULL);
			/* A mount by an nvmefs before 0.2 does not say where it goes. */
			if (path->trtype) {
				json_string(&j, "trtype", path->trtype);
				json_string(&j, "traddr", path->traddr);
				json_string(&j, "trsvcid", path->trsvcid);
			}
			json_string(&j, "state", path->state ? path->state : m[i].state);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_array_begin(&j, "namespaces");
		for (size_t n = 0; n < m[i].nr_ns; n++) {
			json_object_begin(&j, NULL);
			json_string(&j, "file", m[i].ns[n].file);
			json_uint(&j, "nsid", m[i].ns[n].nsid);
			json_uint(&j, "size", m[i].ns[n].size);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_uint(&j, "reads", m[i].reads);
		json_uint(&j, "writes", m[i].writes);
		json_uint(&j, "read_bytes", m[i].read_bytes);
		json_uint(&j, "write_bytes", m[i].write_bytes);
		json_uint(&j, "errors", m[i].errors);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	fputc('\n', out);
}

static void usage(void)
{
	printf("Usage: nvmefs list [OPTIONS]\n"
	       "\n"
	       "List this host's nvmefs mounts, as 'nvme list' lists NVMe devices: mount point,\n"
	       "subsystem NQN, namespace files, transport and paths, controller state, and the\n"
	       "reads and writes done, from each mount's info and stats files. A mount that\n"
	       "does not answer is listed with its error. Users other than root see the mounts\n"
	       "they can read: their own, and those mounted with allow_other.\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output-format=FMT   output format: normal (a table) or json\n"
	       HELP_HELP
	       "\n"
	       "Exit status: 0 success (a mount in error included), 1 failure, 2 wrong usage.\n");
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output-format", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum output_format fmt = OUTPUT_NORMAL;
	struct list_mount *m;
	size_t nr;
	int opt, ret;

	while ((opt = next_option(argc, argv, ":o:h", longopts)) != -1) {
		switch (opt) {
		case 'o':
			if (output_format_parse(optarg, &fmt))
				return usage_error(argv[0], "-o/--output-format '%s' is not a format: use "
						   "'normal' or 'json'", optarg);
			break;
		case 'h':
			usage();
			return finish_output(argv[0], EXIT_OK);
		default:
			return EXIT_USAGE;
		}
	}
	ret = list_mounts(MOUNTINFO, geteuid(), LIST_TIMEOUT_MS, &m, &nr);
	if (ret) {
		fprintf(stderr, "nvmefs list: cannot read %s: %s%s\n", MOUNTINFO, strerror(-ret),
			ret == -ENOENT ? "; mount /proc (mount -t proc proc /proc)" : "");
		return EXIT_FAIL;
	}
	if (fmt == OUTPUT_JSON)
		print_json(stdout, m, nr);
	else
		ret = print_table(stdout, m, nr);
	list_mounts_free(m, nr);
	if (ret) {
		fprintf(stderr, "nvmefs list: out of memory\n");
		return EXIT_FAIL;
	}
	return finish_output(argv[0], EXIT_OK);
}
