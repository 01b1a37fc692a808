# Integration tests and their helper program, included by the top Makefile.am.
# Paths are from the top.  The tests run inside the testbed (run-in-testbed).

# Drives the library's I/O API for the tests; built by 'make check', not installed.
check_PROGRAMS += tests/integration/io-tool
tests_integration_io_tool_SOURCES = tests/integration/io-tool.c src/cli/util_parse.c src/cli/util_parse.h
tests_integration_io_tool_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS)
tests_integration_io_tool_LDADD = $(LIBNVMEFS_LDADD)

# Preloaded by test-ublk.sh: a ublk daemon whose second queue cannot be mapped.  A module, so
# libtool builds the shared object (.libs/fail-queue-map.so) that LD_PRELOAD takes.
check_LTLIBRARIES = tests/integration/fail-queue-map.la
tests_integration_fail_queue_map_la_SOURCES = tests/integration/fail-queue-map.c
tests_integration_fail_queue_map_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_integration_fail_queue_map_la_LIBADD = -ldl

# The API examples (issue #15), built against the library as a program of the caller's would be.
check_PROGRAMS += contrib/examples/discover contrib/examples/readwrite
contrib_examples_discover_SOURCES = contrib/examples/discover.c
contrib_examples_discover_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS)
contrib_examples_discover_LDADD = src/lib/libnvmefs.la
contrib_examples_readwrite_SOURCES = contrib/examples/readwrite.c
contrib_examples_readwrite_CFLAGS = $(AM_CFLAGS) $(LIBNVME_CFLAGS)
contrib_examples_readwrite_LDADD = src/lib/libnvmefs.la

INTEGRATION_TESTS += \
	tests/integration/test-examples.sh \
	tests/integration/test-io-crosscheck.sh \
	tests/integration/test-perf-verify.sh \
	tests/integration/test-rkey-per-io.sh \
	tests/integration/test-zeroes-dealloc.sh \
	tests/integration/test-ns-disable.sh \
	tests/integration/test-connect-cycles.sh \
	tests/integration/test-discover-persistent.sh

# Issue #37 item 1: namespaces as ublk block devices; a killed daemon's devices taken over by a new
# one (ublk's user recovery), on the 7.x kernel too (k7/test-ublk-recovery.k7).
INTEGRATION_TESTS += \
	tests/integration/test-ublk.sh \
	tests/integration/test-ublk-recovery.sh

# Hardening (issue #12): what a 32-bit count would cut short, on a namespace of over 2^32 blocks.
INTEGRATION_TESTS += \
	tests/integration/test-mount-zero-huge.sh

# Security (issue #13): subsystems that require DH-HMAC-CHAP (the testbed's --dhchap-* options).
INTEGRATION_TESTS += \
	tests/integration/test-auth-required.sh \
	tests/integration/test-auth.sh

# Issue #38: NVMe/TCP with TLS 1.3 and a pre-shared key, beside the kernel initiator over TLS (the
# testbed's --tls; TCP only, whatever the run's transport); an 8 s port drop over TLS, beside it;
# DH-HMAC-CHAP and TLS on one connect; a SHA-384 key against the testbed's tlshd; a rootless
# container mounting over TLS; secure concatenation (refused by 6.12's target here, beside the
# kernel initiator on the 7.x one: k7/test-tls-concat.k7).
INTEGRATION_TESTS += \
	tests/integration/test-tls-concat.sh \
	tests/integration/test-tls.sh \
	tests/integration/test-tls-auth.sh \
	tests/integration/test-tls-sha384.sh \
	tests/integration/test-container-tls.sh \
	tests/integration/test-outage-tls-vs-kernel.sh

# Issue #24: a controller secret makes the host authenticate a controller that does not ask; an
# NQN with a comma in the mount's fsname.
INTEGRATION_TESTS += \
	tests/integration/test-auth-unasked.sh \
	tests/integration/test-mount-nqn-comma.sh

# Issue #26: direct writes to one file overlap with libfuse >= 3.15 (and not before); -o io_uring.
INTEGRATION_TESTS += \
	tests/integration/test-mount-parallel-writes.sh

# Controller reconnect (issue #11): outages made on the target and the link under load, one boot
# each (test-outage-vs-kernel.sh measures the kernel initiator beside nvmefs).
INTEGRATION_TESTS += \
	tests/integration/test-outage-port.sh \
	tests/integration/test-outage-link.sh \
	tests/integration/test-outage-restart.sh \
	tests/integration/test-outage-timeouts.sh \
	tests/integration/test-outage-ns-replaced.sh \
	tests/integration/test-outage-loop.sh \
	tests/integration/test-outage-fewer-queues.sh \
	tests/integration/test-outage-vs-kernel.sh \
	tests/integration/test-outage-busy.sh \
	tests/integration/test-outage-answers.sh \
	tests/integration/test-outage-stop.sh

# Issue #34: a write resent after a TCP partition must not be overtaken by the old connection's
# retransmission once the partition heals (TCP only, whatever the run's transport).
INTEGRATION_TESTS += \
	tests/integration/test-outage-tcp-stale-write.sh

# Multipath with ANA (issue #14): the testbed's two ports as two paths.
INTEGRATION_TESTS += \
	tests/integration/test-multipath-perf.sh \
	tests/integration/test-multipath-mount.sh \
	tests/integration/test-multipath-held-ns.sh

# Issue #27: paths over RDMA and TCP to one subsystem (--path tcp:ADDR:PORT), whatever the run's
# transport: one boot in the main run, not a .tcp one.
INTEGRATION_TESTS += \
	tests/integration/test-multipath-mixed.sh

# JSON schemas (issue #15): every -o json output and the mount's info and stats, validated against
# doc/json (doc/JSON.md) with python3-jsonschema.
INTEGRATION_TESTS += \
	tests/integration/test-json-schema.sh
EXTRA_DIST += \
	doc/JSON.md \
	doc/json/discover.schema.json \
	doc/json/identify-ctrl.schema.json \
	doc/json/identify-ns.schema.json \
	doc/json/identify-list-ns.schema.json \
	doc/json/perf.schema.json \
	doc/json/mount-info.schema.json \
	doc/json/mount-stats.schema.json \
	doc/json/list.schema.json \
	doc/json/ublk-add.schema.json \
	doc/json/ublk-list.schema.json

# Shipping (issue #15): the Debian packages that tests/check-dist builds, installed in the guest.
INTEGRATION_TESTS += \
	tests/integration/test-packages.sh
tests/integration/test-packages.log: tests/check-dist.log

# Containers (issue #15): nvmefs in rootless crun (an OCI bundle the test builds from the host's
# files) and in rootless and rootful podman, with the recipe of doc/CONTAINERS.md.
INTEGRATION_TESTS += \
	tests/integration/test-container.sh
EXTRA_DIST += \
	doc/CONTAINERS.md \
	contrib/container/Containerfile

# Issue #26: mount tests once more on trixie-backports' newest 7.x kernel (FUSE over io_uring enabled
# in it), each a result of its own: tests/integration/k7/NAME.k7 is a link to
# tests/integration/NAME.sh that make creates, run with NVMEFS_TESTBED_KERNEL=7. This is the list.
KERNEL7_TESTS = \
	tests/integration/k7/test-mount-fio.k7 \
	tests/integration/k7/test-tls-concat.k7 \
	tests/integration/k7/test-ublk-recovery.k7
TEST_EXTENSIONS += .k7
K7_LOG_COMPILER = env NVMEFS_TESTBED_KERNEL=7 $(top_srcdir)/tests/integration/run-in-testbed
$(KERNEL7_TESTS):
	$(AM_V_GEN)$(MKDIR_P) $(@D) && ln -sf $(abs_top_srcdir)/tests/integration/$(@F:.k7=.sh) $@
CLEANFILES += $(KERNEL7_TESTS)

# Issue #27: tests once more over NVMe/TCP (the testbed's nvmet-tcp ports, the kernel's nvme-tcp as
# the reference), each a result of its own: tests/integration/tcp/NAME.tcp is a link to
# tests/integration/NAME.sh that make creates, run with NVMEFS_TEST_TRTYPE=tcp (lib.sh's trtype).
# This is the list.
TCP_TESTS = \
	tests/integration/tcp/test-discover.tcp \
	tests/integration/tcp/test-identify.tcp \
	tests/integration/tcp/test-mount-fio.tcp \
	tests/integration/tcp/test-mount-unaligned.tcp \
	tests/integration/tcp/test-mount-crosscheck.tcp \
	tests/integration/tcp/test-outage-port.tcp \
	tests/integration/tcp/test-outage-link.tcp \
	tests/integration/tcp/test-outage-fewer-queues.tcp \
	tests/integration/tcp/test-auth-required.tcp \
	tests/integration/tcp/test-auth-unasked.tcp \
	tests/integration/tcp/test-container.tcp \
	tests/integration/tcp/test-mount-unprivileged.tcp \
	tests/integration/tcp/test-ublk.tcp \
	tests/integration/tcp/test-outage-tcp-silent-vs-kernel.tcp
# Issue #34: how soon a silent link is noticed, beside nvme-tcp (over TCP only: a .tcp run alone).
EXTRA_DIST += tests/integration/test-outage-tcp-silent-vs-kernel.sh
TEST_EXTENSIONS += .tcp
TCP_LOG_COMPILER = env NVMEFS_TEST_TRTYPE=tcp $(top_srcdir)/tests/integration/run-in-testbed
$(TCP_TESTS):
	$(AM_V_GEN)$(MKDIR_P) $(@D) && ln -sf $(abs_top_srcdir)/tests/integration/$(@F:.tcp=.sh) $@
CLEANFILES += $(TCP_TESTS)

# Issue #37 item 2: fio jobs through the fio engine, over RDMA and TCP; run where the engine is
# built (./configure --with-fio=DIR, as the README's test command does).
EXTRA_DIST += tests/integration/test-fio-engine.sh
if FIO_ENGINE
INTEGRATION_TESTS += tests/integration/test-fio-engine.sh
TCP_TESTS += tests/integration/tcp/test-fio-engine.tcp
endif
