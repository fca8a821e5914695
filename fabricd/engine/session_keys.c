// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/session_keys.c - a session's keys: this node's private key, checked
 * against the public key the definition lists for it (a key rotation between
 * its two steps told apart from a wrong key), and the preshared keys of
 * --psk-dir. The daemon keeps what it read (definition/keyfile.h).
 */
#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/diag.h"
#include "base/log.h"
#include "definition/keyfile.h"
#include "definition/wgkey.h"
#include "engine/session.h"

/*
 * join --rotate-key writes the definition with the new public key, then
 * renames FILE.new (the new private key) over FILE: between the two, a pass
 * finds the definition ahead of the key file. Is FILE.new that key? 0 no,
 * ROTATION_UNDER_WAY when FILE.new is younger than ROTATION_STEP_S (join is
 * about to rename it), ROTATION_STALLED when older (join was cut short), or
 * when its time is ahead of the clock by more than a second (the clock was
 * set back since: a boot before NTP; its age says nothing, and a stalled
 * rotation must not pass as one under way for as long as the clock lags).
 */
#define ROTATION_STEP_S 5
enum { ROTATION_UNDER_WAY = 1, ROTATION_STALLED = 2 };

static int rotation_pending(const char *key_file, const uint8_t want[WG_KEY_LEN])
{
	uint8_t priv[WG_KEY_LEN], pub[WG_KEY_LEN];
	char path[PATH_MAX], err[PATH_MAX + 128];
	struct stat st;
	long long age;

	if (!keyfile_pending_path(key_file, path, sizeof(path)) ||
	    wgkey_load_file(path, priv, err, sizeof(err)) < 0)
		return 0;
	wgkey_public(pub, priv);
	explicit_bzero(priv, sizeof(priv));
	if (memcmp(pub, want, WG_KEY_LEN))
		return 0;
	if (stat(path, &st) < 0)
		return ROTATION_STALLED;
	age = (long long)time(NULL) - (long long)st.st_mtime;
	if (age >= -1 && age < ROTATION_STEP_S)
		return ROTATION_UNDER_WAY;
	return ROTATION_STALLED;
}

/*
 * wgkey's message without its advice to write a new key (genkey): the
 * definition already lists this node's public key, which a new key cannot
 * match. "... is empty: write a key into it with ..." -> "... is empty".
 */
static bool keep_problem_only(char *why)
{
	char *advice = strstr(why, ": write ");

	if (advice)
		*advice = '\0';
	return advice != NULL;
}

/* The node whose public_key is s->r.private_key itself (pasted in its place), or -1. */
static int private_key_listed(const struct session *s)
{
	for (size_t i = 0; i < s->cluster->n_nodes; i++) {
		if (!sodium_memcmp(s->cluster->nodes[i].public_key, s->r.private_key, WG_KEY_LEN))
			return (int)i;
	}
	return -1;
}

/*
 * The private key from --key-file into s->r, checked against this node's
 * public key; on failure why says what is wrong and what to do (-2: a
 * rotation under way, see rotation_pending(); else -1).
 */
static int read_private_key(struct session *s, const struct options *o, struct keyfile_store *keys,
			    char *why, size_t len)
{
	const struct node *me = &s->cluster->nodes[s->self];
	int idx = (int)s->self;

	int ret =
	    keyfile_store_load(keys, o->key_file, WGKEY_FILE_PRIVATE, s->r.private_key, why, len);
	bool cut = false;
	int pending, leaked;

	/*
	 * The daemon's: the file fails now, the key read before is used
	 * (keyfile.h). A file gone is said so: wgkey's advice for a missing
	 * file, a new key, cannot match the definition's public key.
	 */
	if (ret == KEYFILE_KEPT && access(o->key_file, F_OK) < 0)
		snprintf(why, len, "private key file %s: %s", o->key_file, strerror(errno));
	else if (ret == KEYFILE_KEPT || (ret < 0 && ret != -ENOENT))
		cut = keep_problem_only(why);
	if (ret == KEYFILE_KEPT)
		log_warn("%s; the key read from it before stays in use, so the fabric keeps "
			 "running and being repaired, but a restart or apply will refuse it: put "
			 "the node's key file back as it was (mode 0600; a new key cannot match "
			 "nodes[%d].public_key)",
			 why, idx);
	else if (ret == KEYFILE_BACK)
		log_info("private key file %s: read again", o->key_file);
	/* a key made now is not the one the definition lists for this node */
	if (ret == -ENOENT)
		snprintf(why, len,
			 "cannot read private key file %s: %s: nodes[%d] (%s) has a public key "
			 "already; put the key file that belongs to it back (mode 0600), or give "
			 "the node a new key with `fabricd join -c FILE --rotate-key`",
			 o->key_file, strerror(-ret), idx, me->name);
	else if (ret < 0 && cut && strlen(why) + 1 < len)
		snprintf(why + strlen(why), len - strlen(why),
			 ": nodes[%d] (%s) has a public key already; put the key file that belongs "
			 "to it back (mode 0600), or give the node a new key with `fabricd join -c "
			 "FILE --rotate-key`",
			 idx, me->name);
	if (ret < 0)
		return -1;
	wgkey_public(s->r.public_key, s->r.private_key);
	/* pasted in the place of its public key (this node's or another's): known to all */
	leaked = private_key_listed(s);
	if (leaked < 0 && !memcmp(s->r.public_key, me->public_key, WG_KEY_LEN))
		return 0;
	pending = rotation_pending(o->key_file, me->public_key);
	if (leaked >= 0)
		snprintf(why, len,
			 "nodes[%d].public_key is the private key in %s, not its public key: every "
			 "node that reads the definition has it now; give this node a new key with "
			 "`fabricd join -c FILE --rotate-key`, which puts its public key there",
			 leaked, o->key_file);
	else if (pending)
		snprintf(why, len,
			 "nodes[%d].public_key is the key in %s.new (a key rotation, `join "
			 "--rotate-key`, between its two steps): it takes the place of %s next; if "
			 "it does not, run `fabricd join -c FILE` again to finish it",
			 idx, o->key_file, o->key_file);
	else
		snprintf(why, len,
			 "nodes[%d].public_key: does not match the private key in %s; put this "
			 "node's public key (fabricd pubkey < %s) in the definition, or the key "
			 "file that belongs to it back",
			 idx, o->key_file, o->key_file);
	explicit_bzero(s->r.private_key, sizeof(s->r.private_key));
	return leaked < 0 && pending == ROTATION_UNDER_WAY ? -2 : -1;
}

static int load_private_key(struct session *s, const struct options *o, struct keyfile_store *keys)
{
	char why[PATH_MAX * 3 + 512];
	int ret = read_private_key(s, o, keys, why, sizeof(why));

	/*
	 * The daemon's pass (keys) between a rotation's two steps: join renames
	 * the key next, and the definition waiting for it is tried at once then
	 * (daemon/retry.h). No error for a legal edit; one cut short still is,
	 * once FILE.new is ROTATION_STEP_S old.
	 */
	if (ret == -2 && keys) {
		log_info("%s", why);
		return -1;
	}
	if (ret < 0) {
		log_error("%s", why);
		return -1;
	}
	s->r.have_key = true;
	return 0;
}

int session_check_private_key(struct session *s, const struct options *o)
{
	char why[PATH_MAX * 3 + 512];

	if (s->departed)
		return 0;
	if (read_private_key(s, o, NULL, why, sizeof(why)) == 0) {
		/* status reads no secret beyond this check */
		explicit_bzero(s->r.private_key, sizeof(s->r.private_key));
		return 0;
	}
	diag_add(&s->conflicts, NULL, "%s", why);
	return -1;
}

/*
 * Preshared keys from --psk-dir: one file per peer, named after it, 0600.
 * Both nodes of a pair hold the same key. Every peer needs one: a missing
 * file is an error rather than a silently unprotected session. Without
 * --psk-dir, none: a peer's key from an earlier apply is removed (managed,
 * no keys), as a device made anew would have none.
 */
static int load_psks(struct session *s, const struct options *o, struct keyfile_store *keys)
{
	const struct cluster *c = s->cluster;
	char path[4096], err[512];

	s->r.psk_managed = true;
	if (!o->psk_dir)
		return 0;
	s->r.psk = calloc(c->n_nodes, sizeof(*s->r.psk));
	if (!s->r.psk)
		return -1;
	s->r.n_psk = c->n_nodes;
	for (size_t i = 0; i < c->n_nodes; i++) {
		int ret;

		if (i == s->self)
			continue;
		snprintf(path, sizeof(path), "%s/%s", o->psk_dir, c->nodes[i].name);
		ret = keyfile_store_load(keys, path, WGKEY_FILE_PRESHARED, s->r.psk[i], err,
					 sizeof(err));
		if (ret == KEYFILE_KEPT)
			log_warn("peer %s: %s; the preshared key read before stays in use until "
				 "the file is right again (a restart or apply will refuse it)",
				 c->nodes[i].name, err);
		else if (ret == KEYFILE_BACK)
			log_info("peer %s: preshared key file %s read again", c->nodes[i].name,
				 path);
		if (ret < 0) {
			log_error("peer %s: %s (with --psk-dir every peer needs one, named after "
				  "it)",
				  c->nodes[i].name, err);
			return -1;
		}
	}
	return 0;
}

int session_load_keys(struct session *s, const struct options *o, bool private_key)
{
	if (private_key && load_private_key(s, o, NULL) < 0)
		return -1;
	return load_psks(s, o, NULL);
}

int session_load_keys_kept(struct session *s, const struct options *o, struct keyfile_store *keys)
{
	if (load_private_key(s, o, keys) < 0 || load_psks(s, o, keys) < 0)
		return -1;
	keyfile_store_sweep(keys); /* the preshared keys of peers that left */
	return 0;
}
