// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keys.c - `fabricd genkey` and `fabricd pubkey`, byte for byte like
 * `wg genkey` and `wg pubkey`. Keys go through read(2)/write(2) directly, so
 * no stdio buffer keeps a copy that cannot be wiped.
 */
#include <errno.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/commands.h"
#include "base/log.h"
#include "definition/wgkey.h"

/* Prints key in base64 and a newline; 0 or the exit status 1 after an error. */
static int print_key(const uint8_t key[WGKEY_LEN])
{
	char line[WGKEY_B64_LEN + 1];
	int ret;

	wgkey_to_base64(line, key);
	line[WGKEY_B64_LEN - 1] = '\n';
	ret = write_all(STDOUT_FILENO, line, WGKEY_B64_LEN);
	sodium_memzero(line, sizeof(line));
	if (ret < 0) {
		log_error("stdout: %s", strerror(-ret));
		return 1;
	}
	return 0;
}

int cmd_genkey(const struct options *o)
{
	uint8_t key[WGKEY_LEN];
	struct stat st;
	int ret;

	(void)o; /* it reads no option; main refuses arguments */
	/*
	 * As `wg genkey`: the key is only written to stdout, but warn when that is
	 * readable by others; by the group too, since fabricd refuses such a file.
	 */
	if (fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & (S_IRWXG | S_IRWXO)))
		log_warn("writing a private key to a file the %s can read (mode %04o), which "
			 "fabricd refuses as a key file: set the umask to 077 and try again",
			 (st.st_mode & S_IRWXO) ? "world" : "group",
			 (unsigned int)(st.st_mode & 07777));
	ret = wgkey_generate(key);
	if (ret < 0) {
		log_error("genkey: cannot get random bytes: %s", strerror(-ret));
		return 1;
	}
	ret = print_key(key);
	sodium_memzero(key, sizeof(key));
	return ret;
}

int cmd_pubkey(const struct options *o)
{
	/* a key, whitespace and a newline fit; more than this is not one key */
	char buf[256];
	uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];
	size_t have = 0;
	int ret = 1;

	/* --key-file: that file's key, with the checks every command makes of it */
	if (o->key_file_given) {
		char err[512];

		if (wgkey_load_file(o->key_file, priv, err, sizeof(err)) < 0) {
			log_error("%s", err);
			return 1;
		}
		wgkey_public(pub, priv);
		sodium_memzero(priv, sizeof(priv));
		return print_key(pub);
	}
	for (;;) {
		ssize_t n = read(STDIN_FILENO, buf + have, sizeof(buf) - 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_error("stdin: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have == sizeof(buf) - 1)
			goto invalid;
	}
	buf[have] = '\0';
	/* an embedded NUL would hide the rest of the input from the parser */
	if (strlen(buf) != have || wgkey_from_base64(buf, priv) < 0)
		goto invalid;
	wgkey_public(pub, priv);
	ret = print_key(pub);
	goto out;
invalid:
	log_error("stdin: not a base64 WireGuard private key (44 characters)");
	ret = 1;
out:
	sodium_memzero(buf, sizeof(buf));
	sodium_memzero(priv, sizeof(priv));
	return ret;
}
