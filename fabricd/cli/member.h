/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli/member.h - what init and join need to know about this node: its name,
 * its underlay address and its key, and the definition edit they share
 * (lock, edit, replace, retry).
 */
#ifndef FABRICD_CLI_MEMBER_H
#define FABRICD_CLI_MEMBER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/addr.h"
#include "definition/bootstrap.h"
#include "engine/deffile.h"
#include "definition/model.h"
#include "definition/wgkey.h"
#include "engine/options.h"

struct member {
	char name[FABRICD_NAME_MAX + 1];
	char underlay[IP_ADDR_STRLEN];
	char public_key[WGKEY_B64_LEN];
	bool key_pending; /* a new key waits in "<key file>.new" until the definition has it */
	bool key_created; /* ... and there was none before (no key file) */
	bool dir_created; /* ... nor its directory: a refused init or join removes it again */
	int key_lock;	  /* the key directory's descriptor + 1, locked until commit or abandon */
	/* the public key of a "<key file>.new" an interrupted rotation left, or "" */
	char leftover_key[WGKEY_B64_LEN];
	bool leftover_used; /* ... is the definition's: join finishes that rotation */
};

/* -n NODE, or the host name up to its first dot, lower case. 0 or -1 after an error message. */
int member_name(const struct options *o, struct member *m);

/*
 * This node's key: the key file's; with rotate, or when there is no key
 * file, a new one in "<key file>.new", renamed over the key file by
 * member_key_commit() once the definition has it (a refused edit leaves no
 * key behind: member_key_abandon()). One init or join of the node at a time:
 * the next waits from member_key() until the first's commit or abandon (at most
 * --lock-wait: anyone who may open the directory can lock it). 0 or -1.
 */
int member_key(const struct options *o, bool rotate, struct member *m);
int member_key_commit(const struct options *o, struct member *m);
void member_key_abandon(const struct options *o, struct member *m);

/*
 * --underlay, or the source address of the route towards the cluster's
 * nodes (c: the definition, NULL for init: the default route). 0 or -1.
 */
int member_underlay(const struct options *o, const struct cluster *c, struct member *m);

/* An edit of the text of a locked definition; fills res, reasons in d. */
typedef int (*member_edit_fn)(const struct deffile *f, void *data, struct bootstrap_result *res,
			      struct diag *d);

/*
 * Locks o->config (waiting up to o->lock_wait seconds; command names the
 * edit to others waiting), runs edit on its content and replaces the file
 * when the edit changed it, redoing the edit when an editor without the lock
 * changed the file meanwhile. 0 (res filled) or -1 after the error messages.
 */
int member_edit(const struct options *o, const char *command, member_edit_fn edit, void *data,
		struct bootstrap_result *res);

#endif
