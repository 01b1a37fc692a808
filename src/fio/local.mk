# The fio engine, fio-nvmefs.so, included by the top Makefile.am; built only with
# ./configure --with-fio=DIR (contrib/fetch-fio-source), against that fio's headers.
# Paths are from the top.

EXTRA_DIST += src/fio/engine.c man/nvmefs-fio.7

if FIO_ENGINE
# A module fio dlopens by path, not a library: no lib prefix, no version.
pkglib_LTLIBRARIES = src/fio/fio-nvmefs.la
src_fio_fio_nvmefs_la_SOURCES = src/fio/engine.c
# fio's headers are not written for -Wextra: -isystem keeps their warnings out
# of ours; every one of them expects fio's configure results first.
src_fio_fio_nvmefs_la_CPPFLAGS = $(AM_CPPFLAGS) -isystem $(FIO_SRC) \
	-include $(FIO_SRC)/config-host.h
# fio's own symbols (log_err, fio_gettime) come from the fio that loads it.
src_fio_fio_nvmefs_la_LDFLAGS = -module -avoid-version -shared
src_fio_fio_nvmefs_la_LIBADD = src/lib/libnvmefs.la
# Its page is installed with it.
dist_man_MANS += man/nvmefs-fio.7
endif

# libtool's archive is of no use to fio (and, without the engine, not there); without it,
# libtool's uninstall does not know the module, which goes by name.
install-exec-hook:
	rm -f $(DESTDIR)$(pkglibdir)/fio-nvmefs.la
uninstall-hook:
	rm -f $(DESTDIR)$(pkglibdir)/fio-nvmefs.so
