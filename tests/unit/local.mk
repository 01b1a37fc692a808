# Every unit test's build rules (Check), included by the top Makefile.am after src/cli/local.mk:
# the wire formats and headers, the command's parts, then the library over a scripted transport.
# Each test's UNIT_TESTS entry is what `make check-unit` runs.

# What tests share (tests/lib): helpers defined once (test_util.h), and the scripted NVMe
# target (fake_transport.c, its script in fake_script.c) that tests drive the library against,
# with the transport table that names it (fake_table.c) in place of the library's.  The
# target's two files need no Check when built with FAKE_NO_CHECK, as tests/fuzz/local.mk does.
TESTS_LIB_CFLAGS = -I$(top_srcdir)/tests/lib
FAKE_TRANSPORT_SOURCES = \
	tests/lib/fake_transport.c \
	tests/lib/fake_table.c \
	tests/lib/fake_transport.h \
	tests/lib/fake_script.c \
	tests/lib/fake_exec.c \
	tests/lib/fake_priv.h \
	tests/lib/test_util.h \
	tests/unit/arm_contract.h

# ---------------------------------------------------------------------------
# The wire formats, the DH-HMAC-CHAP crypto and the public headers
# ---------------------------------------------------------------------------
check_PROGRAMS = \
	tests/unit/check_wire \
	tests/unit/check_auth_crypto \
	tests/unit/check_tls_key \
	tests/unit/check_headers_c99 \
	tests/unit/check_headers_c11

tests_unit_check_wire_SOURCES = tests/unit/check_wire.c tests/lib/test_util.h
tests_unit_check_wire_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_wire_LDADD = $(LIBNVMEFS_CORE_LDADD) $(CHECK_LIBS)

# Known answers from tests/unit/data/auth_vectors.py (Python's hmac, hashlib,
# base64, zlib) and from nvme-cli's gen-dhchap-key; OpenSSL acts as the
# controller's side of the DH exchange.
tests_unit_check_auth_crypto_SOURCES = tests/unit/check_auth_crypto.c tests/lib/test_util.h
tests_unit_check_auth_crypto_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(OPENSSL_CFLAGS) \
	$(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_auth_crypto_LDADD = $(LIBNVMEFS_CORE_LDADD) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/data/auth_vectors.py

# Known answers from tests/unit/data/tls_vectors.py, which asserts libnvme's own.
tests_unit_check_tls_key_SOURCES = tests/unit/check_tls_key.c tests/lib/test_util.h
tests_unit_check_tls_key_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(OPENSSL_CFLAGS) \
	$(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_tls_key_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
EXTRA_DIST += tests/unit/data/tls_vectors.py

# Every public header must compile alone (one translation unit each, the
# header first) as strict C99 and as C11, and all of them together
# (headers_all.c).  The program only has to build and run; a header that
# needs something it does not include breaks it.  -Werror whatever configure
# was told: a prototype naming a struct no header declared is only a warning.
HEADER_CHECK_SOURCES = \
	tests/unit/check_headers.c \
	tests/unit/headers_all.c \
	tests/unit/headers_nvmefs.c \
	tests/unit/headers_error.c \
	tests/unit/headers_transport.c \
	tests/unit/headers_connect_opts.c \
	tests/unit/headers_ctrl.c \
	tests/unit/headers_identify.c \
	tests/unit/headers_discovery.c \
	tests/unit/headers_state.c \
	tests/unit/headers_io.c \
	tests/unit/headers_mr.c \
	tests/unit/headers_subsys.c \
	tests/unit/headers_wire.c \
	tests/unit/headers_wire_auth.c \
	tests/unit/headers_wire_rdma.c \
	tests/unit/headers_wire_tcp.c
HEADER_CHECK_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) -pedantic-errors -Werror
tests_unit_check_headers_c99_SOURCES = $(HEADER_CHECK_SOURCES)
tests_unit_check_headers_c99_CFLAGS = $(HEADER_CHECK_CFLAGS) -std=c99
tests_unit_check_headers_c11_SOURCES = $(HEADER_CHECK_SOURCES)
tests_unit_check_headers_c11_CFLAGS = $(HEADER_CHECK_CFLAGS) -std=c11

# ---------------------------------------------------------------------------
# The unit tests once more, library included, under ASan and UBSan: every
# `make check` runs them, whatever configure was told (but
# --disable-sanitizer-tests), so memory errors in the parsers of
# target-supplied bytes cannot slip through a plain build.
# ---------------------------------------------------------------------------
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# Every ASan+UBSan and TSan program: built and run where configure's --enable-sanitizer-tests (the
# default) holds, at the end of this file. make distcheck says --disable-sanitizer-tests: the same
# sources built with other flags prove nothing more of the tarball, and this tree's make check has
# run them.
SAN_UNIT_TESTS =
src_lib_libnvmefs_san_a_SOURCES = $(NVMEFS_LIB_SOURCES)
src_lib_libnvmefs_san_a_CFLAGS = $(NVMEFS_LIB_CFLAGS) $(SAN_FLAGS)
LIBNVMEFS_SAN_LDADD = src/lib/libnvmefs-san.a $(NVMEFS_LIB_LIBS)
# A program that brings a transport table of its own (tests/lib/fake_table.c), or reaches none,
# takes no RDMA object out of the archive, so it links without the RDMA libraries.
LIBNVMEFS_SAN_CORE_LDADD = src/lib/libnvmefs-san.a $(NVMEFS_CORE_LIBS)

UNIT_TESTS = \
	tests/unit/check_wire \
	tests/unit/check_auth_crypto \
	tests/unit/check_headers_c99 \
	tests/unit/check_headers_c11 \
	tests/unit/check_tls_key
SAN_UNIT_TESTS += tests/unit/san/check_wire tests/unit/san/check_auth_crypto \
	tests/unit/san/check_tls_key
tests_unit_san_check_wire_SOURCES = $(tests_unit_check_wire_SOURCES)
tests_unit_san_check_wire_CFLAGS = $(tests_unit_check_wire_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_wire_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_wire_LDADD = $(LIBNVMEFS_SAN_CORE_LDADD) $(CHECK_LIBS)
tests_unit_san_check_auth_crypto_SOURCES = $(tests_unit_check_auth_crypto_SOURCES)
tests_unit_san_check_auth_crypto_CFLAGS = $(tests_unit_check_auth_crypto_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_auth_crypto_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_auth_crypto_LDADD = $(LIBNVMEFS_SAN_CORE_LDADD) $(CHECK_LIBS)
tests_unit_san_check_tls_key_SOURCES = $(tests_unit_check_tls_key_SOURCES)
tests_unit_san_check_tls_key_CFLAGS = $(tests_unit_check_tls_key_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_tls_key_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_tls_key_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)

# ---------------------------------------------------------------------------
# The command's parts (src/cli, src/export) on their own
# ---------------------------------------------------------------------------
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

OUTPUT_TEST_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS) \
	-DTEST_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'

check_PROGRAMS += tests/unit/check_output
UNIT_TESTS += tests/unit/check_output
SAN_UNIT_TESTS += tests/unit/san/check_output

tests_unit_check_output_SOURCES = tests/unit/check_output.c $(CLI_OUTPUT_SOURCES)
tests_unit_check_output_CFLAGS = $(OUTPUT_TEST_CFLAGS)
tests_unit_check_output_LDADD = $(LIBNVME_LIBS) $(CHECK_LIBS)

tests_unit_san_check_output_SOURCES = $(tests_unit_check_output_SOURCES)
tests_unit_san_check_output_CFLAGS = $(OUTPUT_TEST_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_output_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_output_LDADD = $(LIBNVME_LIBS) $(CHECK_LIBS)

# The command-line parsers need nothing but themselves.
# Where gen-tls-key, check-tls-key and the DH-HMAC-CHAP options take a secret from
# (src/cli/secret_src.c): nothing left behind in argv or the environment.
check_PROGRAMS += tests/unit/check_secret_src
UNIT_TESTS += tests/unit/check_secret_src
SAN_UNIT_TESTS += tests/unit/san/check_secret_src
tests_unit_check_secret_src_SOURCES = tests/unit/check_secret_src.c src/cli/secret_src.c \
	src/cli/secret_src.h src/cli/cli.c
tests_unit_check_secret_src_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_secret_src_LDADD = $(CHECK_LIBS)
tests_unit_san_check_secret_src_SOURCES = $(tests_unit_check_secret_src_SOURCES)
tests_unit_san_check_secret_src_CFLAGS = $(tests_unit_check_secret_src_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_secret_src_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_secret_src_LDADD = $(CHECK_LIBS)

check_PROGRAMS += tests/unit/check_parse
UNIT_TESTS += tests/unit/check_parse
SAN_UNIT_TESTS += tests/unit/san/check_parse

tests_unit_check_parse_SOURCES = tests/unit/check_parse.c src/cli/util_parse.c src/cli/util_parse.h
tests_unit_check_parse_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_parse_LDADD = $(CHECK_LIBS)

tests_unit_san_check_parse_SOURCES = $(tests_unit_check_parse_SOURCES)
tests_unit_san_check_parse_CFLAGS = $(tests_unit_check_parse_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_parse_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_parse_LDADD = $(CHECK_LIBS)

# The layout perf chooses where its command line leaves it open.
check_PROGRAMS += tests/unit/check_perf_layout
UNIT_TESTS += tests/unit/check_perf_layout
SAN_UNIT_TESTS += tests/unit/san/check_perf_layout

tests_unit_check_perf_layout_SOURCES = tests/unit/check_perf_layout.c src/cli/perf_layout.c \
	src/cli/perf_layout.h
tests_unit_check_perf_layout_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_perf_layout_LDADD = $(CHECK_LIBS)

tests_unit_san_check_perf_layout_SOURCES = $(tests_unit_check_perf_layout_SOURCES)
tests_unit_san_check_perf_layout_CFLAGS = $(tests_unit_check_perf_layout_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_perf_layout_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_perf_layout_LDADD = $(CHECK_LIBS)

# The mount's parked requests (src/export/parking.c), without FUSE.
check_PROGRAMS += tests/unit/check_parking
UNIT_TESTS += tests/unit/check_parking
SAN_UNIT_TESTS += tests/unit/san/check_parking

tests_unit_check_parking_SOURCES = tests/unit/check_parking.c src/export/parking.c src/export/parking.h
tests_unit_check_parking_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_parking_LDADD = $(CHECK_LIBS)

tests_unit_san_check_parking_SOURCES = $(tests_unit_check_parking_SOURCES)
tests_unit_san_check_parking_CFLAGS = $(tests_unit_check_parking_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_parking_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_parking_LDADD = $(CHECK_LIBS)

# nvmefs list's findings, from a fake mountinfo and fake mounts in a temporary directory.
check_PROGRAMS += tests/unit/check_list
UNIT_TESTS += tests/unit/check_list
SAN_UNIT_TESTS += tests/unit/san/check_list

tests_unit_check_list_SOURCES = tests/unit/check_list.c $(LIST_SOURCES)
tests_unit_check_list_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_list_LDADD = $(JSONC_LIBS) $(CHECK_LIBS)

tests_unit_san_check_list_SOURCES = $(tests_unit_check_list_SOURCES)
tests_unit_san_check_list_CFLAGS = $(tests_unit_check_list_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_list_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_list_LDADD = $(JSONC_LIBS) $(CHECK_LIBS)

# ---------------------------------------------------------------------------
# The library with a scripted transport
# ---------------------------------------------------------------------------
# Each program links the library without its transports (LIBNVMEFS_CORE_LDADD) and with the
# scripted ones of tests/lib/fake_table.c, so neither libibverbs nor librdmacm: the tests plug
# fake_ops in through nvmefs_ctrl_connect_with(), or reach the table's by name.
# tests/check-neutral-links fails if one of them needs an RDMA library.
UNIT_FAKE_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
UNIT_FAKE_LDADD = $(LIBNVMEFS_CORE_LDADD) $(CHECK_LIBS)
UNIT_FAKE_SAN_LDADD = $(LIBNVMEFS_SAN_CORE_LDADD) $(CHECK_LIBS)

FAKE_UNIT_TESTS = \
	tests/unit/check_auth \
	tests/unit/check_connect_opts \
	tests/unit/check_ctrl \
	tests/unit/check_discovery \
	tests/unit/check_events \
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
# check_ctrl.c records the pauses the library asks for (its CSTS polls' backoff).
tests_unit_check_ctrl_LDFLAGS = -Wl,--wrap=nanosleep

tests_unit_check_discovery_SOURCES = tests/unit/check_discovery.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_discovery_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_discovery_LDADD = $(UNIT_FAKE_LDADD)

tests_unit_check_events_SOURCES = tests/unit/check_events.c $(FAKE_TRANSPORT_SOURCES)
tests_unit_check_events_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_events_LDADD = $(UNIT_FAKE_LDADD)

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
	tests/unit/san/check_mpath \
	tests/unit/san/check_queue
SAN_UNIT_TESTS += $(SAN_FAKE_UNIT_TESTS)

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
tests_unit_san_check_ctrl_LDFLAGS = $(SAN_FLAGS) $(tests_unit_check_ctrl_LDFLAGS)
tests_unit_san_check_ctrl_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_discovery_SOURCES = $(tests_unit_check_discovery_SOURCES)
tests_unit_san_check_discovery_CFLAGS = $(tests_unit_check_discovery_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_discovery_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_discovery_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_events_SOURCES = $(tests_unit_check_events_SOURCES)
tests_unit_san_check_events_CFLAGS = $(tests_unit_check_events_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_events_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_events_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_mpath_SOURCES = $(tests_unit_check_mpath_SOURCES)
tests_unit_san_check_mpath_CFLAGS = $(tests_unit_check_mpath_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_mpath_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_mpath_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_san_check_queue_SOURCES = $(tests_unit_check_queue_SOURCES)
tests_unit_san_check_queue_CFLAGS = $(tests_unit_check_queue_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_queue_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_queue_LDADD = $(UNIT_FAKE_SAN_LDADD)

# The library's own transport table, the one program here that links RDMA's libraries with it.
check_PROGRAMS += tests/unit/check_transport_table
UNIT_TESTS += tests/unit/check_transport_table
SAN_UNIT_TESTS += tests/unit/san/check_transport_table
tests_unit_check_transport_table_SOURCES = tests/unit/check_transport_table.c tests/lib/test_util.h
tests_unit_check_transport_table_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) \
	$(TESTS_LIB_CFLAGS)
tests_unit_check_transport_table_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
tests_unit_san_check_transport_table_SOURCES = $(tests_unit_check_transport_table_SOURCES)
tests_unit_san_check_transport_table_CFLAGS = $(tests_unit_check_transport_table_CFLAGS) \
	$(SAN_FLAGS)
tests_unit_san_check_transport_table_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_transport_table_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)

# Every program linked with tests/lib's transport table needs no RDMA library;
# check_transport_table, which links the library's, shows that the check sees one.
UNIT_TESTS += tests/check-neutral-links
EXTRA_DIST += tests/check-neutral-links

# The registry of registered memory under threads: plain, ASan, and TSan,
# which needs the library built for it too.
TSAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer
# Only transport-neutral programs run under TSan: the library without its transports.
src_lib_libnvmefs_tsan_a_SOURCES = $(NVMEFS_CORE_SOURCES)
src_lib_libnvmefs_tsan_a_CFLAGS = $(NVMEFS_CORE_CFLAGS) $(TSAN_FLAGS)
check_PROGRAMS += tests/unit/check_mr
UNIT_TESTS += tests/unit/check_mr
SAN_UNIT_TESTS += tests/unit/san/check_mr tests/unit/tsan/check_mr
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
TSAN_LDADD = src/lib/libnvmefs-tsan.a $(NVMEFS_CORE_LIBS) $(CHECK_LIBS)
tests_unit_tsan_check_mr_LDADD = $(TSAN_LDADD)

# The I/O path, one program per source file as SPDK's test/unit has it (check_io: io.c with
# io_pool.c and io_sync.c; check_io_limits and check_io_outage: io_queues.c's limits and
# io_poll.c's outages, apart for their size), over the scripted transport and the fixture they
# share (io_fixture.c); plain and ASan+UBSan.
IO_FIXTURE_SOURCES = tests/unit/io_fixture.c tests/unit/io_fixture.h $(FAKE_TRANSPORT_SOURCES)
IO_UNIT_TESTS = \
	tests/unit/check_io \
	tests/unit/check_io_cmd \
	tests/unit/check_io_queues \
	tests/unit/check_io_limits \
	tests/unit/check_io_poll \
	tests/unit/check_io_outage \
	tests/unit/check_io_forward \
	tests/unit/check_io_retry \
	tests/unit/check_namespaces \
	tests/unit/check_rdma_sgl
check_PROGRAMS += $(IO_UNIT_TESTS)
UNIT_TESTS += $(IO_UNIT_TESTS)
SAN_UNIT_TESTS += \
	tests/unit/san/check_io \
	tests/unit/san/check_io_cmd \
	tests/unit/san/check_io_queues \
	tests/unit/san/check_io_limits \
	tests/unit/san/check_io_poll \
	tests/unit/san/check_io_outage \
	tests/unit/san/check_io_forward \
	tests/unit/san/check_io_retry \
	tests/unit/san/check_namespaces \
	tests/unit/san/check_rdma_sgl

tests_unit_check_io_SOURCES = tests/unit/check_io.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_SOURCES = $(tests_unit_check_io_SOURCES)
tests_unit_san_check_io_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_cmd_SOURCES = tests/unit/check_io_cmd.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_cmd_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_cmd_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_cmd_SOURCES = $(tests_unit_check_io_cmd_SOURCES)
tests_unit_san_check_io_cmd_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_cmd_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_cmd_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_queues_SOURCES = tests/unit/check_io_queues.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_queues_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_queues_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_queues_SOURCES = $(tests_unit_check_io_queues_SOURCES)
tests_unit_san_check_io_queues_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_queues_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_queues_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_limits_SOURCES = tests/unit/check_io_limits.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_limits_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_limits_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_limits_SOURCES = $(tests_unit_check_io_limits_SOURCES)
tests_unit_san_check_io_limits_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_limits_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_limits_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_poll_SOURCES = tests/unit/check_io_poll.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_poll_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_poll_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_poll_SOURCES = $(tests_unit_check_io_poll_SOURCES)
tests_unit_san_check_io_poll_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_poll_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_poll_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_outage_SOURCES = tests/unit/check_io_outage.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_outage_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_outage_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_outage_SOURCES = $(tests_unit_check_io_outage_SOURCES)
tests_unit_san_check_io_outage_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_outage_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_outage_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_forward_SOURCES = tests/unit/check_io_forward.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_forward_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_forward_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_forward_SOURCES = $(tests_unit_check_io_forward_SOURCES)
tests_unit_san_check_io_forward_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_forward_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_forward_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_io_retry_SOURCES = tests/unit/check_io_retry.c $(IO_FIXTURE_SOURCES)
tests_unit_check_io_retry_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_io_retry_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_io_retry_SOURCES = $(tests_unit_check_io_retry_SOURCES)
tests_unit_san_check_io_retry_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_io_retry_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_io_retry_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_namespaces_SOURCES = tests/unit/check_namespaces.c $(IO_FIXTURE_SOURCES)
tests_unit_check_namespaces_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_namespaces_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_namespaces_SOURCES = $(tests_unit_check_namespaces_SOURCES)
tests_unit_san_check_namespaces_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_namespaces_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_namespaces_LDADD = $(UNIT_FAKE_SAN_LDADD)

tests_unit_check_rdma_sgl_SOURCES = tests/unit/check_rdma_sgl.c $(IO_FIXTURE_SOURCES)
tests_unit_check_rdma_sgl_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_rdma_sgl_LDADD = $(UNIT_FAKE_LDADD)
tests_unit_san_check_rdma_sgl_SOURCES = $(tests_unit_check_rdma_sgl_SOURCES)
tests_unit_san_check_rdma_sgl_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_rdma_sgl_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_rdma_sgl_LDADD = $(UNIT_FAKE_SAN_LDADD)

# check_namespaces' cases of threads sharing a controller's state (its "races"), under TSan.
SAN_UNIT_TESTS += tests/unit/tsan/check_namespaces
tests_unit_tsan_check_namespaces_SOURCES = $(tests_unit_check_namespaces_SOURCES)
tests_unit_tsan_check_namespaces_CFLAGS = $(UNIT_FAKE_CFLAGS) $(TSAN_FLAGS)
tests_unit_tsan_check_namespaces_LDFLAGS = $(TSAN_FLAGS)
tests_unit_tsan_check_namespaces_LDADD = $(TSAN_LDADD)

# The export engine (src/export) without FUSE, over the library and the
# scripted transport: plain, ASan, and TSan (its worker is a thread).
ENGINE_UNIT_SOURCES = tests/unit/check_engine.c tests/unit/check_engine_post.c \
	tests/unit/check_engine_outage.c tests/unit/check_engine_spin.c tests/unit/engine_harness.c \
	tests/unit/engine_harness.h \
	$(FAKE_TRANSPORT_SOURCES) \
	src/export/engine.h src/export/export_priv.h src/export/requests.c src/export/worker.c \
	src/export/post.c src/fuse/loop.c src/fuse/loop.h \
	src/export/parking.c src/export/parking.h src/export/log.c src/export/stats.c \
	src/common/histogram.c src/common/histogram.h src/common/json.c src/common/json.h \
	src/common/status.c src/common/status.h src/common/rkeys_json.c src/common/rkeys_json.h
# check_engine_outage.c counts the engine's asks of "held?" outside submit; check_engine_spin.c
# answers for a stand-in queue.
ENGINE_WRAP = -Wl,--wrap=nvmefs_mpq_ns_held -Wl,--wrap=nvmefs_mpq_inflight -Wl,--wrap=nvmefs_mpq_arm \
	-Wl,--wrap=nvmefs_mpq_poll -Wl,--wrap=nvmefs_mpq_wait_ms
check_PROGRAMS += tests/unit/check_engine
UNIT_TESTS += tests/unit/check_engine
SAN_UNIT_TESTS += tests/unit/san/check_engine tests/unit/tsan/check_engine
tests_unit_check_engine_SOURCES = $(ENGINE_UNIT_SOURCES)
tests_unit_check_engine_CFLAGS = $(UNIT_FAKE_CFLAGS)
tests_unit_check_engine_LDFLAGS = $(ENGINE_WRAP)
tests_unit_check_engine_LDADD = $(UNIT_FAKE_LDADD) -lm
tests_unit_san_check_engine_SOURCES = $(ENGINE_UNIT_SOURCES)
tests_unit_san_check_engine_CFLAGS = $(UNIT_FAKE_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_engine_LDFLAGS = $(SAN_FLAGS) $(ENGINE_WRAP)
tests_unit_san_check_engine_LDADD = $(UNIT_FAKE_SAN_LDADD) -lm
tests_unit_tsan_check_engine_SOURCES = $(ENGINE_UNIT_SOURCES)
tests_unit_tsan_check_engine_CFLAGS = $(UNIT_FAKE_CFLAGS) $(TSAN_FLAGS)
tests_unit_tsan_check_engine_LDFLAGS = $(TSAN_FLAGS) $(ENGINE_WRAP)
tests_unit_tsan_check_engine_LDADD = $(TSAN_LDADD) -lm

# Which discovery log records --all-paths connects (src/cli/paths_log.c, issue #27), and
# how --path is read (src/cli/paths.c, with the CLI's option helpers it uses).
check_PROGRAMS += tests/unit/check_paths
UNIT_TESTS += tests/unit/check_paths
SAN_UNIT_TESTS += tests/unit/san/check_paths

tests_unit_check_paths_SOURCES = tests/unit/check_paths.c src/cli/paths_log.c src/cli/paths_log.h \
	src/cli/paths.c src/cli/paths.h src/cli/cli.c src/cli/opts_connect.c src/cli/secret_src.c \
	src/cli/opts_config.c src/cli/util_parse.c src/cli/output.c src/common/json.c
tests_unit_check_paths_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_paths_LDADD = $(LIBNVMEFS_LDADD) $(LIBNVME_LIBS) $(CHECK_LIBS)

tests_unit_san_check_paths_SOURCES = $(tests_unit_check_paths_SOURCES)
tests_unit_san_check_paths_CFLAGS = $(tests_unit_check_paths_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_paths_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_paths_LDADD = $(LIBNVMEFS_SAN_LDADD) $(LIBNVME_LIBS) $(CHECK_LIBS)

# The daemon of mount and ublk add (src/cli/daemon.c): what the waiting parent says.
check_PROGRAMS += tests/unit/check_daemon
UNIT_TESTS += tests/unit/check_daemon
SAN_UNIT_TESTS += tests/unit/san/check_daemon
tests_unit_check_daemon_SOURCES = tests/unit/check_daemon.c src/cli/daemon.c src/cli/daemon.h \
	src/cli/paths_log.c src/cli/paths.c src/cli/cli.c src/cli/opts_connect.c src/cli/secret_src.c \
	src/cli/opts_config.c src/cli/util_parse.c src/cli/output.c src/common/json.c \
	src/export/log.c
tests_unit_check_daemon_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_daemon_LDADD = $(LIBNVMEFS_LDADD) $(LIBNVME_LIBS) $(CHECK_LIBS)
tests_unit_san_check_daemon_SOURCES = $(tests_unit_check_daemon_SOURCES)
tests_unit_san_check_daemon_CFLAGS = $(tests_unit_check_daemon_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_daemon_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_daemon_LDADD = $(LIBNVMEFS_SAN_LDADD) $(LIBNVME_LIBS) $(CHECK_LIBS)

# The NVMe/TCP transport against a scripted target on a loopback socket.
check_PROGRAMS += tests/unit/check_tcp tests/unit/check_tcp_errors
UNIT_TESTS += tests/unit/check_tcp tests/unit/check_tcp_errors
SAN_UNIT_TESTS += tests/unit/san/check_tcp tests/unit/san/check_tcp_errors
TCP_PEER_SOURCES = tests/unit/tcp_peer.c tests/unit/tcp_peer.h tests/lib/test_util.h
TCP_UNIT_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
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

# The TLS stream against a scripted OpenSSL server on a loopback socket (issue #38 item 5).
check_PROGRAMS += tests/unit/check_tcp_tls
UNIT_TESTS += tests/unit/check_tcp_tls
SAN_UNIT_TESTS += tests/unit/san/check_tcp_tls
tests_unit_check_tcp_tls_SOURCES = tests/unit/check_tcp_tls.c $(TCP_PEER_SOURCES)
tests_unit_check_tcp_tls_CFLAGS = $(TCP_UNIT_CFLAGS) $(OPENSSL_CFLAGS)
tests_unit_check_tcp_tls_LDADD = $(LIBNVMEFS_LDADD) $(OPENSSL_LIBS) $(CHECK_LIBS)
tests_unit_san_check_tcp_tls_SOURCES = $(tests_unit_check_tcp_tls_SOURCES)
tests_unit_san_check_tcp_tls_CFLAGS = $(TCP_UNIT_CFLAGS) $(OPENSSL_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_tcp_tls_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_tcp_tls_LDADD = $(LIBNVMEFS_SAN_LDADD) $(OPENSSL_LIBS) $(CHECK_LIBS)

# What a mount pins, which its locked-memory check counts (src/fuse/memlock.c, issue 34): RDMA's
# registrations and FUSE over io_uring's payloads, nothing over TCP.
check_PROGRAMS += tests/unit/check_memlock
UNIT_TESTS += tests/unit/check_memlock
SAN_UNIT_TESTS += tests/unit/san/check_memlock
tests_unit_check_memlock_SOURCES = tests/unit/check_memlock.c src/fuse/memlock.c src/fuse/fs.h \
	src/fuse/ring_msg.h src/fuse/ring_uapi.h \
	src/export/limits.c src/export/log.c src/export/engine.h
tests_unit_check_memlock_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(FUSE3_CFLAGS) $(CHECK_CFLAGS) \
	$(TESTS_LIB_CFLAGS)
tests_unit_check_memlock_LDADD = $(LIBNVMEFS_LDADD) $(CHECK_LIBS)
tests_unit_san_check_memlock_SOURCES = $(tests_unit_check_memlock_SOURCES)
tests_unit_san_check_memlock_CFLAGS = $(tests_unit_check_memlock_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_memlock_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_memlock_LDADD = $(LIBNVMEFS_SAN_LDADD) $(CHECK_LIBS)

# ublk request descriptors, checked before their sectors become offsets (src/ublk/iod.c).
check_PROGRAMS += tests/unit/check_ublk_iod
UNIT_TESTS += tests/unit/check_ublk_iod
SAN_UNIT_TESTS += tests/unit/san/check_ublk_iod
tests_unit_check_ublk_iod_SOURCES = tests/unit/check_ublk_iod.c src/ublk/iod.c src/ublk/iod.h
tests_unit_check_ublk_iod_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_ublk_iod_LDADD = $(CHECK_LIBS)
tests_unit_san_check_ublk_iod_SOURCES = $(tests_unit_check_ublk_iod_SOURCES)
tests_unit_san_check_ublk_iod_CFLAGS = $(tests_unit_check_ublk_iod_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_ublk_iod_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_ublk_iod_LDADD = $(CHECK_LIBS)

# A ublk device's record, which list, del and recover read (src/ublk/record_fmt.c).
check_PROGRAMS += tests/unit/check_ublk_record
UNIT_TESTS += tests/unit/check_ublk_record
SAN_UNIT_TESTS += tests/unit/san/check_ublk_record
tests_unit_check_ublk_record_SOURCES = tests/unit/check_ublk_record.c src/ublk/record_fmt.c \
	src/ublk/devices.h
tests_unit_check_ublk_record_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_ublk_record_LDADD = $(CHECK_LIBS)
tests_unit_san_check_ublk_record_SOURCES = $(tests_unit_check_ublk_record_SOURCES)
tests_unit_san_check_ublk_record_CFLAGS = $(tests_unit_check_ublk_record_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_ublk_record_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_ublk_record_LDADD = $(CHECK_LIBS)

# FUSE over io_uring's messages as the workers serve the ring (src/fuse/ring_msg.c, issue 37
# item 0): requests laid out for libfuse after their sizes are checked, replies committed into
# their entries, INIT's reply asking for the ring, the bound on entries held requests add.
check_PROGRAMS += tests/unit/check_fuse_ring
UNIT_TESTS += tests/unit/check_fuse_ring
SAN_UNIT_TESTS += tests/unit/san/check_fuse_ring
tests_unit_check_fuse_ring_SOURCES = tests/unit/check_fuse_ring.c src/fuse/ring_msg.c \
	src/fuse/ring_msg.h src/fuse/ring_uapi.h src/export/parking.h
tests_unit_check_fuse_ring_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_fuse_ring_LDADD = $(CHECK_LIBS)
tests_unit_san_check_fuse_ring_SOURCES = $(tests_unit_check_fuse_ring_SOURCES)
tests_unit_san_check_fuse_ring_CFLAGS = $(tests_unit_check_fuse_ring_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_fuse_ring_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_fuse_ring_LDADD = $(CHECK_LIBS)

if FIO_ENGINE
# The fio engine (src/fio/engine.c, issue 37 item 2) against stand-ins for libnvmefs and fio:
# what it refuses before a job runs, its option table, and that getevents never sleeps while it
# holds completions fio has not taken.  Built, as the engine, against fio's headers.
check_PROGRAMS += tests/unit/check_fio_engine
UNIT_TESTS += tests/unit/check_fio_engine
SAN_UNIT_TESTS += tests/unit/san/check_fio_engine
tests_unit_check_fio_engine_SOURCES = tests/unit/check_fio_engine.c
tests_unit_check_fio_engine_CPPFLAGS = $(src_fio_fio_nvmefs_la_CPPFLAGS)
tests_unit_check_fio_engine_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(TESTS_LIB_CFLAGS)
tests_unit_check_fio_engine_LDADD = $(CHECK_LIBS)
tests_unit_san_check_fio_engine_SOURCES = $(tests_unit_check_fio_engine_SOURCES)
tests_unit_san_check_fio_engine_CPPFLAGS = $(tests_unit_check_fio_engine_CPPFLAGS)
tests_unit_san_check_fio_engine_CFLAGS = $(tests_unit_check_fio_engine_CFLAGS) $(SAN_FLAGS)
tests_unit_san_check_fio_engine_LDFLAGS = $(SAN_FLAGS)
tests_unit_san_check_fio_engine_LDADD = $(CHECK_LIBS)
endif

if SANITIZER_TESTS
check_LIBRARIES = src/lib/libnvmefs-san.a src/lib/libnvmefs-tsan.a
check_PROGRAMS += $(SAN_UNIT_TESTS)
UNIT_TESTS += $(SAN_UNIT_TESTS)
endif
