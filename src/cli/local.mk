# The nvmefs command, included by the top Makefile.am (its tests: tests/unit/local.mk).
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
	src/cli/secret_src.c \
	src/cli/secret_src.h \
	src/cli/tls_key.c \
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
	src/cli/daemon.c \
	src/cli/daemon.h \
	src/cli/mount.c \
	src/cli/mount.h \
	src/cli/mount_opts.c \
	src/cli/list.c \
	src/cli/ublk.c \
	src/cli/ublk.h \
	src/cli/ublk_add.c \
	src/ublk/devices.h \
	src/ublk/ublk_priv.h \
	src/ublk/uapi.h \
	src/ublk/ctrl.c \
	src/ublk/iod.c \
	src/ublk/iod.h \
	src/ublk/queue.c \
	src/ublk/serve.c \
	src/ublk/record.c \
	src/ublk/record_fmt.c \
	src/ublk/resize.c \
	$(LIST_SOURCES) \
	src/fuse/fs_ops.c \
	src/fuse/adapter.c \
	src/fuse/loop.c \
	src/fuse/loop.h \
	src/fuse/ring.c \
	src/fuse/ring_msg.c \
	src/fuse/ring_msg.h \
	src/fuse/ring_uapi.h \
	src/export/engine.h \
	src/export/export_priv.h \
	src/export/requests.c \
	src/export/limits.c \
	src/export/log.c \
	src/export/ns_info.c \
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
src_cli_nvmefs_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(FUSE3_CFLAGS) $(JSONC_CFLAGS) \
	$(LIBURING_CFLAGS)
# The command is a user of the shared library like any other.
src_cli_nvmefs_LDADD = src/lib/libnvmefs.la $(LIBNVME_LIBS) $(FUSE3_LIBS) $(JSONC_LIBS) \
	$(LIBURING_LIBS) -lm

dist_man_MANS += \
	man/nvmefs.1 \
	man/nvmefs-discover.1 \
	man/nvmefs-identify.1 \
	man/nvmefs-perf.1 \
	man/nvmefs-mount.1 \
	man/nvmefs-list.1 \
	man/nvmefs-ublk.1 \
	man/nvmefs-gen-tls-key.1 \
	man/nvmefs-check-tls-key.1

# What nvmefs list reads: the command's, and check_list's (tests/unit/local.mk).
LIST_SOURCES = src/cli/list_mounts.c src/cli/list.h
