// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_wgkey.c - Curve25519 keys: RFC 7748 vectors, agreement with `wg`,
 * clamping, base64/hex forms, the refusals of private key files, and the
 * keys the daemon keeps across passes (read again only when a file changed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "definition/keyfile.h"
#include "definition/wgkey.h"

static void from_hex(const char *hex, uint8_t key[WGKEY_LEN])
{
	if (wgkey_from_hex(hex, key) < 0)
		abort();
}

static void test_rfc7748(void)
{
	/* RFC 7748 section 6.1: Alice's and Bob's key pairs (base point multiplication) */
	static const struct {
		const char *priv, *pub;
	} pairs[] = {
	    {"77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
	     "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"},
	    {"5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
	     "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"},
	    /*
	     * The scalar of RFC 7748 section 5.2's first vector. That vector
	     * multiplies a different point (u = e6db6867...); its base point
	     * product here was computed with `wg pubkey`.
	     */
	    {"a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
	     "1c9fd88f45606d932a80c71824ae151d15d73e77de38e8e000852e614fae7019"},
	};
	uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN], want[WGKEY_LEN], u[WGKEY_LEN], out[WGKEY_LEN];

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		from_hex(pairs[i].priv, priv);
		from_hex(pairs[i].pub, want);
		wgkey_public(pub, priv);
		CHECK(!memcmp(pub, want, WGKEY_LEN), "public key of vector %zu", i);
	}
	/* the section 5.2 vector itself, through the same libsodium primitive */
	from_hex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4", priv);
	from_hex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c", u);
	from_hex("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552", want);
	CHECK_INT(crypto_scalarmult_curve25519(out, priv, u), 0, "X25519");
	CHECK(!memcmp(out, want, WGKEY_LEN), "RFC 7748 5.2 vector 1");
}

static void test_wg_pair(void)
{
	/* made by `wg genkey | tee priv | wg pubkey` */
	static const char priv_b64[] = "GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=";
	static const char pub_b64[] = "WaBGfiqasL8ypiCXZ4h1eTSLhjv696jFcynWCbRDzEk=";
	uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];
	char text[WGKEY_B64_LEN];

	CHECK_INT(wgkey_from_base64(priv_b64, priv), 0, "wg private key");
	wgkey_public(pub, priv);
	wgkey_to_base64(text, pub);
	CHECK_STR(text, pub_b64, "public key agrees with wg pubkey");
	wgkey_to_base64(text, priv);
	CHECK_STR(text, priv_b64, "base64 round trip");
}

static void test_generate(void)
{
	uint8_t a[WGKEY_LEN], b[WGKEY_LEN], back[WGKEY_LEN];
	char text[WGKEY_B64_LEN], hex[WGKEY_HEX_LEN];

	for (int i = 0; i < 64; i++) {
		CHECK_INT(wgkey_generate(a), 0, "generate");
		CHECK_INT(a[0] & 7, 0, "low bits cleared");
		CHECK_INT(a[31] & 0x80, 0, "top bit cleared");
		CHECK_INT(a[31] & 0x40, 0x40, "bit 254 set");
		wgkey_to_base64(text, a);
		CHECK_INT(strlen(text), 44, "base64 length");
		CHECK_INT(text[43], '=', "padding");
		CHECK_INT(wgkey_from_base64(text, back), 0, "parse back");
		CHECK(!memcmp(a, back, WGKEY_LEN), "base64 round trip");
		wgkey_to_hex(hex, a);
		CHECK_INT(strlen(hex), 64, "hex length");
		CHECK_INT(wgkey_from_hex(hex, back), 0, "hex back");
		CHECK(!memcmp(a, back, WGKEY_LEN), "hex round trip");
	}
	wgkey_generate(b);
	CHECK(memcmp(a, b, WGKEY_LEN), "two keys differ");
	CHECK(!wgkey_is_zero(a), "not zero");
	memset(b, 0, sizeof(b));
	CHECK(wgkey_is_zero(b), "zero");
}

static void test_base64_forms(void)
{
	static const struct {
		const char *text;
		int ok;
	} cases[] = {
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=", 1},
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=\n", 1},
	    {"  GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=\r\n", 1},
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0", 0},	  /* no padding */
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0==", 0}, /* 45 */
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il1=", 0},  /* unused bits set */
	    {"GAbNgSg7A2C2-s3a8O_ImX7UjYsVCxiFHpWkB9t6il0=", 0},  /* URL alphabet */
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYs VCxiFHpWkB9t6il0=", 0}, /* space inside */
	    {"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6i=0=", 0},
	    {"", 0},
	    {"\n", 0},
	    {"not a key", 0},
	};
	uint8_t key[WGKEY_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(key, 0x5a, sizeof(key));
		CHECK_INT(wgkey_from_base64(cases[i].text, key), cases[i].ok ? 0 : -EINVAL,
			  "\"%s\"", cases[i].text);
		if (!cases[i].ok)
			CHECK(wgkey_is_zero(key), "key zeroed after \"%s\"", cases[i].text);
	}
	CHECK_INT(wgkey_from_base64(NULL, key), -EINVAL, "NULL");
	CHECK_INT(wgkey_from_hex("00", key), -EINVAL, "short hex");
	CHECK_INT(
	    wgkey_from_hex("zz9fd88f45606d932a80c71824ae151d15d73e77de38e8e000852e614fae7019", key),
	    -EINVAL, "bad hex");
	CHECK_INT(
	    wgkey_from_hex("1C9FD88F45606D932A80C71824AE151D15D73E77DE38E8E000852E614FAE7019", key),
	    0, "upper-case hex");
}

/* A file under dir with content and mode; returns its path (static buffer). */
static const char *make_file(const char *dir, const char *name, const char *content, mode_t mode)
{
	static char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, content, strlen(content)) != (ssize_t)strlen(content))
		abort();
	close(fd);
	chmod(path, mode);
	return path;
}

static void remove_dir(const char *dir)
{
	char path[512];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void check_refusal(const char *what, const char *path, int want_err, const char *want_text)
{
	static const char key_text[] = "GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=";
	uint8_t key[WGKEY_LEN];
	char err[512];
	int ret;

	memset(key, 0x5a, sizeof(key));
	ret = wgkey_load_file(path, key, err, sizeof(err));
	CHECK_INT(ret, want_err, "%s: %s", what, err);
	CHECK(strstr(err, want_text) != NULL, "%s: \"%s\" lacks \"%s\"", what, err, want_text);
	CHECK(strstr(err, path) != NULL, "%s: message names the file", what);
	CHECK(strstr(err, "GAbNgSg7") == NULL && strstr(err, key_text + 20) == NULL,
	      "%s: key material in the message", what);
	CHECK(wgkey_is_zero(key), "%s: key left zero", what);
}

static void test_load_file(void)
{
	static const char key_text[] = "GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=\n";
	char dir[] = "/tmp/test_wgkey.XXXXXX", err[512], msg[512];
	uint8_t key[WGKEY_LEN], want[WGKEY_LEN];
	const char *path;

	if (!mkdtemp(dir))
		abort();
	wgkey_from_base64(key_text, want);

	path = make_file(dir, "good.key", key_text, 0600);
	CHECK_INT(wgkey_load_file(path, key, err, sizeof(err)), 0, "good file: %s", err);
	CHECK(!memcmp(key, want, WGKEY_LEN), "good file: key");
	CHECK_STR(err, "", "good file: no message");
	path = make_file(dir, "owner-only.key", key_text, 0400);
	CHECK_INT(wgkey_load_file(path, key, err, sizeof(err)), 0, "0400: %s", err);

	static const struct {
		mode_t mode;
		const char *word;
	} modes[] = {
	    {0644, "readable"}, {0640, "readable"},   {0604, "readable"},
	    {0620, "writable"}, {0610, "accessible"}, {0666, "readable"},
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char name[32];

		snprintf(name, sizeof(name), "mode%04o.key", (unsigned int)modes[i].mode);
		path = make_file(dir, name, key_text, modes[i].mode);
		snprintf(
		    msg, sizeof(msg),
		    "private key file %s is %s by group or others (mode %04o): run chmod 600 %s",
		    path, modes[i].word, (unsigned int)modes[i].mode, path);
		check_refusal(name, path, -EPERM, msg);
	}

	check_refusal("directory", dir, -EINVAL, "is a directory");
	/* another user's file: that user can read it, or replace it (unit tests may run as root) */
	path = make_file(dir, "nobody.key", key_text, 0600);
	if (geteuid() == 0 && chown(path, 65534, 65534) == 0) {
		snprintf(msg, sizeof(msg),
			 "private key file %s belongs to uid 65534, not to this user (uid 0), who "
			 "alone may read or change it: run chown 0 %s",
			 path, path);
		check_refusal("another user's", path, -EPERM, msg);
	}
	/* a preshared key's messages say what it is and how both nodes get the same one */
	snprintf(msg, sizeof(msg), "%s/missing.psk", dir);
	memset(key, 0x5a, sizeof(key));
	CHECK_INT(wgkey_load_file_of(msg, WGKEY_FILE_PRESHARED, key, err, sizeof(err)), -ENOENT,
		  "missing psk");
	CHECK(strstr(err, "cannot read preshared key file ") &&
		  strstr(err, "create it with (umask 077; wg genpsk > ") &&
		  strstr(err, ") on one node, and copy it to the other node's --psk-dir") &&
		  !strstr(err, "private"),
	      "missing psk: %s", err);
	path = make_file(dir, "world.psk", key_text, 0644);
	CHECK_INT(wgkey_load_file_of(path, WGKEY_FILE_PRESHARED, key, err, sizeof(err)), -EPERM,
		  "0644 psk");
	CHECK(strstr(err, "preshared key file ") && strstr(err, "readable by group or others"),
	      "0644 psk: %s", err);
	path = make_file(dir, "garbage.psk", "hello\n", 0600);
	CHECK_INT(wgkey_load_file_of(path, WGKEY_FILE_PRESHARED, key, err, sizeof(err)), -EINVAL,
		  "garbage psk");
	CHECK(strstr(err, "does not hold a base64 WireGuard preshared key"), "garbage psk: %s",
	      err);
	CHECK(wgkey_is_zero(key), "psk: key left zero");
	snprintf(msg, sizeof(msg), "%s/missing.key", dir);
	check_refusal("missing", msg, -ENOENT, "No such file or directory: create it with");
	check_refusal("garbage", make_file(dir, "garbage.key", "hello world\n", 0600), -EINVAL,
		      "does not hold a base64 WireGuard private key");
	check_refusal("empty", make_file(dir, "empty.key", "", 0600), -EINVAL, "is empty");
	check_refusal("blank", make_file(dir, "blank.key", " \n\n", 0600), -EINVAL, "is empty");
	check_refusal("too short",
		      make_file(dir, "short.key", "GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWk=\n", 0600),
		      -EINVAL, "does not hold");
	{
		static const char nul[] = "GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=\n\0junk";
		char name[600];
		FILE *f;

		snprintf(name, sizeof(name), "%s/nul.key", dir);
		f = fopen(name, "w");
		if (f) {
			fwrite(nul, 1, sizeof(nul) - 1, f);
			fclose(f);
		}
		chmod(name, 0600);
		check_refusal("embedded NUL", name, -EINVAL, "does not hold");
	}
	check_refusal("two keys",
		      make_file(dir, "two.key",
				"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=\n"
				"GAbNgSg7A2C2+s3a8O/ImX7UjYsVCxiFHpWkB9t6il0=\n",
				0600),
		      -EINVAL, "does not hold");
	{
		char big[4096];

		memset(big, 'A', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		check_refusal("long", make_file(dir, "long.key", big, 0600), -EINVAL,
			      "does not hold");
	}
	snprintf(msg, sizeof(msg), "%s/fifo", dir);
	if (mkfifo(msg, 0600) == 0)
		check_refusal("fifo", msg, -EINVAL, "is a FIFO");

	/* unreadable for a non-root user; root reads anything, so only check when not root */
	path = make_file(dir, "noread.key", key_text, geteuid() ? 0200 : 0600);
	if (geteuid() != 0) {
		check_refusal("unreadable", path, -EACCES, "Permission denied");
	} else {
		/* root reads anything: try as nobody in a child, which reports by exit status */
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {
			if (setgid(65534) < 0 || setuid(65534) < 0)
				_exit(2);
			_exit(wgkey_load_file(path, key, err, sizeof(err)) == -EACCES &&
				      strstr(err, "Permission denied: run fabricd as root")
				  ? 0
				  : 1);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "unreadable as nobody: %d",
		      status);
	}
	remove_dir(dir);
}

/* The daemon's store: a file is read once, again after each kind of change, never when not. */
static void test_store(void)
{
	char dir[] = "/tmp/test_wgkey_store.XXXXXX", err[512], path[600], psk[600];
	uint8_t a[WGKEY_LEN], b[WGKEY_LEN], key[WGKEY_LEN];
	struct keyfile_store ks = {0};
	unsigned int reads;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/node.key", dir);
	snprintf(psk, sizeof(psk), "%s/peer", dir);
	wgkey_generate(a);
	wgkey_generate(b);
	CHECK_INT(keyfile_write(path, a, err, sizeof(err)), 0, "write: %s", err);
	CHECK_INT(keyfile_write(psk, b, err, sizeof(err)), 0, "write psk: %s", err);

	/* just written: its times cannot tell a second write in the same tick, read it again */
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), 0,
		  "first: %s", err);
	CHECK(!memcmp(key, a, WGKEY_LEN), "first: the key");
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), 0,
		  "recent: %s", err);
	CHECK_INT(ks.reads, 2, "a file changed just now is read each time");

	ks.racy_ms = -1; /* as if the file were older than the window */
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), 0, "%s",
		  err);
	reads = ks.reads;
	for (int i = 0; i < 5; i++)
		CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)),
			  0, "kept: %s", err);
	CHECK_INT(ks.reads, reads, "unchanged: never read again");
	CHECK(!memcmp(key, a, WGKEY_LEN), "kept: the same key");

	/* rotated by rename (keyfile_write): a new inode, the new key */
	CHECK_INT(keyfile_write(path, b, err, sizeof(err)), 0, "rotate: %s", err);
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), 0,
		  "rotated: %s", err);
	CHECK_INT(ks.reads, reads + 1, "rotated: read again");
	CHECK(!memcmp(key, b, WGKEY_LEN), "rotated: the new key");

	/* chmod: refused as wgkey_load_file does, the key read before handed out, said once */
	chmod(path, 0644);
	memset(key, 0, sizeof(key));
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)),
		  KEYFILE_KEPT, "chmod 644");
	CHECK(strstr(err, "readable by group or others") != NULL, "chmod: %s", err);
	CHECK(!memcmp(key, b, WGKEY_LEN), "chmod: the key read before");
	reads = ks.reads;
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)),
		  KEYFILE_STILL_KEPT, "chmod 644, again");
	CHECK_INT(ks.reads, reads + 1, "a failing file is read again each time");
	chmod(path, 0600);
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)),
		  KEYFILE_BACK, "0600 again: %s", err);
	CHECK(!memcmp(key, b, WGKEY_LEN), "0600 again: the key");
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), 0,
		  "then as before: %s", err);

	/* a second file; the sweep forgets what the last pass did not ask for */
	CHECK_INT(keyfile_store_load(&ks, psk, WGKEY_FILE_PRESHARED, key, err, sizeof(err)), 0,
		  "psk: %s", err);
	CHECK_INT(ks.n, 2, "two kept");
	keyfile_store_sweep(&ks);
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), 0, "%s",
		  err);
	keyfile_store_sweep(&ks);
	CHECK_INT(ks.n, 1, "the peer's key not asked for is forgotten");
	CHECK_STR(ks.kept ? "kept" : "none", "kept", "the private key stays");

	/* removed: the key read before; a file never read well is an error, no key */
	unlink(path);
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)),
		  KEYFILE_KEPT, "removed");
	CHECK(!memcmp(key, b, WGKEY_LEN), "removed: the key read before");
	keyfile_store_sweep(&ks);
	keyfile_store_sweep(&ks);
	CHECK_INT(ks.n, 0, "not asked for: forgotten");
	CHECK_INT(keyfile_store_load(&ks, path, WGKEY_FILE_PRIVATE, key, err, sizeof(err)), -ENOENT,
		  "removed, not kept");
	CHECK(wgkey_is_zero(key), "no stale key handed out");

	/* without a store: a plain read */
	CHECK_INT(keyfile_store_load(NULL, psk, WGKEY_FILE_PRESHARED, key, err, sizeof(err)), 0,
		  "no store: %s", err);
	CHECK(!memcmp(key, b, WGKEY_LEN), "no store: the key");
	keyfile_store_free(&ks);
	keyfile_store_free(NULL);
	remove_dir(dir);
}

int main(void)
{
	test_rfc7748();
	test_wg_pair();
	test_generate();
	test_base64_forms();
	test_load_file();
	test_store();
	return unit_summary("test_wgkey");
}
