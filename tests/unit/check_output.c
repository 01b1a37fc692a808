/*
 * `nvmefs discover` / `nvmefs identify` output against nvme-cli 2.3's.
 *
 * tests/unit/data/nvme-cli-2.3/ holds what the kernel NVMe target returned
 * to nvme-cli 2.3 in the testbed (*.bin: the raw discovery log, Identify
 * Controller, Identify Namespace, descriptor list) and what nvme-cli printed
 * for them, normal (*.txt) and JSON (*.json).  Each test feeds the .bin to
 * our formatter and wants nvme-cli's bytes exactly, trailing spaces, tabs
 * and all.  Tests on synthetic data pin the corner cases those captures do
 * not reach (padding, 32-bit sign, locale grouping, escaping).
 *
 * The data directory is compiled in (TEST_DATA_DIR) and can be overridden
 * with NVMEFS_TEST_DATA_DIR.
 *
 * One job, kept in one file past 700 lines, as output.c is: every format
 * against nvme-cli's own bytes.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <nvme/types.h>

#include "test_util.h"
#include "../../src/common/json.h"
#include "../../src/common/text.h"
#include "../../src/cli/output.h"

#ifndef TEST_DATA_DIR
#error "build with -DTEST_DATA_DIR=\"<srcdir>/tests/unit/data\""
#endif

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static char *load(const char *name, size_t *lenp)
{
	const char *dir = getenv("NVMEFS_TEST_DATA_DIR");
	char path[4096];
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/nvme-cli-2.3/%s", dir ? dir : TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	ck_assert_msg(f, "cannot open %s: %s", path, strerror(errno));
	for (;;) {
		buf = realloc(buf, len + 4096 + 1);
		ck_assert_ptr_nonnull(buf);
		n = fread(buf + len, 1, 4096, f);
		len += n;
		if (n < 4096)
			break;
	}
	ck_assert_msg(!ferror(f), "reading %s failed", path);
	fclose(f);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

/* A captured binary structure of exactly @size bytes. */
static void *load_bin(const char *name, size_t size)
{
	size_t len;
	char *buf = load(name, &len);

	ck_assert_msg(len == size, "%s: %zu bytes, expected %zu", name, len, size);
	return buf;
}

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *capture_start(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	ck_assert_ptr_nonnull(c->f);
	return c->f;
}

static char *capture_end(struct capture *c)
{
	ck_assert_int_eq(fclose(c->f), 0);
	return c->buf;
}

/* One line of @s starting at @p, visible: trailing spaces and tabs show. */
static void show_line(char *dst, size_t size, const char *line, const char *end)
{
	size_t n = 0;

	for (const char *p = line; p < end && *p != '\n' && n + 5 < size; p++) {
		if (*p == '\t')
			n += snprintf(dst + n, size - n, "\\t");
		else if ((unsigned char)*p < 0x20)
			n += snprintf(dst + n, size - n, "\\x%02x", (unsigned char)*p);
		else
			dst[n++] = *p;
	}
	dst[n] = '\0';
}

static const char *line_start(const char *s, size_t off)
{
	while (off && s[off - 1] != '\n')
		off--;
	return s + off;
}

/*
 * @got must equal @want byte for byte; on a difference, say where (line and
 * column) and show both lines, with a '$' at each line's end so trailing
 * spaces cannot hide.
 */
#define assert_same(got, got_len, want, want_len, what) \
	assert_same_at(__LINE__, got, got_len, want, want_len, what)

static void assert_same_at(int line, const char *got, size_t got_len,
			   const char *want, size_t want_len, const char *what)
{
	size_t i, lineno = 1, max = got_len < want_len ? got_len : want_len;
	char g[512], w[512];

	for (i = 0; i < max && got[i] == want[i]; i++)
		lineno += got[i] == '\n';
	if (i == got_len && i == want_len)
		return;
	show_line(g, sizeof(g), line_start(got, i), got + got_len);
	show_line(w, sizeof(w), line_start(want, i), want + want_len);
	ck_abort_msg("line %d: %s differs from nvme-cli at byte %zu (line %zu, column %zu)%s\n"
		     "  ours:     %s$\n  nvme-cli: %s$", line, what, i, lineno,
		     (size_t)(got + i - line_start(got, i)) + 1,
		     i == got_len ? " (ours ends)" : i == want_len ? " (theirs ends)" : "",
		     g, w);
}

#define assert_file(got, got_len, file) assert_file_at(__LINE__, got, got_len, file)

static void assert_file_at(int line, const char *got, size_t got_len, const char *file)
{
	size_t want_len;
	char *want = load(file, &want_len);

	assert_same_at(line, got, got_len, want, want_len, file);
	free(want);
}

static uint64_t disc_nrec(const struct nvmf_discovery_log *log, size_t len)
{
	uint64_t n = le64toh(log->numrec), max = (len - sizeof(*log)) / sizeof(log->entries[0]);

	return n < max ? n : max;
}

/* ------------------------------------------------------------------------ */
/* Against nvme-cli 2.3's captures                                          */
/* ------------------------------------------------------------------------ */

static void check_discover(enum output_format fmt, const char *want)
{
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	struct capture c;

	ck_assert_int_eq(disc_nrec(log, 5120), 4);
	print_discovery_log(capture_start(&c), log, disc_nrec(log, 5120), fmt);
	capture_end(&c);
	assert_file(c.buf, c.len, want);
	free(c.buf);
	free(log);
}

START_TEST(test_discover_normal)
{
	check_discover(OUTPUT_NORMAL, "discover.txt");
}
END_TEST

START_TEST(test_discover_json)
{
	check_discover(OUTPUT_JSON, "discover.json");
}
END_TEST

static void check_id_ctrl(enum output_format fmt, const char *want)
{
	struct nvme_id_ctrl *id = load_bin("id-ctrl.bin", sizeof(*id));
	struct capture c;

	print_id_ctrl(capture_start(&c), id, fmt);
	capture_end(&c);
	assert_file(c.buf, c.len, want);
	free(c.buf);
	free(id);
}

START_TEST(test_id_ctrl_normal)
{
	check_id_ctrl(OUTPUT_NORMAL, "id-ctrl.txt");
}
END_TEST

START_TEST(test_id_ctrl_json)
{
	check_id_ctrl(OUTPUT_JSON, "id-ctrl.json");
}
END_TEST

static void check_id_ns(enum output_format fmt, const char *want)
{
	struct nvme_id_ns *ns = load_bin("id-ns.bin", sizeof(*ns));
	struct capture c;

	print_id_ns(capture_start(&c), ns, 1, fmt);
	capture_end(&c);
	assert_file(c.buf, c.len, want);
	free(c.buf);
	free(ns);
}

START_TEST(test_id_ns_normal)
{
	check_id_ns(OUTPUT_NORMAL, "id-ns.txt");
}
END_TEST

START_TEST(test_id_ns_json)
{
	check_id_ns(OUTPUT_JSON, "id-ns.json");
}
END_TEST

static void check_ns_descs(enum output_format fmt, const char *want)
{
	void *descs = load_bin("ns-descs.bin", NVME_IDENTIFY_DATA_SIZE);
	struct capture c;

	print_ns_descs(capture_start(&c), descs, 1, fmt);
	capture_end(&c);
	assert_file(c.buf, c.len, want);
	free(c.buf);
	free(descs);
}

START_TEST(test_ns_descs_normal)
{
	check_ns_descs(OUTPUT_NORMAL, "ns-descs.txt");
}
END_TEST

START_TEST(test_ns_descs_json)
{
	check_ns_descs(OUTPUT_JSON, "ns-descs.json");
}
END_TEST

/* The captured target had namespaces 1 and 2 (list-ns has no .bin). */
static void check_ns_list(enum output_format fmt, const char *want)
{
	uint32_t list[NVME_ID_NS_LIST_MAX] = { 1, 2 };
	struct capture c;

	print_ns_list(capture_start(&c), list, fmt);
	capture_end(&c);
	assert_file(c.buf, c.len, want);
	free(c.buf);
}

START_TEST(test_ns_list_normal)
{
	check_ns_list(OUTPUT_NORMAL, "list-ns.txt");
}
END_TEST

START_TEST(test_ns_list_json)
{
	check_ns_list(OUTPUT_JSON, "list-ns.json");
}
END_TEST

/*
 * `identify --nsid N -o json` is nvme-cli's id-ns object with nvme-cli's
 * ns-descs member appended: built here from the two captures, so it stays
 * tied to them.
 */
START_TEST(test_id_ns_with_descs_json)
{
	struct nvme_id_ns *ns = load_bin("id-ns.bin", sizeof(*ns));
	void *descs = load_bin("ns-descs.bin", NVME_IDENTIFY_DATA_SIZE);
	size_t ns_len, d_len;
	char *ns_json = load("id-ns.json", &ns_len);
	char *d_json = load("ns-descs.json", &d_len);
	char *want = NULL;
	size_t want_len = 0;
	struct capture c;
	FILE *f;

	ck_assert(ns_len > 3 && !strcmp(ns_json + ns_len - 3, "\n}\n"));
	ck_assert(d_len > 5 && !strncmp(d_json, "{\n", 2) && !strcmp(d_json + d_len - 3, "\n}\n"));
	f = open_memstream(&want, &want_len);
	fprintf(f, "%.*s,\n%.*s\n}\n", (int)(ns_len - 3), ns_json, (int)(d_len - 5), d_json + 2);
	fclose(f);

	print_id_ns_with_descs_json(capture_start(&c), ns, descs);
	capture_end(&c);
	assert_same(c.buf, c.len, want, want_len, "id-ns + ns-descs JSON");
	free(c.buf);

	/* Descriptors unavailable: exactly nvme-cli's id-ns. */
	print_id_ns_with_descs_json(capture_start(&c), ns, NULL);
	capture_end(&c);
	assert_same(c.buf, c.len, ns_json, ns_len, "id-ns JSON without descriptors");
	free(c.buf);

	/* An empty list: the member is there, empty. */
	memset(descs, 0, NVME_IDENTIFY_DATA_SIZE);
	print_id_ns_with_descs_json(capture_start(&c), ns, descs);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf, "  \"ns-descs\":[\n  ]\n}\n"));
	free(c.buf);

	free(want);
	free(d_json);
	free(ns_json);
	free(descs);
	free(ns);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Corner cases the captures do not reach                                   */
/* ------------------------------------------------------------------------ */

static char *render_disc(struct nvmf_discovery_log *log, uint64_t n, enum output_format fmt)
{
	struct capture c;

	print_discovery_log(capture_start(&c), log, n, fmt);
	return capture_end(&c);
}

/*
 * Space-padded strings (the spec's padding; Linux pads with NULs): nvme-cli
 * trims trsvcid and traddr in text, and subnqn too in JSON only.  A TCP
 * entry prints sectype instead of the rdma_* lines; a blank traddr blanks
 * adrfam in text only.
 */
START_TEST(test_discover_padding_and_tcp)
{
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	struct nvmf_disc_log_entry *e = &log->entries[1];
	char *out;

	memset(e->trsvcid, ' ', sizeof(e->trsvcid));
	memcpy(e->trsvcid, "4420", 4);
	memset(e->subnqn, ' ', sizeof(e->subnqn));
	memcpy(e->subnqn, "nqn.x", 5);
	memset(e->traddr, ' ', sizeof(e->traddr));
	memcpy(e->traddr, "10.0.0.1", 8);
	log->entries[2].trtype = NVMF_TRTYPE_TCP;
	log->entries[2].tsas.tcp.sectype = NVMF_TCP_SECTYPE_NONE;
	memset(log->entries[3].traddr, ' ', sizeof(log->entries[3].traddr));

	out = render_disc(log, 4, OUTPUT_NORMAL);
	ck_assert_ptr_nonnull(strstr(out, "trsvcid: 4420\nsubnqn:  nqn.x    "));
	ck_assert_ptr_nonnull(strstr(out, "traddr:  10.0.0.1\neflags:"));
	ck_assert_ptr_nonnull(strstr(out, "eflags:  none\nsectype: none\n"
				     "=====Discovery Log Entry 3======"));
	ck_assert_ptr_nonnull(strstr(out, "Entry 3======\ntrtype:  rdma\nadrfam:  \n"));
	ck_assert_ptr_nonnull(strstr(out, "traddr:  \neflags:"));
	free(out);

	out = render_disc(log, 4, OUTPUT_JSON);
	ck_assert_ptr_nonnull(strstr(out, "\"trsvcid\":\"4420\",\n      \"subnqn\":\"nqn.x\",\n"
				     "      \"traddr\":\"10.0.0.1\","));
	ck_assert_ptr_nonnull(strstr(out, "\"eflags\":\"none\",\n      \"sectype\":\"none\"\n    }"));
	ck_assert_ptr_nonnull(strstr(out, "\"adrfam\":\"ipv4\",\n      \"subtype\":\"nvme subsystem\",\n"
				     "      \"treq\":\"not specified, sq flow control disable supported\",\n"
				     "      \"portid\":1,\n      \"trsvcid\":\"4420\",\n"
				     "      \"subnqn\":\"nqn.2026-11.io.nvmefs.testbed:sub3\",\n"
				     "      \"traddr\":\"\","));
	free(out);
	free(log);
}
END_TEST

/*
 * Every TREQ a record can carry prints as nvme-cli prints it (libnvme's
 * names, "unrecognized" for the rest, reserved bits 1:0 = 3 among them),
 * and doc/json/discover.schema.json lists each value printed.
 */
START_TEST(test_discover_treq_in_schema)
{
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	char *schema = load("../../../../doc/json/discover.schema.json", NULL);
	char *member = strstr(schema, "\"treq\": {"), *end, *out, *v, *ve, want[80];

	ck_assert_msg(member, "the schema has no treq");
	end = strchr(member, '}');
	v = strstr(member, "\"enum\": [");
	ck_assert_msg(v && v < end, "the schema's treq lists no values");
	end = strchr(v, ']');
	for (unsigned int treq = 0; treq < 256; treq++) {
		log->entries[0].treq = (uint8_t)treq;
		out = render_disc(log, 1, OUTPUT_JSON);
		v = strstr(out, "\"treq\":\"");
		ck_assert_ptr_nonnull(v);
		v += strlen("\"treq\":");
		ve = strchr(v + 1, '"');
		ck_assert_ptr_nonnull(ve);
		snprintf(want, sizeof(want), "%.*s", (int)(ve + 1 - v), v);
		if (treq == 3)
			ck_assert_str_eq(want, "\"unrecognized\"");
		v = strstr(member, want);
		ck_assert_msg(v && v < end, "TREQ %u prints %s, which the schema lacks", treq, want);
		free(out);
	}
	free(schema);
	free(log);
}
END_TEST

/*
 * Padding before a NUL, with stale bytes after it, as a target that pads a
 * shorter string into a reused buffer sends it: the string ends at the NUL
 * and its padding goes, in text and JSON alike.  A field that fills its
 * width has no NUL and is whole.
 */
START_TEST(test_discover_padding_before_nul)
{
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	struct nvmf_disc_log_entry *e = &log->entries[0];
	char *out;

	memcpy(e->traddr, "10.0.0.1  \0old", 14);
	memcpy(e->trsvcid, "0123456789abcdef0123456789abcdef", sizeof(e->trsvcid));

	out = render_disc(log, 1, OUTPUT_NORMAL);
	ck_assert_ptr_nonnull(strstr(out, "\ntraddr:  10.0.0.1\neflags:"));
	ck_assert_ptr_nonnull(strstr(out, "\ntrsvcid: 0123456789abcdef0123456789abcdef\nsubnqn:"));
	free(out);

	out = render_disc(log, 1, OUTPUT_JSON);
	ck_assert_ptr_nonnull(strstr(out, "\"traddr\":\"10.0.0.1\","));
	ck_assert_ptr_nonnull(strstr(out, "\"trsvcid\":\"0123456789abcdef0123456789abcdef\","));
	free(out);
	free(log);
}
END_TEST

/* @json with the whitespace outside its strings taken out, as `jq -c` has it. */
static char *squeeze(const char *json)
{
	char *out = malloc(strlen(json) + 1), *o = out;
	bool in_string = false;

	ck_assert_ptr_nonnull(out);
	for (const char *p = json; *p; p++) {
		if (in_string) {
			*o++ = *p;
			if (*p == '\\' && p[1])
				*o++ = *++p;
			else if (*p == '"')
				in_string = false;
		} else if (*p == '"') {
			*o++ = *p;
			in_string = true;
		} else if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r') {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

/*
 * discover --persistent -o json: each log on one line (JSON Lines), the
 * same document as nvme-cli's -o json, newline-terminated.
 */
START_TEST(test_discover_json_line)
{
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	char *want = load("discover.json", NULL), *squeezed = squeeze(want);
	struct capture c;

	print_discovery_log_line(capture_start(&c), log, disc_nrec(log, 5120));
	capture_end(&c);
	ck_assert_uint_gt(c.len, 2);
	ck_assert_int_eq(c.buf[c.len - 1], '\n');
	ck_assert_ptr_eq(strchr(c.buf, '\n'), c.buf + c.len - 1);
	c.buf[--c.len] = '\0';
	assert_same(c.buf, c.len, squeezed, strlen(squeezed), "the one-line JSON discovery log");
	ck_assert_ptr_nonnull(strstr(c.buf, "\"subnqn\":\"nqn.2014-08.org.nvmexpress.discovery\""));
	free(c.buf);
	free(squeezed);
	free(want);

	log->genctr = htole64(7);
	print_discovery_log_line(capture_start(&c), log, 0);
	capture_end(&c);
	ck_assert_str_eq(c.buf, "{\"genctr\":7,\"records\":[]}\n");
	free(c.buf);
	free(log);
}
END_TEST

START_TEST(test_discover_empty)
{
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	char *out;

	log->genctr = htole64(UINT64_MAX);
	out = render_disc(log, 0, OUTPUT_NORMAL);
	ck_assert_str_eq(out, "\nDiscovery Log Number of Records 0, "
			 "Generation counter 18446744073709551615\n");
	free(out);
	out = render_disc(log, 0, OUTPUT_JSON);
	ck_assert_str_eq(out, "{\n  \"genctr\":18446744073709551615,\n  \"records\":[\n  ]\n}\n");
	free(out);
	free(log);
}
END_TEST

/* 32-bit fields go through %d or json_object_new_int() in nvme-cli. */
START_TEST(test_id_ctrl_32bit_sign)
{
	struct nvme_id_ctrl *id = load_bin("id-ctrl.bin", sizeof(*id));
	struct capture c;

	id->sgls = htole32(0x80000001);
	id->nn = htole32(0xffffffff);
	print_id_ctrl(capture_start(&c), id, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf, "\nsgls      : 0x80000001\n"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\nnn        : -1\n"));
	free(c.buf);
	print_id_ctrl(capture_start(&c), id, OUTPUT_JSON);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf, "\n  \"sgls\":-2147483647,\n"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\n  \"nn\":-1,\n"));
	free(c.buf);
	free(id);
}
END_TEST

/* Whether @s has a byte that a terminal acts on (besides the newline). */
static bool has_control(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f)
			return true;
	return false;
}

/* Whether @s is well-formed UTF-8 (RFC 3629), written out here so that
 * the check does not share the code it checks. */
static bool valid_utf8(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		unsigned int cp, len, i;

		if (*s < 0x80) {
			s++;
			continue;
		}
		if ((*s & 0xe0) == 0xc0)
			len = 2, cp = *s & 0x1f;
		else if ((*s & 0xf0) == 0xe0)
			len = 3, cp = *s & 0x0f;
		else if ((*s & 0xf8) == 0xf0)
			len = 4, cp = *s & 0x07;
		else
			return false;
		for (i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += len;
	}
	return true;
}

/*
 * Strings from the target reach the terminal escaped in text: control
 * characters and bytes that are not UTF-8 as \xHH, a backslash doubled,
 * well-formed UTF-8 as it is.  JSON keeps its own escaping.
 */
START_TEST(test_hostile_strings)
{
	struct nvme_id_ctrl *id = load_bin("id-ctrl.bin", sizeof(*id));
	struct nvmf_discovery_log *log = load_bin("discover.bin", 5120);
	struct capture c;
	char *out;

	memset(id->sn, ' ', sizeof(id->sn));
	memcpy(id->sn, "\x1b[2J\xff\\", 6);
	memset(id->mn, ' ', sizeof(id->mn));
	memcpy(id->mn, "caf\xc3\xa9\r\x07", 7);
	print_id_ctrl(capture_start(&c), id, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_msg(!has_control(c.buf), "a control byte reached the text output");
	ck_assert_ptr_nonnull(strstr(c.buf, "\nsn        : \\x1b[2J\\xff\\\\"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\nmn        : caf\xc3\xa9\\x0d\\x07"));
	free(c.buf);
	print_id_ctrl(capture_start(&c), id, OUTPUT_JSON);
	capture_end(&c);
	ck_assert_msg(!has_control(c.buf), "a control byte reached the JSON output");
	ck_assert_msg(valid_utf8(c.buf), "the JSON output is not UTF-8");
	/* ESC as JSON escapes it, the stray 0xff as U+FFFD, the backslash escaped. */
	ck_assert_ptr_nonnull(strstr(c.buf, "\n  \"sn\":\"\\u001b[2J\\ufffd\\\\"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\n  \"mn\":\"caf\xc3\xa9\\r\\u0007"));
	free(c.buf);

	memcpy(log->entries[0].subnqn, "nqn.\x1b]0;owned\x07", 14);
	memcpy(log->entries[0].traddr, "10.0.0.1\n#", 10);
	out = render_disc(log, 1, OUTPUT_NORMAL);
	ck_assert_msg(!has_control(out), "a control byte reached the text output");
	ck_assert_ptr_nonnull(strstr(out, "subnqn:  nqn.\\x1b]0;owned\\x07"));
	ck_assert_ptr_nonnull(strstr(out, "traddr:  10.0.0.1\\x0a#"));
	free(out);
	free(log);
	free(id);
}
END_TEST

/*
 * A discovery log's padded field as a string: padding gone, a full field
 * whole without a NUL (ASan sees a read past it: it is allocated to size),
 * the string ending at an embedded NUL, padding dropped after a cut too.
 */
START_TEST(test_text_field)
{
	char buf[9], *full = malloc(8);

	ck_assert_ptr_nonnull(full);
	memcpy(full, "4420abcd", 8);
	text_field(buf, sizeof(buf), full, 8);
	ck_assert_str_eq(buf, "4420abcd");
	text_field(buf, sizeof(buf), "4420    ", 8);
	ck_assert_str_eq(buf, "4420");
	text_field(buf, sizeof(buf), "44\0\0\0\0\0\0", 8);
	ck_assert_str_eq(buf, "44");
	text_field(buf, sizeof(buf), "        ", 8);
	ck_assert_str_eq(buf, "");
	/* What follows a NUL is stale, the padding before it is padding. */
	text_field(buf, sizeof(buf), "44  \0" "99 ", 8);
	ck_assert_str_eq(buf, "44");
	/* Cut to the destination, never past it, and no padding left at the cut. */
	text_field(buf, 8, "123456789abc", 12);
	ck_assert_str_eq(buf, "1234567");
	text_field(buf, 4, full, 8);
	ck_assert_str_eq(buf, "442");
	text_field(buf, 4, "ab  cdef", 8);
	ck_assert_str_eq(buf, "ab");
	text_field(buf, 1, full, 8);
	ck_assert_str_eq(buf, "");
	memcpy(buf, "kept", 5);
	text_field(buf, 0, full, 8);
	ck_assert_str_eq(buf, "kept");
	free(full);
}
END_TEST

/*
 * An address in a message ("path X left out", "skipped the referral to X")
 * may come from a discovery log: escaped like any target string, an IPv6
 * address bracketed, the port named.
 */
START_TEST(test_hostile_address)
{
	char buf[TEXT_WHERE_SIZE];

	ck_assert_str_eq(text_where(buf, sizeof(buf), "198.18.0.1", "4420"), "198.18.0.1:4420");
	ck_assert_str_eq(text_where(buf, sizeof(buf), "fd00::1", "4421"), "[fd00::1]:4421");
	ck_assert_str_eq(text_where(buf, sizeof(buf), "10.0.0.1\x1b[2J", "44\n20"),
			 "10.0.0.1\\x1b[2J:44\\x0a20");
	ck_assert_str_eq(text_where(buf, sizeof(buf), "10.0.0.1\x1b]0;owned\x07", "4420\r"),
			 "10.0.0.1\\x1b]0;owned\\x07:4420\\x0d");
	ck_assert_msg(!has_control(buf), "a control byte reached the message");
	/* A C1 control (U+009B is CSI to many terminals) is escaped, though
	 * it is well-formed UTF-8; the character after it is not. */
	text_escape(buf, sizeof(buf), "a\xc2\x9b" "2J\xc2\xa0" "b", 16);
	ck_assert_str_eq(buf, "a\\xc2\\x9b" "2J\xc2\xa0" "b");
}
END_TEST

/* Power state scales and flags; an empty subnqn leaves the JSON key out. */
START_TEST(test_id_ctrl_power_states)
{
	struct nvme_id_ctrl *id = load_bin("id-ctrl.bin", sizeof(*id));
	struct capture c;

	id->npss = 1;
	id->psd[1].mp = htole16(12345);
	id->psd[1].flags = NVME_PSD_FLAGS_MXPS | NVME_PSD_FLAGS_NOPS;
	id->psd[1].idlp = htole16(506);
	id->psd[1].ips = 2 << 6;
	id->psd[1].actp = htole16(7);
	id->psd[1].apws = 1 << 6 | 2;
	memset(id->subnqn, 0, sizeof(id->subnqn));
	print_id_ctrl(capture_start(&c), id, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf,
		"ps      1 : mp:1.2345W non-operational enlat:0 exlat:0 rrt:0 rrl:0\n"
		"            rwt:0 rwl:0 idle_power:5.06W active_power:0.0007W\n"
		"            active_power_workload:80K 128KiB SW\n"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\nsubnqn    : \n"));
	free(c.buf);
	print_id_ctrl(capture_start(&c), id, OUTPUT_JSON);
	capture_end(&c);
	ck_assert_ptr_null(strstr(c.buf, "\"subnqn\""));
	ck_assert_ptr_nonnull(strstr(c.buf, "\"max_power\":12345,\n      \"flags\":3,"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\"idle_scale\":2,\n      \"active_power\":7,\n"
				     "      \"active_power_work\":2,\n      \"active_scale\":1\n"));
	free(c.buf);
	free(id);
}
END_TEST

/*
 * LBA formats: text covers NLBAF + NULBAF with a trailing space after one
 * not in use, JSON covers NLBAF; FLBAS bits 6:5 extend the index.
 */
START_TEST(test_id_ns_lbafs)
{
	struct nvme_id_ns *ns = load_bin("id-ns.bin", sizeof(*ns));
	struct capture c;

	ns->nlbaf = 1;
	ns->nulbaf = 1;
	ns->flbas = 0x01;
	ns->lbaf[1] = (struct nvme_lbaf){ .ms = htole16(8), .ds = 12, .rp = 2 };
	ns->lbaf[2] = (struct nvme_lbaf){ .ms = 0, .ds = 12, .rp = 0 };
	ns->nsfeat = 0;
	print_id_ns(capture_start(&c), ns, 7, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf, "NVME Identify Namespace 7:\n"));
	ck_assert_ptr_null(strstr(c.buf, "npwg"));
	ck_assert_ptr_nonnull(strstr(c.buf,
		"lbaf  0 : ms:0   lbads:9  rp:0 \n"
		"lbaf  1 : ms:8   lbads:12 rp:0x2 (in use)\n"
		"lbaf  2 : ms:0   lbads:12 rp:0 \n"));
	free(c.buf);
	print_id_ns(capture_start(&c), ns, 7, OUTPUT_JSON);
	capture_end(&c);
	ck_assert_ptr_null(strstr(c.buf, "npwg"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\"ds\":12,\n      \"rp\":2\n    }\n  ]\n}\n"));
	free(c.buf);

	ns->nlbaf = 17;
	ns->nulbaf = 0;
	ns->flbas = 0x21;	/* format 17 */
	print_id_ns(capture_start(&c), ns, 7, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf, "lbaf 17 : ms:0   lbads:0  rp:0 (in use)\n"));
	free(c.buf);
	free(ns);
}
END_TEST

/* Every descriptor type, in nvme-cli's walk (CSI first: see output.c). */
START_TEST(test_ns_descs_all_types)
{
	uint8_t list[NVME_IDENTIFY_DATA_SIZE] = {
		4, 1, 0, 0, 2,					/* csi 2 */
		1, 8, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0xab,		/* eui64 */
		2, 16, 0, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 1,				/* nguid */
		9, 2, 0, 0, 0xff, 0xff,				/* skipped */
		3, 16, 0, 0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
		0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,	/* uuid */
	};
	struct capture c;

	print_ns_descs(capture_start(&c), list, 3, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_str_eq(c.buf, "NVME Namespace Identification Descriptors NS 3:\n"
			 "csi     : 0x2\n"
			 "eui64   : 01020304050607ab\n"
			 "nguid   : deadbeef000000000000000000000001\n"
			 "uuid    : 12345678-9abc-def0-1234-56789abcdef0\n");
	free(c.buf);
	print_ns_descs(capture_start(&c), list, 3, OUTPUT_JSON);
	capture_end(&c);
	ck_assert_ptr_nonnull(strstr(c.buf, "\"loc\":0,\n      \"nidt\":4,\n      \"nidl\":1,\n"
				     "      \"type\":\"csi\",\n      \"csi\":\"0x2\"\n"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\"loc\":17,\n      \"nidt\":2,\n"));
	ck_assert_ptr_nonnull(strstr(c.buf, "\"loc\":43,\n      \"nidt\":3,\n"));
	ck_assert_ptr_null(strstr(c.buf, "\"nidt\":9"));
	free(c.buf);

	/* No descriptor: nvme-cli prints an empty object. */
	memset(list, 0, sizeof(list));
	print_ns_descs(capture_start(&c), list, 3, OUTPUT_JSON);
	capture_end(&c);
	ck_assert_str_eq(c.buf, "{\n}\n");
	free(c.buf);

	/* Skipped descriptors up to a UUID whose data would run off the end:
	 * it is not read. */
	for (unsigned int pos = 0; pos < 3840; pos += 256) {
		list[pos] = 0xf0;
		list[pos + 1] = 252;
	}
	list[3840] = 0xf0;
	list[3841] = 248;
	list[NVME_IDENTIFY_DATA_SIZE - 4] = NVME_NIDT_UUID;
	list[NVME_IDENTIFY_DATA_SIZE - 3] = 16;
	print_ns_descs(capture_start(&c), list, 3, OUTPUT_NORMAL);
	capture_end(&c);
	ck_assert_str_eq(c.buf, "NVME Namespace Identification Descriptors NS 3:\n");
	free(c.buf);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The JSON writer and 128-bit numbers                                      */
/* ------------------------------------------------------------------------ */

/* Expected strings are json-c 0.16's, with PRETTY | NOSLASHESCAPE. */
/*
 * main() takes the user's locale (nvme-cli groups 128-bit counters by it),
 * and where the decimal point is a comma printf writes "1234,500": JSON
 * numbers keep the point whatever the locale.  The locale is compiled for
 * the test with localedef (package locales), as a machine may have none.
 */
START_TEST(test_json_double_any_locale)
{
	char dir[] = "/tmp/check-locale-XXXXXX", cmd[256];
	struct capture c;
	struct json j;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 -c %s/de_DE.UTF-8 2>/dev/null", dir);
	ck_assert_msg(system(cmd) == 0, "localedef cannot build de_DE.UTF-8: install locales");
	setenv("LOCPATH", dir, 1);
	ck_assert_ptr_nonnull(setlocale(LC_NUMERIC, "de_DE.UTF-8"));
	ck_assert_str_eq(localeconv()->decimal_point, ",");
	json_init_compact(&j, capture_start(&c));
	json_object_begin(&j, NULL);
	json_double(&j, "iops", 1234.5);
	json_double(&j, "lat", -0.25);
	json_object_end(&j);
	capture_end(&c);
	setlocale(LC_NUMERIC, "C");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_str_eq(c.buf, "{\"iops\":1234.500,\"lat\":-0.250}");
	free(c.buf);
}
END_TEST

START_TEST(test_json_layout_and_escaping)
{
	struct capture c;
	struct json j;

	json_init(&j, capture_start(&c));
	json_object_begin(&j, NULL);
	json_string(&j, "s", "\x01\x1f\b\t\n\f\r\"\\/\x7f\xc3\xa9");
	json_string(&j, "k\"ey", "");
	json_int(&j, "neg", INT64_MIN);
	json_uint(&j, "big", UINT64_MAX);
	json_object_begin(&j, "empty");
	json_object_end(&j);
	json_array_begin(&j, "a");
	json_array_begin(&j, NULL);
	json_array_end(&j);
	json_int(&j, NULL, 1);
	json_array_end(&j);
	json_object_end(&j);
	ck_assert_int_eq(j.error, 0);
	capture_end(&c);
	ck_assert_str_eq(c.buf, "{\n"
			 "  \"s\":\"\\u0001\\u001f\\b\\t\\n\\f\\r\\\"\\\\/\x7f\xc3\xa9\",\n"
			 "  \"k\\\"ey\":\"\",\n"
			 "  \"neg\":-9223372036854775808,\n"
			 "  \"big\":18446744073709551615,\n"
			 "  \"empty\":{\n  },\n"
			 "  \"a\":[\n    [\n    ],\n    1\n  ]\n"
			 "}");
	free(c.buf);

	/* Bytes that are not UTF-8 each become U+FFFD, so the document stays
	 * UTF-8 as JSON must be (a stray byte, a cut sequence, an overlong, a
	 * surrogate); a C1 control, which terminals obey, is escaped; any
	 * other character is kept. */
	json_init_compact(&j, capture_start(&c));
	json_string(&j, NULL, "\xff|\xc3|\xc0\xaf|\xed\xa0\x80|\xc2\x9b|\xc2\xa0\xf0\x9f\x98\x80|\xf4\x90\x80\x80");
	capture_end(&c);
	ck_assert_str_eq(c.buf, "\"\\ufffd|\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\u009b|"
			 "\xc2\xa0\xf0\x9f\x98\x80|\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ck_assert(valid_utf8(c.buf));
	free(c.buf);

	/* The same document, compact: no whitespace, strings escaped alike. */
	json_init_compact(&j, capture_start(&c));
	json_object_begin(&j, NULL);
	json_string(&j, "s", "\x01\x1f\b\t\n\f\r\"\\/\x7f\xc3\xa9");
	json_string(&j, "k\"ey", "");
	json_int(&j, "neg", INT64_MIN);
	json_uint(&j, "big", UINT64_MAX);
	json_object_begin(&j, "empty");
	json_object_end(&j);
	json_array_begin(&j, "a");
	json_array_begin(&j, NULL);
	json_array_end(&j);
	json_int(&j, NULL, 1);
	json_array_end(&j);
	json_object_end(&j);
	ck_assert_int_eq(j.error, 0);
	capture_end(&c);
	ck_assert_str_eq(c.buf, "{\"s\":\"\\u0001\\u001f\\b\\t\\n\\f\\r\\\"\\\\/\x7f\xc3\xa9\","
			 "\"k\\\"ey\":\"\",\"neg\":-9223372036854775808,"
			 "\"big\":18446744073709551615,\"empty\":{},\"a\":[[],1]}");
	free(c.buf);

	json_init(&j, capture_start(&c));
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		json_array_begin(&j, NULL);
	ck_assert_int_eq(j.error, -EOVERFLOW);
	capture_end(&c);
	free(c.buf);
}
END_TEST

static void le128(uint8_t le[16], uint64_t hi, uint64_t lo)
{
	for (int i = 0; i < 8; i++) {
		le[i] = (uint8_t)(lo >> (8 * i));
		le[8 + i] = (uint8_t)(hi >> (8 * i));
	}
}

START_TEST(test_u128)
{
	char buf[JSON_U128_STRLEN];
	uint8_t v[16];

	le128(v, 0, 0);
	ck_assert_str_eq(json_u128_str(v, "", buf), "0");
	ck_assert_str_eq(json_u128_str(v, ",", buf), "0");
	le128(v, UINT64_MAX, UINT64_MAX);
	ck_assert_str_eq(json_u128_str(v, "", buf), "340282366920938463463374607431768211455");
	ck_assert_str_eq(json_u128_str(v, ",", buf),
			 "340,282,366,920,938,463,463,374,607,431,768,211,455");
	le128(v, 1, 0);
	ck_assert_str_eq(json_u128_str(v, "", buf), "18446744073709551616");
	le128(v, 0, 1000204886016ull);
	ck_assert_str_eq(json_u128_str(v, ".", buf), "1.000.204.886.016");
	ck_assert_str_eq(json_u128_str(v, "123456789", buf), "1000204886016");
	/* nvme-cli's placement of a 3-byte separator (U+202F, fr_FR.UTF-8). */
	le128(v, 0, 1234567);
	ck_assert_str_eq(json_u128_str(v, "\xe2\x80\xaf", buf), "12\xe2\x80\xaf" "34567");
	le128(v, 0, 123);
	ck_assert_str_eq(json_u128_str(v, ",", buf), "123");
}
END_TEST

START_TEST(test_output_format_parse)
{
	enum output_format fmt = OUTPUT_JSON;

	ck_assert_int_eq(output_format_parse("normal", &fmt), 0);
	ck_assert_int_eq(fmt, OUTPUT_NORMAL);
	ck_assert_int_eq(output_format_parse("json", &fmt), 0);
	ck_assert_int_eq(fmt, OUTPUT_JSON);
	ck_assert_int_eq(output_format_parse("binary", &fmt), -EINVAL);
	ck_assert_int_eq(output_format_parse("JSON", &fmt), -EINVAL);
	ck_assert_int_eq(output_format_parse("", &fmt), -EINVAL);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc;

	tc = tcase_create("nvme-cli-2.3");
	tcase_add_test(tc, test_discover_normal);
	tcase_add_test(tc, test_hostile_address);
	tcase_add_test(tc, test_discover_json);
	tcase_add_test(tc, test_id_ctrl_normal);
	tcase_add_test(tc, test_id_ctrl_json);
	tcase_add_test(tc, test_id_ns_normal);
	tcase_add_test(tc, test_id_ns_json);
	tcase_add_test(tc, test_ns_descs_normal);
	tcase_add_test(tc, test_ns_descs_json);
	tcase_add_test(tc, test_ns_list_normal);
	tcase_add_test(tc, test_ns_list_json);
	tcase_add_test(tc, test_id_ns_with_descs_json);
	suite_add_tcase(s, tc);

	tc = tcase_create("corners");
	tcase_add_test(tc, test_discover_padding_and_tcp);
	tcase_add_test(tc, test_discover_treq_in_schema);
	tcase_add_test(tc, test_discover_padding_before_nul);
	tcase_add_test(tc, test_discover_json_line);
	tcase_add_test(tc, test_discover_empty);
	tcase_add_test(tc, test_id_ctrl_32bit_sign);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_text_field);
	tcase_add_test(tc, test_id_ctrl_power_states);
	tcase_add_test(tc, test_id_ns_lbafs);
	tcase_add_test(tc, test_ns_descs_all_types);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	/* localedef alone takes over Check's default 4 s on a loaded machine. */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_json_layout_and_escaping);
	tcase_add_test(tc, test_json_double_any_locale);
	tcase_add_test(tc, test_u128);
	tcase_add_test(tc, test_output_format_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(output_suite(), CK_NORMAL);
}
