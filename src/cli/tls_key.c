/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nvmefs gen-tls-key and check-tls-key: NVMe/TCP TLS pre-shared keys in
 * their interchange form, as nvme-cli's commands of those names print
 * them.  nvme-cli's options for its kernel keyring are refused with one
 * line: nvmefs keeps no keys in the kernel.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "secret_src.h"
#include "../common/json.h"

/* What a key, its secret or a file of either may hold, with room to spare
 * for a newline and a typo the parser names. */
#define KEY_MAX 256

enum {
	OPT_SECRET_FILE = 0x100,
	OPT_KEYDATA_FILE,
	OPT_KEYRING,
};

/* nvme-cli's options that fill or read its kernel keyring. */
#define KEYRING_LONGOPTS							\
	{ "insert", no_argument, NULL, 'i' },				\
	{ "keyring", required_argument, NULL, OPT_KEYRING },		\
	{ "keytype", required_argument, NULL, 't' },			\
	{ "keyfile", required_argument, NULL, 'f' }

/* @K: "-k, " where -k is --keyring (gen-tls-key; check-tls-key has -k/--key). */
#define KEYRING_HELP(K)							\
	"  -i, --insert, " K "--keyring=KEYRING, -t, --keytype=TYPE, -f, --keyfile=FILE\n" \
	"                            nvme-cli's kernel keyring: refused, nvmefs keeps no\n" \
	"                            keys in the kernel\n"

static int keyring_refused(const char *cmd, int opt)
{
	static const struct { int opt; const char *name; } names[] = {
		{ 'i', "-i/--insert" }, { OPT_KEYRING, "--keyring" },
		{ 'k', "-k/--keyring" }, { 't', "-t/--keytype" }, { 'f', "-f/--keyfile" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].opt == opt)
			return usage_error(cmd, "%s is nvme-cli's, for the kernel keyring; nvmefs keeps "
					   "no keys there, it derives what it needs from the key",
					   names[i].name);
	}
	return EXIT_USAGE;
}

/*
 * What both commands take alike: -o, -h, and nvme-cli's keyring options
 * (refused); any other @opt is a usage error already reported.  *@ret is
 * the status so far; true after -h, when the command is done.
 */
static bool shared_option(const char *cmd, int opt, void (*usage)(void),
			  enum output_format *fmt, int *ret)
{
	switch (opt) {
	case 'o':
		if (output_format_parse(optarg, fmt))
			*ret = usage_error(cmd, "-o/--output-format '%s' is not a format: use 'normal' "
					   "or 'json'", optarg);
		return false;
	case 'h':
		usage();
		*ret = finish_output(cmd, EXIT_OK);
		return true;
	case 'i':
	case 'f':
	case 'k':
	case 't':
	case OPT_KEYRING:
		*ret = keyring_refused(cmd, opt);
		return false;
	default:
		*ret = EXIT_USAGE;
		return false;
	}
}

/* The secret's source: at most one option, else the environment variable. */
struct key_source {
	char *buf;		/* KEY_MAX bytes of secret_page() */
	const char *opt;	/* the option that gave it, or NULL */
};

static int source_once(struct key_source *src, const char *cmd, const char *opt)
{
	if (src->opt)
		return usage_error(cmd, "%s: the key is given twice (first by %s): give it once",
				   opt, src->opt);
	src->opt = opt;
	return EXIT_OK;
}

static int source_arg(struct key_source *src, const char *cmd, const char *opt, char *arg,
		      const char *what)
{
	int ret = source_once(src, cmd, opt);

	return ret ? ret : secret_from_arg(cmd, opt, what, arg, src->buf, KEY_MAX);
}

static int source_file(struct key_source *src, const char *cmd, const char *opt,
		       const char *path, const char *what)
{
	int ret = source_once(src, cmd, opt);

	return ret ? ret : secret_from_file(cmd, opt, what, path, src->buf, KEY_MAX);
}

/* After the options: the environment variable @env where no option gave
 * the key; EXIT_OK with src->opt NULL when neither did. */
static int source_env(struct key_source *src, const char *cmd, const char *env,
		      const char *what)
{
	int found, ret;

	/* An option wins; the variable is wiped all the same. */
	if (src->opt)
		return secret_from_env(cmd, env, what, NULL, 0, &found);
	ret = secret_from_env(cmd, env, what, src->buf, KEY_MAX, &found);
	if (found)
		src->opt = env;
	return ret;
}

/* ------------------------------------------------------------------------ */
/* gen-tls-key                                                             */
/* ------------------------------------------------------------------------ */

#define SECRET_ENV "NVMEFS_TLS_SECRET"

static void gen_usage(void)
{
	printf("Usage: nvmefs gen-tls-key [-m 1|2] [-s HEX | --secret-file=FILE] [-o FMT]\n"
	       "\n"
	       "Print a TLS pre-shared key for NVMe/TCP in its interchange form,\n"
	       "NVMeTLSkey-1:HH:<base64 of the key and its CRC-32>:, as 'nvme gen-tls-key' does:\n"
	       "a random key, or the secret given.\n"
	       "\n"
	       "Options:\n"
	       "  -m, --hmac=HMAC           the hash the key is used with: 1 (SHA-256, a 32-byte\n"
	       "                            key; the default) or 2 (SHA-384, 48 bytes)\n"
	       "  -s, --secret=HEX          the key, in hexadecimal: 64 digits for -m 1, 96 for\n"
	       "                            -m 2; ps shows it\n"
	       "      --secret-file=FILE    the same, read from FILE, which only its owner may\n"
	       "                            read\n"
	       "  -o, --output-format=FMT   output format: normal (as nvme-cli) or json\n"
	       KEYRING_HELP("-k, ")
	       HELP_HELP
	       "\n"
	       "Environment: " SECRET_ENV ", the secret in hexadecimal where neither -s\n"
	       "nor --secret-file gives it.\n"
	       "\n"
	       "Exit status: 0 success, 1 failure, 2 wrong usage.\n");
}

/* @hex, exactly @len bytes of hexadecimal, into @out. */
static int parse_hex(const char *cmd, const char *from, const char *hex, uint8_t *out,
		     size_t len, unsigned int hmac)
{
	size_t n = strlen(hex);

	if (n != 2 * len)
		return usage_error(cmd, "%s: the secret is %zu hexadecimal digits; -m %u needs %zu",
				   from, n, hmac, 2 * len);
	for (size_t i = 0; i < len; i++) {
		char byte[3] = { hex[2 * i], hex[2 * i + 1], '\0' };

		if (!isxdigit((unsigned char)byte[0]) || !isxdigit((unsigned char)byte[1])) {
			explicit_bzero(byte, sizeof(byte));
			return usage_error(cmd, "%s: the secret is not hexadecimal (digit %zu)", from,
					   2 * i + 1);
		}
		out[i] = (uint8_t)strtoul(byte, NULL, 16);
		explicit_bzero(byte, sizeof(byte));
	}
	return EXIT_OK;
}

static int gen_print(const char *cmd, enum output_format fmt, unsigned int hmac, const char *key)
{
	struct json j;

	if (fmt == OUTPUT_JSON) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_uint(&j, "hmac", hmac);
		json_string(&j, "key", key);
		json_object_end(&j);
		putchar('\n');
	} else {
		printf("%s\n", key);
	}
	return finish_output(cmd, EXIT_OK);
}

/* The key's length of each -m: SHA-256's and SHA-384's output. */
static size_t key_len(unsigned int hmac)
{
	return hmac == 2 ? 48 : 32;
}

int cmd_gen_tls_key(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hmac", required_argument, NULL, 'm' },
		{ "secret", required_argument, NULL, 's' },
		{ "secret-file", required_argument, NULL, OPT_SECRET_FILE },
		{ "output-format", required_argument, NULL, 'o' },
		KEYRING_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *what = "a TLS PSK's secret";
	enum output_format fmt = OUTPUT_NORMAL;
	struct key_source src = { secret_page(KEY_MAX + 48 + NVMEFS_TLS_KEY_SIZE), NULL };
	uint8_t *secret = (uint8_t *)src.buf + KEY_MAX;
	char *key = src.buf + KEY_MAX + 48;
	unsigned int hmac = 1;
	uint64_t v = 0;
	int opt, ret = EXIT_OK;

	if (!src.buf) {
		fprintf(stderr, "nvmefs %s: no memory for the key\n", cmd);
		return EXIT_FAIL;
	}
	while (ret == EXIT_OK && (opt = next_option(argc, argv, ":m:s:o:ik:t:f:h", longopts)) != -1) {
		switch (opt) {
		case 'm':
			if (parse_uint(optarg, 1, 2, &v))
				ret = usage_error(cmd, "-m/--hmac '%s' is not 1 (SHA-256) or 2 "
						  "(SHA-384)", optarg);
			hmac = (unsigned int)v;
			break;
		case 's':
			ret = source_arg(&src, cmd, "-s/--secret", optarg, what);
			break;
		case OPT_SECRET_FILE:
			ret = source_file(&src, cmd, "--secret-file", optarg, what);
			break;
		default:
			if (shared_option(cmd, opt, gen_usage, &fmt, &ret))
				goto out;
		}
	}
	if (ret == EXIT_OK)
		ret = source_env(&src, cmd, SECRET_ENV, what);
	if (ret == EXIT_OK && src.opt)
		ret = parse_hex(cmd, src.opt, src.buf, secret, key_len(hmac), hmac);
	if (ret != EXIT_OK)
		goto out;
	if (nvmefs_tls_key_make(hmac, src.opt ? secret : NULL, key_len(hmac), key,
				NVMEFS_TLS_KEY_SIZE)) {
		fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
		ret = EXIT_FAIL;
		goto out;
	}
	ret = gen_print(cmd, fmt, hmac, key);
out:
	secret_page_free(src.buf, KEY_MAX + 48 + NVMEFS_TLS_KEY_SIZE);
	return ret;
}

/* ------------------------------------------------------------------------ */
/* check-tls-key                                                           */
/* ------------------------------------------------------------------------ */

#define KEY_ENV "NVMEFS_TLS_KEY"

static void check_usage(void)
{
	printf("Usage: nvmefs check-tls-key [-d KEY | --keydata-file=FILE]\n"
	       "                            [-c SUBNQN [-n HOSTNQN] [-I 0|1] [-C]] [-o FMT]\n"
	       "\n"
	       "Check a TLS pre-shared key for NVMe/TCP in its interchange form\n"
	       "(NVMeTLSkey-1:HH:...:): its form, length and CRC-32.  With -c, print instead the\n"
	       "PSK identity a connection to SUBNQN presents with it, as 'nvme check-tls-key'\n"
	       "(nvme-cli 2.16) does; without, print what nvme-cli 2.3 prints.\n"
	       "\n"
	       "Options:\n"
	       "  -d, --keydata=KEY         the key; ps shows it\n"
	       "  -k, --key=KEY             the same, by nvme-cli 2.3's name\n"
	       "      --keydata-file=FILE   the same, read from FILE, which only its owner may\n"
	       "                            read\n"
	       "  -c, --subsysnqn=NQN       print the identity of a connection to subsystem NQN\n"
	       "  -n, --hostnqn=NQN         the host NQN of that connection (default:\n"
	       "                            /etc/nvme/hostnqn, else the one generated for this\n"
	       "                            machine, as the other commands take it)\n"
	       "  -I, --identity=VERSION    identity version: 0 (NVMe/TCP 1.0c; the default) or\n"
	       "                            1 (NVMe/TCP 2.0, with the PSK digest)\n"
	       "  -C, --compat              derive as libnvme before 1.16 did (nvme-cli 2.16's\n"
	       "                            --compat), for keys inserted by those versions\n"
	       "  -o, --output-format=FMT   output format: normal (as nvme-cli) or json\n"
	       KEYRING_HELP("")
	       HELP_HELP
	       "\n"
	       "Environment: " KEY_ENV ", the key where neither -d, -k nor --keydata-file\n"
	       "gives it.\n"
	       "\n"
	       "Exit status: 0 the key is valid, 1 failure (an invalid key), 2 wrong usage.\n");
}

struct check_args {
	const char *subnqn;
	const char *hostnqn;
	unsigned int version;
	bool compat;
	enum output_format fmt;
};

static int check_print(const char *cmd, const struct check_args *a,
		       const struct nvmefs_tls_key_info *info, const char *identity)
{
	struct json j;

	if (a->fmt == OUTPUT_JSON) {
		json_init(&j, stdout);
		json_object_begin(&j, NULL);
		json_uint(&j, "hmac", info->hmac);
		json_uint(&j, "length", info->len);
		json_uint(&j, "crc", info->crc);
		json_string(&j, "cipher", info->cipher == 2 ? "TLS_AES_256_GCM_SHA384"
							   : "TLS_AES_128_GCM_SHA256");
		if (identity)
			json_string(&j, "identity", identity);
		json_object_end(&j);
		putchar('\n');
	} else if (identity) {
		printf("%s\n", identity);
	} else {
		printf("Key is valid (HMAC %u, length %u, CRC %08x)\n", info->hmac, info->len,
		       info->crc);
	}
	return finish_output(cmd, EXIT_OK);
}

static int check_key(const char *cmd, const struct check_args *a, const char *from,
		     const char *key)
{
	struct nvmefs_tls_key_info info;
	char *identity = NULL;
	int ret;

	if (nvmefs_tls_key_check(key, &info)) {
		fprintf(stderr, "nvmefs %s: %s: %s; make one with 'nvmefs gen-tls-key'\n", cmd, from,
			nvmefs_errmsg());
		return EXIT_FAIL;
	}
	ret = a->subnqn ? nvmefs_tls_key_identity(key, a->hostnqn, a->subnqn, a->version,
						  a->compat, &identity) : 0;
	/* The key is valid: what is not is an NQN given. */
	if (ret == -EINVAL)
		return usage_error(cmd, "%s", nvmefs_errmsg());
	if (ret) {
		fprintf(stderr, "nvmefs %s: %s\n", cmd, nvmefs_errmsg());
		return EXIT_FAIL;
	}
	ret = check_print(cmd, a, &info, identity);
	free(identity);
	return ret;
}

int cmd_check_tls_key(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "keydata", required_argument, NULL, 'd' },
		{ "key", required_argument, NULL, 'k' },
		{ "keydata-file", required_argument, NULL, OPT_KEYDATA_FILE },
		{ "subsysnqn", required_argument, NULL, 'c' },
		{ "hostnqn", required_argument, NULL, 'n' },
		{ "identity", required_argument, NULL, 'I' },
		{ "compat", no_argument, NULL, 'C' },
		{ "output-format", required_argument, NULL, 'o' },
		KEYRING_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmd = argv[0], *what = "a TLS PSK";
	struct check_args a = { .fmt = OUTPUT_NORMAL };
	struct key_source src = { secret_page(KEY_MAX), NULL };
	uint64_t v = 0;
	int opt, ret = EXIT_OK;

	if (!src.buf) {
		fprintf(stderr, "nvmefs %s: no memory for the key\n", cmd);
		return EXIT_FAIL;
	}
	while (ret == EXIT_OK &&
	       (opt = next_option(argc, argv, ":d:k:c:n:I:Co:it:f:h", longopts)) != -1) {
		switch (opt) {
		case 'd':
			ret = source_arg(&src, cmd, "-d/--keydata", optarg, what);
			break;
		case 'k':
			ret = source_arg(&src, cmd, "-k/--key", optarg, what);
			break;
		case OPT_KEYDATA_FILE:
			ret = source_file(&src, cmd, "--keydata-file", optarg, what);
			break;
		case 'c':
			a.subnqn = optarg;
			break;
		case 'n':
			a.hostnqn = optarg;
			break;
		case 'I':
			if (parse_uint(optarg, 0, 1, &v))
				ret = usage_error(cmd, "-I/--identity '%s' is not 0 or 1", optarg);
			a.version = (unsigned int)v;
			break;
		case 'C':
			a.compat = true;
			break;
		default:
			if (shared_option(cmd, opt, check_usage, &a.fmt, &ret))
				goto out;
		}
	}
	if (ret == EXIT_OK)
		ret = source_env(&src, cmd, KEY_ENV, what);
	if (ret != EXIT_OK)
		goto out;
	if (!src.opt)
		ret = usage_error(cmd, "no key given: give it with --keydata-file, -d or " KEY_ENV);
	else if (!a.subnqn && (a.hostnqn || a.version || a.compat))
		ret = usage_error(cmd, "-n, -I and -C shape the identity, which -c/--subsysnqn "
				  "asks for: give -c too");
	else
		ret = check_key(cmd, &a, src.opt, src.buf);
out:
	secret_page_free(src.buf, KEY_MAX);
	return ret;
}
