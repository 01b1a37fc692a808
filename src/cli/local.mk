# The nvmefs command and its output tests, included by the top Makefile.am.
# Paths are from the top.

bin_PROGRAMS += src/cli/nvmefs

# The formatters need libnvme's types and string tables but not libnvmefs,
# so the unit test builds them on their own.
CLI_OUTPUT_SOURCES = \
	src/common/text.c \
	src/common/text.h \
	src/common/json.c \
	src/common/json.h \
	src/cli/output.c \
	src/cli/output.h

src_cli_nvmefs_SOURCES = \
	$(CLI_OUTPUT_SOURCES) \
	src/cli/cli.h \
	src/cli/cli.c \
	src/cli/main.c \
	src/cli/opts_connect.c \
	src/cli/opts_config.c \
	src/cli/paths.c \
	src/cli/paths.h \
	src/cli/paths_log.c \
	src/cli/paths_log.h \
	src/cli/discover.c \
	src/cli/discover_cmd.c \
	src/cli/discover.h \
	src/cli/discovery_conf.c \
	src/cli/identify.c \
	src/common/histogram.c \
	src/common/histogram.h \
	src/common/status.c \
	src/common/status.h \
	src/common/rkeys_json.c \
	src/common/rkeys_json.h \
	src/cli/util_parse.c \
	src/cli/util_parse.h \
	src/cli/perf.c \
	src/cli/perf_args.c \
	src/cli/perf.h \
	src/cli/perf_report.c \
	src/cli/perf_report.h \
	src/cli/perf_types.h \
	src/cli/perf_layout.c \
	src/cli/perf_layout.h \
	src/cli/mount.c \
	src/cli/mount.h \
	src/cli/mount_opts.c \
	src/cli/list.c \
	$(LIST_SOURCES) \
	src/fuse/fs_ops.c \
	src/fuse/adapter.c \
	src/fuse/loop.c \
	src/fuse/loop.h \
	src/fuse/ring.c \
	src/export/engine.h \
	src/export/export_priv.h \
	src/export/requests.c \
	src/export/limits.c \
	src/export/log.c \
	src/export/stats.c \
	src/export/worker.c \
	src/export/post.c \
	src/export/parking.c \
	src/export/parking.h \
	src/fuse/serve.c \
	src/fuse/memlock.c \
	src/fuse/fs.h \
	src/fuse/fs_priv.h \
	src/fuse/namespaces.c
src_cli_nvmefs_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(FUSE3_CFLAGS) $(JSONC_CFLAGS)
# The command is a user of the shared library like any other.
src_cli_nvmefs_LDADD = src/lib/libnvmefs.la $(LIBNVME_LIBS) $(FUSE3_LIBS) $(JSONC_LIBS) -lm

dist_man_MANS += \
	man/nvmefs.1 \
	man/nvmefs-discover.1 \
	man/nvmefs-identify.1 \
	man/nvmefs-perf.1 \
	man/nvmefs-mount.1 \
	man/nvmefs-list.1

# nvme-cli 2.3's output for the testbed target: what check_output compares with.
OUTPUT_FIXTURES = \
	tests/unit/data/nvme-cli-2.3/discover.bin \
	tests/unit/data/nvme-cli-2.3/discover.txt \
	tests/unit/data/nvme-cli-2.3/discover.json \
	tests/unit/data/nvme-cli-2.3/id-ctrl.bin \
	tests/unit/data/nvme-cli-2.3/id-ctrl.txt \
	tests/unit/data/nvme-cli-2.3/id-ctrl.json \
	tests/unit/data/nvme-cli-2.3/id-ns.bin \
	tests/unit/data/nvme-cli-2.3/id-ns.txt \
	tests/unit/data/nvme-cli-2.3/id-ns.json \
	tests/unit/data/nvme-cli-2.3/ns-descs.bin \
	tests/unit/data/nvme-cli-2.3/ns-descs.txt \
	tests/unit/data/nvme-cli-2.3/ns-descs.json \
	tests/unit/data/nvme-cli-2.3/list-ns.txt \
	tests/unit/data/nvme-cli-2.3/list-ns.json
EXTRA_DIST += $(OUTPUT_FIXTURES)
# check_output holds the output to the values this schema lists.
EXTRA_DIST += doc/json/discover.schema.json

OUTPUT_TEST_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) \
	-DTEST_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'

check_PROGRAMS += tests/unit/check_output tests/unit/san/check_output
UNIT_TESTS += tests/unit/check_output tests/unit/san/check_output

tests_unit_check_output_SOURCES = tests/unit/check_output.c $(CLI_OUTPUT_SOURCES)
tests_unit_check_output_CFLAGS = $(OUTPUT_TEST_CFLAGS)
tests_unit_check_output_LDADD = $(LIBNVME_LIBS) $(CHECK_LIBS)

tests_unit_san_check_output_SOURCES = $(tests_unit_check_output_SOURCES)
tests_unit_san_check_output_CFLAGS = $(OUTPUT_TEST_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_output_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_output_LDADD = $(LIBNVME_LIBS) $(CHECK_LIBS)

# The command-line parsers need nothing but themselves.
check_PROGRAMS += tests/unit/check_parse tests/unit/san/check_parse
UNIT_TESTS += tests/unit/check_parse tests/unit/san/check_parse

tests_unit_check_parse_SOURCES = tests/unit/check_parse.c src/cli/util_parse.c src/cli/util_parse.h
tests_unit_check_parse_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_parse_LDADD = $(CHECK_LIBS)

tests_unit_san_check_parse_SOURCES = $(tests_unit_check_parse_SOURCES)
tests_unit_san_check_parse_CFLAGS = $(tests_unit_check_parse_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_parse_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_parse_LDADD = $(CHECK_LIBS)

# The layout perf chooses where its command line leaves it open.
check_PROGRAMS += tests/unit/check_perf_layout tests/unit/san/check_perf_layout
UNIT_TESTS += tests/unit/check_perf_layout tests/unit/san/check_perf_layout

tests_unit_check_perf_layout_SOURCES = tests/unit/check_perf_layout.c src/cli/perf_layout.c \
	src/cli/perf_layout.h
tests_unit_check_perf_layout_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_perf_layout_LDADD = $(CHECK_LIBS)

tests_unit_san_check_perf_layout_SOURCES = $(tests_unit_check_perf_layout_SOURCES)
tests_unit_san_check_perf_layout_CFLAGS = $(tests_unit_check_perf_layout_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_perf_layout_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_perf_layout_LDADD = $(CHECK_LIBS)

# The mount's parked requests (src/export/parking.c), without FUSE.
check_PROGRAMS += tests/unit/check_parking tests/unit/san/check_parking
UNIT_TESTS += tests/unit/check_parking tests/unit/san/check_parking

tests_unit_check_parking_SOURCES = tests/unit/check_parking.c src/export/parking.c src/export/parking.h
tests_unit_check_parking_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_parking_LDADD = $(CHECK_LIBS)

tests_unit_san_check_parking_SOURCES = $(tests_unit_check_parking_SOURCES)
tests_unit_san_check_parking_CFLAGS = $(tests_unit_check_parking_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_parking_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_parking_LDADD = $(CHECK_LIBS)

# nvmefs list's findings, from a fake mountinfo and fake mounts in a temporary directory.
LIST_SOURCES = src/cli/list_mounts.c src/cli/list.h
check_PROGRAMS += tests/unit/check_list tests/unit/san/check_list
UNIT_TESTS += tests/unit/check_list tests/unit/san/check_list

tests_unit_check_list_SOURCES = tests/unit/check_list.c $(LIST_SOURCES)
tests_unit_check_list_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_list_LDADD = $(JSONC_LIBS) $(CHECK_LIBS)

tests_unit_san_check_list_SOURCES = $(tests_unit_check_list_SOURCES)
tests_unit_san_check_list_CFLAGS = $(tests_unit_check_list_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_list_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_list_LDADD = $(JSONC_LIBS) $(CHECK_LIBS)
