// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/wgkey.c - Curve25519 keys with libsodium, base64/hex forms, private key files. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "definition/wgkey.h"

/* sodium_init() is idempotent and thread-safe: calling it each time needs no global. */
static int sodium_ready(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

int wgkey_generate(uint8_t key[WGKEY_LEN])
{
	size_t have = 0;

	while (have < WGKEY_LEN) {
		ssize_t n = getrandom(key + have, WGKEY_LEN - have, 0);

		if (n < 0) {
			int ret = -errno;

			if (ret == -EINTR)
				continue;
			sodium_memzero(key, WGKEY_LEN);
			return ret;
		}
		have += (size_t)n;
	}
	key[0] &= 248;
	key[31] = (uint8_t)((key[31] & 127) | 64);
	return 0;
}

void wgkey_public(uint8_t pub[WGKEY_LEN], const uint8_t priv[WGKEY_LEN])
{
	/*
	 * libsodium clamps the scalar itself, exactly as `wg pubkey` does, so
	 * an unclamped key gives the same public key in both. It fails only
	 * for an all-zero result, which a clamped scalar cannot produce.
	 */
	if (sodium_ready() < 0 || crypto_scalarmult_curve25519_base(pub, priv) != 0)
		memset(pub, 0, WGKEY_LEN);
}

/* Trims surrounding whitespace; returns the start and sets *len. */
static const char *trim(const char *text, size_t *len)
{
	size_t n;

	while (*text && isspace((unsigned char)*text))
		text++;
	n = strlen(text);
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	*len = n;
	return text;
}

int wgkey_from_base64(const char *text, uint8_t key[WGKEY_LEN])
{
	const char *start, *end = NULL;
	size_t len, bin_len = 0;

	if (!text || sodium_ready() < 0)
		goto invalid;
	start = trim(text, &len);
	if (len != WGKEY_B64_LEN - 1 || start[len - 1] != '=')
		goto invalid;
	/* libsodium also rejects non-zero unused bits, as wireguard-tools does */
	if (sodium_base642bin(key, WGKEY_LEN, start, len, NULL, &bin_len, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0)
		goto invalid;
	if (bin_len != WGKEY_LEN || end != start + len)
		goto invalid;
	return 0;
invalid:
	sodium_memzero(key, WGKEY_LEN);
	return -EINVAL;
}

void wgkey_to_base64(char out[WGKEY_B64_LEN], const uint8_t key[WGKEY_LEN])
{
	if (sodium_ready() < 0) {
		out[0] = '\0';
		return;
	}
	sodium_bin2base64(out, WGKEY_B64_LEN, key, WGKEY_LEN, sodium_base64_VARIANT_ORIGINAL);
}

int wgkey_from_hex(const char *text, uint8_t key[WGKEY_LEN])
{
	const char *end = NULL;
	size_t bin_len = 0;

	if (!text || strlen(text) != WGKEY_HEX_LEN - 1 || sodium_ready() < 0)
		goto invalid;
	if (sodium_hex2bin(key, WGKEY_LEN, text, WGKEY_HEX_LEN - 1, NULL, &bin_len, &end) != 0)
		goto invalid;
	if (bin_len != WGKEY_LEN || end != text + WGKEY_HEX_LEN - 1)
		goto invalid;
	return 0;
invalid:
	sodium_memzero(key, WGKEY_LEN);
	return -EINVAL;
}

void wgkey_to_hex(char out[WGKEY_HEX_LEN], const uint8_t key[WGKEY_LEN])
{
	if (sodium_ready() < 0) {
		out[0] = '\0';
		return;
	}
	sodium_bin2hex(out, WGKEY_HEX_LEN, key, WGKEY_LEN);
}

int wgkey_is_zero(const uint8_t key[WGKEY_LEN])
{
	return sodium_is_zero(key, WGKEY_LEN);
}

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

/* What a key file is called in messages, and how one is made. */
struct key_file_kind {
	const char *noun; /* "<what> file" */
	const char *what;
	const char *make; /* a shell command, then the path */
	const char *then; /* after the command */
};

static const struct key_file_kind key_kinds[] = {
    [WGKEY_FILE_PRIVATE] = {"private key file", "private key", "(umask 077; fabricd genkey > ",
			    ")"},
    /* both ends of a session need the same one: made once, copied */
    [WGKEY_FILE_PRESHARED] = {"preshared key file", "preshared key", "(umask 077; wg genpsk > ",
			      ") on one node, and copy it to the other node's --psk-dir"},
};

/* Opens the key file; the fd, or -errno with err saying what to do. */
static int open_key_file(const char *path, const struct key_file_kind *k, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO must not hang before fstat() refuses it */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int ret = -errno;

	if (fd >= 0)
		return fd;
	if (ret == -ENOENT)
		snprintf(err, errlen, "cannot read %s %s: %s: create it with %s%s%s", k->noun, path,
			 strerror(-ret), k->make, path, k->then);
	else if (ret == -EACCES)
		snprintf(err, errlen,
			 "cannot read %s %s: %s: run fabricd as root or as the file's owner",
			 k->noun, path, strerror(-ret));
	else
		snprintf(err, errlen, "cannot read %s %s: %s", k->noun, path, strerror(-ret));
	return ret;
}

/*
 * A regular file of this user's, readable by its owner only (as ssh wants
 * its keys: a file another user owns, that user can read or replace). 0 or
 * -errno with err filled.
 */
static int check_key_file(int fd, const char *path, const struct key_file_kind *k, char *err,
			  size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int ret = -errno;

		snprintf(err, errlen, "cannot read %s %s: %s", k->noun, path, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen,
			 "%s %s is %s: give the path of a regular file that holds the key", k->noun,
			 path, file_kind(st.st_mode));
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s %s belongs to uid %u, not to this user (uid %u), who alone may read "
			 "or change it: run chown %u %s",
			 k->noun, path, (unsigned int)st.st_uid, (unsigned int)geteuid(),
			 (unsigned int)geteuid(), path);
		return -EPERM;
	}
	if (st.st_mode & 077) {
		const char *what = (st.st_mode & 044)	? "readable"
				   : (st.st_mode & 022) ? "writable"
							: "accessible";

		snprintf(err, errlen,
			 "%s %s is %s by group or others (mode %04o): run chmod 600 %s", k->noun,
			 path, what, (unsigned int)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

/*
 * One directory that holds the key file (in is its own directory, else
 * below is the entry of dir on the way down to it), as OpenSSH's StrictModes
 * wants: owned by root or this user, and not writable by group or others
 * without the sticky bit /tmp has. Whoever may write it can rename the key
 * (or the directory below) away and put a link to another key of the host in
 * its place, which passes every check of the file. 0 or -EPERM with err
 * filled.
 */
static int check_key_dir(const char *dir, const char *below, const char *path,
			 const struct key_file_kind *k, char *err, size_t errlen)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return 0; /* the file was opened: a directory that cannot be read is no threat */
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s %s is %s %s, which belongs to uid %u, neither root nor this user "
			 "(uid %u): that user could put another %s in the place of %s; run "
			 "chown root %s",
			 k->noun, path, below ? "under" : "in", dir, (unsigned int)st.st_uid,
			 (unsigned int)geteuid(), below ? "directory" : "file",
			 below ? below : path, dir);
		return -EPERM;
	}
	if (!(st.st_mode & 022) || (st.st_mode & S_ISVTX))
		return 0;
	if (!below)
		snprintf(err, errlen,
			 "%s %s is in %s, which group or others may write (mode %04o): they could "
			 "put another file in its place; run chmod go-w %s, or keep the key in a "
			 "directory of its own (mode 0700)",
			 k->noun, path, dir, (unsigned int)(st.st_mode & 07777), dir);
	else
		snprintf(err, errlen,
			 "%s %s is under %s, which group or others may write (mode %04o): they "
			 "could put a directory of their own in the place of %s; run chmod go-w %s "
			 "(or chmod +t %s, as /tmp has)",
			 k->noun, path, dir, (unsigned int)(st.st_mode & 07777), below, dir, dir);
	return -EPERM;
}

/*
 * check_key_dir for every directory from file's own up to /; a relative file
 * is taken from the working directory.
 */
static int check_key_dir_walk(const char *file, const char *path, const struct key_file_kind *k,
			      char *err, size_t errlen)
{
	char dir[PATH_MAX], below[PATH_MAX], *slash;
	int ret;

	if (file[0] == '/')
		ret = snprintf(dir, sizeof(dir), "%s", file);
	else if (getcwd(below, sizeof(below)))
		ret = snprintf(dir, sizeof(dir), "%s/%s", below, file);
	else
		ret = -1;
	if (ret < 0 || (size_t)ret >= sizeof(dir))
		return 0; /* too long to walk: the file itself was checked */
	below[0] = '\0';
	while ((slash = strrchr(dir, '/'))) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		ret = check_key_dir(dir, below[0] ? below : NULL, path, k, err, errlen);
		if (ret < 0 || slash == dir)
			return ret;
		snprintf(below, sizeof(below), "%s", dir);
	}
	return 0;
}

/* check_key_dir_walk for the path as given and for the file it leads to */
static int check_key_dirs(const char *path, const struct key_file_kind *k, char *err, size_t errlen)
{
	char *real = realpath(path, NULL);
	int ret = check_key_dir_walk(path, path, k, err, errlen);

	if (!ret && real)
		ret = check_key_dir_walk(real, path, k, err, errlen);
	free(real);
	return ret;
}

int wgkey_check_dirs(const char *path, enum wgkey_file kind, char *err, size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	return check_key_dirs(path, &key_kinds[kind], err, errlen);
}

/*
 * Reads at most size - 1 bytes into buf, NUL-terminated; the count, size when
 * the file holds more (it cannot be a single key), or -errno with err filled.
 */
static ssize_t read_key_text(int fd, char *buf, size_t size, const char *path,
			     const struct key_file_kind *k, char *err, size_t errlen)
{
	size_t have = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, size - 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int ret = -errno;

			snprintf(err, errlen, "cannot read %s %s: %s", k->noun, path,
				 strerror(-ret));
			return ret;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have == size - 1) {
			/* full: one more byte means it cannot be a single key */
			char extra;

			if (read(fd, &extra, 1) > 0) {
				have = size; /* marks "too long" */
				sodium_memzero(&extra, sizeof(extra));
			}
			break;
		}
	}
	buf[have < size ? have : size - 1] = '\0';
	return (ssize_t)have;
}

int wgkey_load_file(const char *path, uint8_t key[WGKEY_LEN], char *err, size_t errlen)
{
	return wgkey_load_file_of(path, WGKEY_FILE_PRIVATE, key, err, errlen);
}

int wgkey_load_file_of(const char *path, enum wgkey_file kind, uint8_t key[WGKEY_LEN], char *err,
		       size_t errlen)
{
	const struct key_file_kind *k = &key_kinds[kind];
	/* room for a key with whitespace around it; anything longer is not one key */
	char buf[128];
	ssize_t got;
	size_t have;
	int fd, ret;

	memset(key, 0, WGKEY_LEN);
	if (errlen)
		err[0] = '\0';
	fd = open_key_file(path, k, err, errlen);
	if (fd < 0)
		return fd;
	ret = check_key_file(fd, path, k, err, errlen);
	if (!ret)
		ret = check_key_dirs(path, k, err, errlen);
	got = ret < 0 ? ret : read_key_text(fd, buf, sizeof(buf), path, k, err, errlen);
	close(fd);
	if (got < 0) {
		ret = (int)got;
		goto out;
	}
	have = (size_t)got;
	if (have < sizeof(buf) && strspn(buf, " \t\r\n\v\f") == have) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s %s is empty: write a key into it with %s%s%s", k->noun,
			 path, k->make, path, k->then);
		goto out;
	}
	/* an embedded NUL would hide the rest of the file from the parser */
	if (have >= sizeof(buf) || strlen(buf) != have || wgkey_from_base64(buf, key) < 0) {
		ret = -EINVAL;
		snprintf(err, errlen,
			 "%s %s does not hold a base64 WireGuard %s (44 characters): write one "
			 "with %s%s%s",
			 k->noun, path, k->what, k->make, path, k->then);
		goto out;
	}
	ret = 0;
out:
	sodium_memzero(buf, sizeof(buf));
	if (ret < 0)
		sodium_memzero(key, WGKEY_LEN);
	return ret;
}
