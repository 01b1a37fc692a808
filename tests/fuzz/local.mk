# libFuzzer harnesses of what a target or the kernel hands us, built with
# clang when configured with --enable-fuzz.  `make check` runs each for
# FUZZ_SECONDS (10 by default); `make fuzz` for longer (FUZZ_SECONDS, 600 by
# default, each), keeping what it finds in tests/fuzz/artifacts/.

FUZZ_BINARIES = tests/fuzz/fuzz_output tests/fuzz/fuzz_wire tests/fuzz/fuzz_queue \
	tests/fuzz/fuzz_discovery tests/fuzz/fuzz_fuse tests/fuzz/fuzz_tcp tests/fuzz/fuzz_tcp_tls
CLEANFILES = $(FUZZ_BINARIES)
EXTRA_DIST += \
	tests/fuzz/check-fuzz \
	tests/fuzz/fuzz_output.c \
	tests/fuzz/fuzz_wire.c \
	tests/fuzz/fuzz_queue.c \
	tests/fuzz/fuzz_discovery.c \
	tests/fuzz/fuzz_fuse.c \
	tests/fuzz/fuzz_tcp.c \
	tests/fuzz/tls_pipe.c \
	tests/fuzz/tls_pipe.h \
	tests/fuzz/corpus

if FUZZ
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
	-I$(top_builddir) -I$(top_srcdir)/include -I$(top_srcdir)/src/lib -pthread \
	$(LIBNVME_CFLAGS) $(IBVERBS_CFLAGS) $(RDMACM_CFLAGS) $(OPENSSL_CFLAGS)
# The library's C sources (its headers are in NVMEFS_LIB_SOURCES too).
FUZZ_LIB_C = $(filter %.c,$(NVMEFS_LIB_SOURCES))
FUZZ_LIB_LIBS = $(LIBNVME_LIBS) $(RDMACM_LIBS) $(IBVERBS_LIBS) $(OPENSSL_LIBS) $(ISAL_LIBS) -lpthread

tests/fuzz/fuzz_output: tests/fuzz/fuzz_output.c src/cli/output.c src/common/json.c \
		src/common/text.c
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(LIBNVME_LIBS)
tests/fuzz/fuzz_wire: tests/fuzz/fuzz_wire.c $(FUZZ_LIB_C)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(FUZZ_LIB_LIBS)
tests/fuzz/fuzz_queue: tests/fuzz/fuzz_queue.c $(FUZZ_LIB_C)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(FUZZ_LIB_LIBS)
tests/fuzz/fuzz_discovery: tests/fuzz/fuzz_discovery.c $(FUZZ_LIB_C)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(FUZZ_LIB_LIBS)
tests/fuzz/fuzz_tcp: tests/fuzz/fuzz_tcp.c $(FUZZ_LIB_C)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $^ $(FUZZ_LIB_LIBS)
# fuzz_tcp's bytes as the plaintext of TLS records after a real handshake, through tcp_tls.c.
tests/fuzz/fuzz_tcp_tls: tests/fuzz/fuzz_tcp.c tests/fuzz/tls_pipe.c tests/fuzz/tls_pipe.h $(FUZZ_LIB_C)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_TLS -o $@ $(filter %.c,$^) $(FUZZ_LIB_LIBS)
# The FUSE handlers without libfuse (the harness replies) nor serve.c (the session),
# over the shared scripted target (tests/lib) without Check: not its transport table,
# the library's stays.
FUZZ_FAKE = tests/lib/fake_transport.c tests/lib/fake_script.c tests/lib/fake_exec.c
tests/fuzz/fuzz_fuse: tests/fuzz/fuzz_fuse.c $(FUZZ_FAKE) tests/lib/fake_transport.h \
		tests/lib/fake_priv.h src/fuse/fs_ops.c src/fuse/adapter.c src/fuse/ring.c src/export/log.c src/export/stats.c src/export/requests.c \
		src/export/limits.c src/export/worker.c src/export/post.c \
		src/export/parking.c \
		src/fuse/namespaces.c src/export/ns_info.c src/common/histogram.c src/common/json.c src/common/status.c src/common/rkeys_json.c $(FUZZ_LIB_C)
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUSE3_CFLAGS) -I$(top_srcdir)/tests/lib -DFAKE_NO_CHECK \
		-o $@ $(filter %.c,$^) $(FUZZ_LIB_LIBS) -lm

check_SCRIPTS = $(FUZZ_BINARIES)
FUZZ_TESTS = tests/fuzz/check-fuzz

fuzz: $(FUZZ_BINARIES)
	top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) \
		FUZZ_SECONDS=$${FUZZ_SECONDS:-600} $(top_srcdir)/tests/fuzz/check-fuzz
else
FUZZ_TESTS =
fuzz:
	@echo "make fuzz: configure with --enable-fuzz (it needs clang) first" >&2; exit 1
endif
.PHONY: fuzz
