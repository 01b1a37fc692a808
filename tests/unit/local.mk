# Unit tests of the library with a scripted transport, included by the top Makefile.am.
#
# Each program links the whole library, the rdma*.c files included; the tests plug
# fake_ops (fake_transport.c) in through nvmefs_ctrl_connect_with() and
# nvmefs_transport_override, so no RDMA device is needed at run time.

FAKE_TRANSPORT_SOURCES = \
	tests/unit/fake_transport.c \
	tests/unit/fake_transport.h \
	tests/unit/arm_contract.h
# fake_transport.c and check_io.c call nvmefs_rdma_map_data() (rdma_sgl.h).
UNIT_FAKE_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(IBVERBS_CFLAGS) $(CHECK_CFLAGS)
UNIT_FAKE_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
UNIT_FAKE_SAN_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)

FAKE_UNIT_TESTS = \
	tests/unit/check_auth \
	tests/unit/check_connect_opts \
	tests/unit/check_ctrl \
	tests/unit/check_discovery \
	tests/unit/check_events \
	tests/unit/check_io \
	tests/unit/check_mpath \
	tests/unit/check_queue
check_PROGRAMS += $(FAKE_UNIT_TESTS)
UNIT_TESTS += $(FAKE_UNIT_TESTS)

tests_unit_check_auth_SOURCES = tests/unit/check_auth.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_auth_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_auth_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_connect_opts_SOURCES = tests/unit/check_connect_opts.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_connect_opts_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_connect_opts_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_ctrl_SOURCES = tests/unit/check_ctrl.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_ctrl_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_ctrl_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_discovery_SOURCES = tests/unit/check_discovery.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_discovery_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_discovery_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_events_SOURCES = tests/unit/check_events.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_events_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_events_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_io_SOURCES = tests/unit/check_io.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_io_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_mpath_SOURCES = tests/unit/check_mpath.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_mpath_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_mpath_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_queue_SOURCES = tests/unit/check_queue.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_queue_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_queue_LDADD = $(UNIT_FAKE_LDADD)

# The sanitizer twins, as the top Makefile.am builds tests/unit/san/check_wire.
SAN_FAKE_UNIT_TESTS = \
	tests/unit/san/check_auth \
	tests/unit/san/check_connect_opts \
	tests/unit/san/check_ctrl \
	tests/unit/san/check_discovery \
	tests/unit/san/check_events \
	tests/unit/san/check_io \
	tests/unit/san/check_mpath \
	tests/unit/san/check_queue
check_PROGRAMS += $(SAN_FAKE_UNIT_TESTS)
UNIT_TESTS += $(SAN_FAKE_UNIT_TESTS)

tests_unit_san_check_connect_opts_SOURCES = $(tests_unit_check_connect_opts_SOURCES)
tests_unit_san_check_connect_opts_CFLAGS = $(tests_unit_check_connect_opts_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_connect_opts_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_connect_opts_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_auth_SOURCES = $(tests_unit_check_auth_SOURCES)
tests_unit_san_check_auth_CFLAGS = $(tests_unit_check_auth_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_auth_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_auth_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_ctrl_SOURCES = $(tests_unit_check_ctrl_SOURCES)
tests_unit_san_check_ctrl_CFLAGS = $(tests_unit_check_ctrl_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_ctrl_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_ctrl_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_discovery_SOURCES = $(tests_unit_check_discovery_SOURCES)
tests_unit_san_check_discovery_CFLAGS = $(tests_unit_check_discovery_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_discovery_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_discovery_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_events_SOURCES = $(tests_unit_check_events_SOURCES)
tests_unit_san_check_events_CFLAGS = $(tests_unit_check_events_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_events_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_events_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_io_SOURCES = $(tests_unit_check_io_SOURCES)
tests_unit_san_check_io_CFLAGS = $(tests_unit_check_io_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_mpath_SOURCES = $(tests_unit_check_mpath_SOURCES)
tests_unit_san_check_mpath_CFLAGS = $(tests_unit_check_mpath_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_mpath_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_mpath_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_queue_SOURCES = $(tests_unit_check_queue_SOURCES)
tests_unit_san_check_queue_CFLAGS = $(tests_unit_check_queue_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_queue_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_queue_LDADD = $(UNIT_FAKE_SAN_LDADD)

# The registry of registered memory under threads: plain, ASan, and TSan,
# which needs the library built for it too.
TSAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer
check_LIBRARIES += src/lib/libnvmefs-tsan.a
src_lib_libnvmefs_tsan_a_SOURCES = $(NVMEFS_LIB_SOURCES)
src_lib_libnvmefs_tsan_a_CFLAGS = $(NVMEFS_LIB_CFLAGS) $(TSAN_FLAGS)
MR_UNIT_TESTS = tests/unit/check_mr tests/unit/san/check_mr tests/unit/tsan/check_mr
check_PROGRAMS += $(MR_UNIT_TESTS)
UNIT_TESTS += $(MR_UNIT_TESTS)
tests_unit_check_mr_SOURCES = tests/unit/check_mr.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_mr_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_mr_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_mr_SOURCES = $(tests_unit_check_mr_SOURCES)
tests_unit_san_check_mr_CFLAGS = $(tests_unit_check_mr_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_mr_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_mr_LDADD = $(UNIT_FAKE_SAN_LDADD)
tests_unit_tsan_check_mr_SOURCES = $(tests_unit_check_mr_SOURCES)
tests_unit_tsan_check_mr_CFLAGS = $(tests_unit_check_mr_CFLAGS) $(TSAN_FLAGS)
tests_unit_tsan_check_mr_LDFLAGS = $(TSAN_FLAGS)
TSAN_LDADD = src/lib/libnvmefs-tsan.a $(LIBNVME_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS) \
	$(OPENSSL_LIBS) $(ISAL_LIBS) $(CHECK_LIBS)
tests_unit_tsan_check_mr_LDADD = $(TSAN_LDADD)

# check_io's cases of threads sharing a controller's state (its "races").
check_PROGRAMS += tests/unit/tsan/check_io
UNIT_TESTS += tests/unit/tsan/check_io
tests_unit_tsan_check_io_SOURCES = $(tests_unit_check_io_SOURCES)
tests_unit_tsan_check_io_CFLAGS = $(tests_unit_check_io_CFLAGS) $(TSAN_FLAGS)
tests_unit_tsan_check_io_LDFLAGS = $(TSAN_FLAGS)
tests_unit_tsan_check_io_LDADD = $(TSAN_LDADD)

# The export engine (src/export) without FUSE, over the library and the
# scripted transport: plain, ASan, and TSan (its worker is a thread).
ENGINE_UNIT_SOURCES = tests/unit/check_engine.c tests/unit/check_engine_post.c \
	tests/unit/check_engine_outage.c tests/unit/engine_harness.c tests/unit/engine_harness.h \
	$(FAKE_TRANSPORT_SOURCES) \
	src/export/engine.h src/export/export_priv.h src/export/requests.c src/export/worker.c \
	src/export/post.c src/fuse/loop.c src/fuse/loop.h \
	src/export/parking.c src/export/parking.h src/export/log.c src/export/stats.c \
	src/common/histogram.c src/common/histogram.h src/common/json.c src/common/json.h \
	src/common/status.c src/common/status.h src/common/rkeys_json.c src/common/rkeys_json.h
ENGINE_UNIT_TESTS = tests/unit/check_engine tests/unit/san/check_engine \
	tests/unit/tsan/check_engine
check_PROGRAMS += $(ENGINE_UNIT_TESTS)
UNIT_TESTS += $(ENGINE_UNIT_TESTS)
tests_unit_check_engine_SOURCES = $(ENGINE_UNIT_SOURCES)
tests_unit_check_engine_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_engine_LDADD = $(UNIT_FAKE_LDADD) -lm
tests_unit_san_check_engine_SOURCES = $(ENGINE_UNIT_SOURCES)
tests_unit_san_check_engine_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_engine_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_engine_LDADD = $(UNIT_FAKE_SAN_LDADD) -lm
tests_unit_tsan_check_engine_SOURCES = $(ENGINE_UNIT_SOURCES)
tests_unit_tsan_check_engine_CFLAGS = $(UNIT_FAKE_CFLAGS) $(TSAN_FLAGS)
tests_unit_tsan_check_engine_LDFLAGS = $(TSAN_FLAGS)
tests_unit_tsan_check_engine_LDADD = $(TSAN_LDADD) -lm

# Which discovery log records --all-paths connects (src/cli/paths_log.c, issue #27), and
# how --path is read (src/cli/paths.c, with the CLI's option helpers it uses).
check_PROGRAMS += tests/unit/check_paths tests/unit/san/check_paths
UNIT_TESTS += tests/unit/check_paths tests/unit/san/check_paths

tests_unit_check_paths_SOURCES = tests/unit/check_paths.c src/cli/paths_log.c src/cli/paths_log.h \
	src/cli/paths.c src/cli/paths.h src/cli/cli.c src/cli/opts_connect.c src/cli/opts_config.c \
	src/cli/util_parse.c src/cli/output.c src/common/json.c
tests_unit_check_paths_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_paths_LDADD = $(LIBNVMEFS_LDADD) $(LIBNVME_LIBS) $(CHECK_LIBS)

tests_unit_san_check_paths_SOURCES = $(tests_unit_check_paths_SOURCES)
tests_unit_san_check_paths_CFLAGS = $(tests_unit_check_paths_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_paths_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_paths_LDADD = $(LIBNVMEFS_SAN_LDADD) $(LIBNVME_LIBS) $(CHECK_LIBS)

# The NVMe/TCP transport against a scripted target on a loopback socket.
TCP_UNIT_TESTS = tests/unit/check_tcp tests/unit/san/check_tcp \
	tests/unit/check_tcp_errors tests/unit/san/check_tcp_errors
check_PROGRAMS += $(TCP_UNIT_TESTS)
UNIT_TESTS += $(TCP_UNIT_TESTS)
TCP_PEER_SOURCES = tests/unit/tcp_peer.c tests/unit/tcp_peer.h
TCP_UNIT_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_tcp_SOURCES = tests/unit/check_tcp.c tests/unit/arm_contract.h $(TCP_PEER_SOURCES)
tests_unit_check_tcp_CFLAGS = $(TCP_UNIT_CFLAGS)
tests_unit_check_tcp_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
tests_unit_san_check_tcp_SOURCES = $(tests_unit_check_tcp_SOURCES)
tests_unit_san_check_tcp_CFLAGS = $(TCP_UNIT_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_tcp_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_tcp_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)
tests_unit_check_tcp_errors_SOURCES = tests/unit/check_tcp_errors.c $(TCP_PEER_SOURCES)
tests_unit_check_tcp_errors_CFLAGS = $(TCP_UNIT_CFLAGS)
tests_unit_check_tcp_errors_LDFLAGS = -Wl,--wrap=poll
tests_unit_check_tcp_errors_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
tests_unit_san_check_tcp_errors_SOURCES = $(tests_unit_check_tcp_errors_SOURCES)
tests_unit_san_check_tcp_errors_CFLAGS = $(TCP_UNIT_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_tcp_errors_LDFLAGS = $(SAN_FLAGS) -Wl,--wrap=poll
tests_unit_san_check_tcp_errors_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)

# What a mount pins, which its locked-memory check counts (src/fuse/memlock.c, issue 34): RDMA's
# registrations and FUSE over io_uring's payloads, nothing over TCP.
check_PROGRAMS += tests/unit/check_memlock tests/unit/san/check_memlock
UNIT_TESTS += tests/unit/check_memlock tests/unit/san/check_memlock
tests_unit_check_memlock_SOURCES = tests/unit/check_memlock.c src/fuse/memlock.c src/fuse/fs.h \
	src/export/limits.c src/export/log.c src/export/engine.h
tests_unit_check_memlock_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(FUSE3_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_memlock_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
tests_unit_san_check_memlock_SOURCES = $(tests_unit_check_memlock_SOURCES)
tests_unit_san_check_memlock_CFLAGS = $(tests_unit_check_memlock_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_memlock_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_memlock_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)
