// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * definition/keyfile.c - a private key file: 0600 from its creation, replaced
 * by rename; and the keys kept across passes, read again when changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "definition/keyfile.h"

static int make_parent(const char *path)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

bool keyfile_pending_path(const char *key_file, char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s.new", key_file) < len;
}

int keyfile_write(const char *path, const uint8_t key[WGKEY_LEN], char *err, size_t errlen)
{
	char line[WGKEY_B64_LEN + 1];
	int ret = make_parent(path);

	if (ret < 0) {
		snprintf(err, errlen,
			 "%s: cannot create its directory: %s; give another --key-file", path,
			 strerror(-ret));
		return ret;
	}
	wgkey_to_base64(line, key);
	line[WGKEY_B64_LEN - 1] = '\n';
	/* created 0600 before the key is written: never in a file others could open */
	ret = write_secret_file(path, line, WGKEY_B64_LEN);
	sodium_memzero(line, sizeof(line));
	if (ret == -ELOOP)
		snprintf(err, errlen,
			 "%s is a symbolic link: a private key is written into a file of its own, "
			 "never through a link (whoever made it would choose which file gets the "
			 "key); nothing was changed: remove it (rm %s)",
			 path, path);
	else if (ret < 0)
		snprintf(err, errlen,
			 "%s: cannot write the key: %s; nothing was changed; give another "
			 "--key-file",
			 path, strerror(-ret));
	return ret;
}

/* One key file as read: what stat said of it then, and its key. */
struct keyfile_kept {
	char *path;
	bool used;    /* asked for since the last sweep */
	bool racy;    /* changed too recently when read: read it again */
	bool failing; /* the file fails now: key is the one read before */
	dev_t dev;
	ino_t ino;
	off_t size;
	mode_t mode;
	uid_t uid;
	struct timespec mtime, ctime;
	uint8_t key[WGKEY_LEN];
};

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool kept_matches(const struct keyfile_kept *k, const struct stat *st)
{
	return !k->racy && k->dev == st->st_dev && k->ino == st->st_ino && k->size == st->st_size &&
	       k->mode == st->st_mode && k->uid == st->st_uid &&
	       same_time(&k->mtime, &st->st_mtim) && same_time(&k->ctime, &st->st_ctim);
}

static long long ms_of(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

/* A change within racy_ms of now may be followed by one with the same times. */
static bool recent(const struct keyfile_store *ks, const struct stat *st)
{
	long long window = ks->racy_ms ? ks->racy_ms : KEYFILE_RACY_MS;
	struct timespec now;

	if (ks->racy_ms < 0)
		return false;
	clock_gettime(CLOCK_REALTIME, &now);
	return ms_of(&st->st_ctim) > ms_of(&now) - window ||
	       ms_of(&st->st_mtim) > ms_of(&now) - window;
}

static struct keyfile_kept *kept_find(struct keyfile_store *ks, const char *path)
{
	for (size_t i = 0; i < ks->n; i++) {
		if (!strcmp(ks->kept[i].path, path))
			return &ks->kept[i];
	}
	return NULL;
}

static void kept_forget(struct keyfile_store *ks, struct keyfile_kept *k)
{
	size_t i = (size_t)(k - ks->kept);

	free(k->path);
	sodium_memzero(k, sizeof(*k));
	ks->kept[i] = ks->kept[ks->n - 1];
	sodium_memzero(&ks->kept[ks->n - 1], sizeof(*k));
	ks->n--;
}

/* A new entry for path (its key and times set by the caller); NULL when out of memory. */
static struct keyfile_kept *kept_add(struct keyfile_store *ks, const char *path)
{
	struct keyfile_kept *grown, *k;
	char *copy = strdup(path);

	if (!copy)
		return NULL;
	/* a new array, the old one wiped: keys are never left behind in freed memory */
	grown = calloc(ks->n + 1, sizeof(*grown));
	if (!grown) {
		free(copy);
		return NULL;
	}
	if (ks->n)
		memcpy(grown, ks->kept, ks->n * sizeof(*grown));
	if (ks->kept)
		sodium_memzero(ks->kept, ks->n * sizeof(*ks->kept));
	free(ks->kept);
	ks->kept = grown;
	k = &ks->kept[ks->n++];
	k->path = copy;
	return k;
}

static void kept_record(struct keyfile_store *ks, struct keyfile_kept *k, const struct stat *st,
			const uint8_t key[WGKEY_LEN])
{
	sodium_memzero(k->key, sizeof(k->key));
	memcpy(k->key, key, WGKEY_LEN);
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->size = st->st_size;
	k->mode = st->st_mode;
	k->uid = st->st_uid;
	k->mtime = st->st_mtim;
	k->ctime = st->st_ctim;
	k->racy = recent(ks, st);
	k->used = true;
}

int keyfile_store_load(struct keyfile_store *ks, const char *path, enum wgkey_file kind,
		       uint8_t key[WGKEY_LEN], char *err, size_t errlen)
{
	struct keyfile_kept *k = ks ? kept_find(ks, path) : NULL;
	struct stat st;
	bool known;
	int ret;

	if (!ks)
		return wgkey_load_file_of(path, kind, key, err, errlen);
	/* what stat says before the read: a change after it shows at the next stat */
	known = stat(path, &st) == 0;
	if (k && known && kept_matches(k, &st)) {
		memcpy(key, k->key, WGKEY_LEN);
		k->used = true;
		return 0;
	}
	ks->reads++;
	ret = wgkey_load_file_of(path, kind, key, err, errlen);
	if (ret < 0 && k) {
		/* the key read before: the file is checked again at every load */
		memcpy(key, k->key, WGKEY_LEN);
		k->used = true;
		k->racy = true; /* the file is read again next time */
		ret = k->failing ? KEYFILE_STILL_KEPT : KEYFILE_KEPT;
		k->failing = true;
		return ret;
	}
	if (ret < 0 || !known) {
		if (k)
			kept_forget(ks, k);
		return ret;
	}
	ret = k && k->failing ? KEYFILE_BACK : 0;
	if (!k)
		k = kept_add(ks, path);
	if (k) {
		kept_record(ks, k, &st, key); /* out of memory: read again next time */
		k->failing = false;
	}
	return ret;
}

void keyfile_store_sweep(struct keyfile_store *ks)
{
	for (size_t i = ks->n; i-- > 0;) {
		if (!ks->kept[i].used)
			kept_forget(ks, &ks->kept[i]);
		else
			ks->kept[i].used = false;
	}
}

void keyfile_store_free(struct keyfile_store *ks)
{
	if (!ks)
		return;
	while (ks->n)
		kept_forget(ks, &ks->kept[ks->n - 1]);
	free(ks->kept);
	ks->kept = NULL;
}
