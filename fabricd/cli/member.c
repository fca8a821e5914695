// SPDX-License-Identifier: GPL-2.0-or-later
/* cli/member.c - this node's name, underlay address and key for init and join; the locked edit. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/member.h"
#include "definition/config.h"
#include "definition/keyfile.h"
#include "engine/session.h"
#include "netlink/route_src.h"

int member_name(const struct options *o, struct member *m)
{
	char host[256] = "";
	/* not session_node_name(): the definition's checks say what is wrong with a new name */
	const char *name = o->node ? o->node : host_node_name(host, sizeof(host));

	if (!name) {
		log_error("cannot read this host's name: give the node with -n NODE");
		return -1;
	}
	if ((size_t)snprintf(m->name, sizeof(m->name), "%s", name) >= sizeof(m->name)) {
		log_error("node name \"%s\" is longer than %d characters: give a shorter one with "
			  "-n NODE",
			  name, FABRICD_NAME_MAX);
		return -1;
	}
	return 0;
}

static void pending_path(const struct options *o, char *out, size_t len)
{
	keyfile_pending_path(o->key_file, out, len);
}

/* The key file's directory, for a refusal to remove again when it made it. */
static void key_dir(const struct options *o, char *out, size_t len)
{
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s", o->key_file);
	snprintf(out, len, "%s", dirname(copy));
}

/* A new key into path; its public key into m. */
static int new_key(const char *path, struct member *m)
{
	uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];
	char err[PATH_MAX + 128];
	int ret = wgkey_generate(priv);

	if (ret < 0) {
		log_error("cannot get random bytes for a key: %s", strerror(-ret));
		return -1;
	}
	wgkey_public(pub, priv);
	ret = keyfile_write(path, priv, err, sizeof(err));
	sodium_memzero(priv, sizeof(priv));
	if (ret < 0) {
		log_error("%s", err);
		return -1;
	}
	wgkey_to_base64(m->public_key, pub);
	return 0;
}

/*
 * Two inits or joins of one node at once (a configuration run started twice)
 * shared KEY.new: one's key overwrote or removed the other's, and the key
 * file ended up other than the definition's. The key's directory, locked
 * from here to member_key_commit/abandon, makes them take turns; the second
 * then finds the first's key. A directory that cannot be made or opened is
 * left for the key file's own error. Anyone who may open the directory can
 * lock it too (a user, where it is 0755): the wait ends after --lock-wait
 * (until 2026-12-06 it had no end). 0, or -1 said.
 */
static int lock_key_dir(const char *dir, unsigned int wait_s, struct member *m)
{
	struct timespec pause = {.tv_nsec = 20 * 1000000L};
	double deadline = clock_mono_ms() + wait_s * 1000.0;
	int fd;

	if (mkdir(dir, 0700) == 0)
		m->dir_created = true;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			return 0;
		}
		if (clock_mono_ms() >= deadline) {
			close(fd);
			log_error(
			    "%s: the directory of the key file is locked by another process for "
			    "more than %u s (another init or join of this node, or whoever "
			    "`fuser -v %s` names): nothing was changed; try again when it is "
			    "done, or keep the key in a directory only root may open (mode 0700)",
			    dir, wait_s, dir);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	m->key_lock = fd + 1;
	return 0;
}

static void unlock_key_dir(struct member *m)
{
	if (m->key_lock)
		close(m->key_lock - 1);
	m->key_lock = 0;
}

int member_key(const struct options *o, bool rotate, struct member *m)
{
	uint8_t priv[WGKEY_LEN], pub[WGKEY_LEN];
	char err[PATH_MAX + 256], pending[PATH_MAX + 8], dir[PATH_MAX];
	int ret;

	key_dir(o, dir, sizeof(dir));
	if (lock_key_dir(dir, o->lock_wait, m) < 0)
		return -1;
	/* a new key only where every later load accepts it (nothing written otherwise) */
	if (wgkey_check_dirs(o->key_file, WGKEY_FILE_PRIVATE, err, sizeof(err)) < 0) {
		log_error("%s; nothing was changed", err);
		return -1;
	}
	if (rotate) {
		pending_path(o, pending, sizeof(pending));
		if (new_key(pending, m) < 0)
			return -1;
		m->key_pending = true;
		return 0;
	}
	ret = wgkey_load_file(o->key_file, priv, err, sizeof(err));
	if (ret == -ENOENT) {
		pending_path(o, pending, sizeof(pending));
		if (new_key(pending, m) < 0)
			return -1;
		m->key_pending = m->key_created = true;
		return 0;
	}
	if (ret < 0) {
		log_error("%s", err);
		return -1;
	}
	wgkey_public(pub, priv);
	wgkey_to_base64(m->public_key, pub);
	/* under the lock no rotation runs: a KEY.new now is one that was interrupted */
	pending_path(o, pending, sizeof(pending));
	if (wgkey_load_file(pending, priv, err, sizeof(err)) == 0) {
		wgkey_public(pub, priv);
		wgkey_to_base64(m->leftover_key, pub);
	}
	sodium_memzero(priv, sizeof(priv));
	return 0;
}

int member_key_commit(const struct options *o, struct member *m)
{
	char pending[PATH_MAX + 8];

	if (!m->key_pending) {
		unlock_key_dir(m);
		return 0;
	}
	pending_path(o, pending, sizeof(pending));
	if (rename(pending, o->key_file) < 0) {
		log_error("%s: cannot replace it with the new key in %s: %s; the definition has "
			  "the new public key: rename %s to %s by hand",
			  o->key_file, pending, strerror(errno), pending, o->key_file);
		unlock_key_dir(m);
		return -1;
	}
	fsync_parent(o->key_file); /* the definition names the new key: the rename must last */
	unlock_key_dir(m);
	m->key_pending = false;
	if (m->key_created)
		log_info("%s: a new private key (mode 0600)", o->key_file);
	return 0;
}

void member_key_abandon(const struct options *o, struct member *m)
{
	char pending[PATH_MAX + 8];

	if (m->key_pending) {
		pending_path(o, pending, sizeof(pending));
		unlink(pending);
		m->key_pending = false;
	}
	if (m->dir_created) {
		char dir[PATH_MAX];

		/* made for the key that is not kept: empty, unless someone wrote there */
		key_dir(o, dir, sizeof(dir));
		rmdir(dir);
		m->dir_created = false;
	}
	unlock_key_dir(m);
}

/*
 * The source address towards dst into m; 0 or -errno. A dst that is one of
 * this host's own addresses (the kernel answers with dst itself) says
 * nothing about the way to the other nodes: -EADDRINUSE.
 */
static int source_towards(const struct ip_addr *dst, struct member *m)
{
	struct ip_addr src;
	int ret = nl_route_source(dst, &src);

	if (ret == 0 && ip_addr_equal(&src, dst))
		return -EADDRINUSE;
	if (ret == 0)
		ip_addr_str(&src, m->underlay, sizeof(m->underlay));
	return ret;
}

/* init: the address this node uses towards the rest of the world (the default route). */
static int default_source(struct member *m)
{
	/* documentation addresses (RFC 5737, RFC 3849): looked up, never sent to */
	static const char *const probes[] = {"198.51.100.1", "2001:db8:ffff::1"};
	struct ip_addr dst;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (ip_addr_parse(probes[i], &dst) == 0 && source_towards(&dst, m) == 0)
			return 0;
	}
	log_error("cannot tell this node's underlay address: no default route names a source "
		  "address; give it with --underlay ADDR");
	return -1;
}

int member_underlay(const struct options *o, const struct cluster *c, struct member *m)
{
	struct ip_addr a;
	int ret = -ENETUNREACH;

	if (o->underlay) {
		if (ip_addr_parse(o->underlay, &a) < 0) {
			log_error("--underlay \"%s\": not an IPv4 or IPv6 address; give this "
				  "node's address on the network between the nodes",
				  o->underlay);
			return -1;
		}
		ip_addr_str(&a, m->underlay, sizeof(m->underlay));
		return 0;
	}
	if (!c)
		return default_source(m);
	for (size_t i = 0; i < c->n_nodes && ret < 0; i++) {
		if (strcmp(c->nodes[i].name, m->name))
			ret = source_towards(&c->nodes[i].underlay, m);
	}
	if (ret < 0) {
		log_error("cannot tell this node's underlay address: no route to the underlay "
			  "addresses of the other nodes in %s (%s); give it with --underlay ADDR",
			  o->config,
			  ret == -EADDRINUSE ? "they are addresses of this host" : strerror(-ret));
		return -1;
	}
	return 0;
}

int member_edit(const struct options *o, const char *command, member_edit_fn edit, void *data,
		struct bootstrap_result *res)
{
	char err[2 * PATH_MAX + 256];
	struct deffile f;
	struct diag d;
	int ret, tries = 0;
	bool file_error = false;

	if (deffile_open_locked(o->config, o->lock_wait, command, &f, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	for (;;) {
		diag_init(&d);
		/*
		 * The file's syntax by its name (the edits only know its text); init
		 * decides itself (it fills an empty file, refuses any other).
		 */
		ret = 0;
		if (f.exists && strcmp(command, "init")) {
			if (deffile_blank(&f)) {
				diag_add(&d, f.path,
					 "empty: nothing was changed; create the cluster in it "
					 "with `fabricd init -c %s --cluster NAME --prefix "
					 "CIDR` on the first node",
					 o->config);
				ret = -EINVAL;
			} else {
				ret = config_json_check(f.text, f.len, f.path, NULL, &d);
			}
		}
		if (ret == 0)
			ret = edit(&f, data, res, &d);
		diag_print(&d, stderr);
		diag_free(&d);
		if (ret < 0 || !res->text)
			break;
		ret = deffile_replace(&f, res->text, strlen(res->text), err, sizeof(err));
		file_error = ret < 0;
		/* an editor that ignored the lock changed the file: redo the edit on its content */
		if (ret != -EAGAIN || ++tries == 10)
			break;
		ret = deffile_reread(&f, err, sizeof(err));
		if (ret < 0)
			break;
		bootstrap_result_free(res);
	}
	if (ret < 0 && file_error)
		log_error("%s", err);
	if (ret < 0)
		bootstrap_result_free(res);
	deffile_close(&f);
	return ret < 0 ? -1 : 0;
}
