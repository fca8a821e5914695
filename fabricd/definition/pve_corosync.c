// SPDX-License-Identifier: GPL-2.0-or-later
/* definition/pve_corosync.c - corosync.conf: cluster name and nodelist (see pve_corosync.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "definition/pve_corosync.h"

#define DEPTH_MAX 8

struct coro_ctx {
	struct corosync_conf *c;
	struct diag *diag;
	const char *file;
	unsigned int line;
	char names[DEPTH_MAX][32];
	int depth;
	struct corosync_node *node; /* open nodelist.node block */
	int ret;
};

static void coro_error(struct coro_ctx *x, const char *fmt, const char *arg)
{
	char where[256];

	snprintf(where, sizeof(where), "%s:%u", x->file, x->line);
	diag_add(x->diag, where, fmt, arg);
	x->ret = -EINVAL;
}

static int open_node(struct coro_ctx *x)
{
	struct corosync_node *grown =
	    realloc(x->c->nodes, (x->c->n_nodes + 1) * sizeof(*x->c->nodes));

	if (!grown)
		return -ENOMEM;
	x->c->nodes = grown;
	x->node = &grown[x->c->n_nodes++];
	memset(x->node, 0, sizeof(*x->node));
	x->node->line = x->line;
	return 0;
}

static void close_block(struct coro_ctx *x)
{
	if (x->depth == 0) {
		coro_error(x, "%sunbalanced \"}\"", "");
		return;
	}
	x->depth--;
	if (x->node && x->depth == 1) {
		if (!x->node->name)
			coro_error(x, "%snode block without \"name:\"; add one", "");
		x->node = NULL;
	}
}

/* ring0_addr..ring7_addr, link0_addr..: the link index, or -1 */
static int link_index(const char *key)
{
	const char *p = !strncmp(key, "ring", 4) || !strncmp(key, "link", 4) ? key + 4 : NULL;

	if (!p || !isdigit((unsigned char)p[0]) || strcmp(p + 1, "_addr"))
		return -1;
	return p[0] - '0' < COROSYNC_LINKS ? p[0] - '0' : -1;
}

static int set_value(struct coro_ctx *x, const char *key, const char *value)
{
	char **slot = NULL;
	int link;

	if (x->depth == 1 && !strcmp(x->names[0], "totem") && !strcmp(key, "cluster_name"))
		slot = &x->c->cluster_name;
	else if (x->node && !strcmp(key, "name"))
		slot = &x->node->name;
	else if (x->node && (link = link_index(key)) >= 0)
		slot = &x->node->addr[link];
	else if (x->node && !strcmp(key, "nodeid"))
		x->node->nodeid = strtoul(value, NULL, 10);
	if (!slot)
		return 0;
	free(*slot);
	*slot = strdup(value);
	return *slot ? 0 : -ENOMEM;
}

static int parse_tokens(struct coro_ctx *x, char *line)
{
	char *hash = strchr(line, '#'), *save = NULL, *tok, *prev = NULL;

	if (hash)
		*hash = '\0';
	for (tok = strtok_r(line, " \t\r", &save); tok && x->ret == 0;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		size_t n = strlen(tok);

		if (!strcmp(tok, "{")) {
			if (!prev || x->depth == DEPTH_MAX) {
				coro_error(x, "%s\"{\" without a block name", "");
				break;
			}
			snprintf(x->names[x->depth], sizeof(x->names[0]), "%s", prev);
			x->depth++;
			if (x->depth == 2 && !strcmp(x->names[0], "nodelist") &&
			    !strcmp(prev, "node") && open_node(x) < 0)
				return -ENOMEM;
			prev = NULL;
		} else if (!strcmp(tok, "}")) {
			close_block(x);
		} else if (n > 1 && tok[n - 1] == ':') {
			char *value = strtok_r(NULL, " \t\r", &save);

			tok[n - 1] = '\0';
			if (!value) {
				coro_error(x, "\"%s:\" without a value", tok);
				break;
			}
			if (set_value(x, tok, value) < 0)
				return -ENOMEM;
		} else {
			prev = tok;
		}
	}
	return 0;
}

static void check_names(struct coro_ctx *x)
{
	for (size_t i = 0; i < x->c->n_nodes; i++) {
		for (size_t j = 0; j < i; j++) {
			if (x->c->nodes[i].name && x->c->nodes[j].name &&
			    !strcmp(x->c->nodes[i].name, x->c->nodes[j].name)) {
				x->line = x->c->nodes[i].line;
				coro_error(x, "node \"%s\" is listed twice in nodelist",
					   x->c->nodes[i].name);
			}
		}
	}
}

int corosync_parse(const char *text, size_t len, const char *file_name, struct corosync_conf *out,
		   struct diag *diag)
{
	struct coro_ctx x = {.c = out, .diag = diag, .file = file_name};
	const char *p = text, *end = text + len;

	memset(out, 0, sizeof(*out));
	while (p < end && x.ret == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = malloc(n + 1);
		int ret;

		if (!line) {
			x.ret = -ENOMEM;
			break;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		x.line++;
		ret = strlen(line) == n ? parse_tokens(&x, line) : 0;
		free(line);
		if (ret < 0)
			x.ret = ret;
		p += n + 1;
	}
	if (x.ret == 0 && x.depth) {
		coro_error(&x, "%sa block is not closed: add the missing \"}\"", "");
	}
	if (x.ret == 0)
		check_names(&x);
	if (x.ret < 0)
		corosync_free(out);
	return x.ret;
}

void corosync_free(struct corosync_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_nodes; i++) {
		free(c->nodes[i].name);
		for (int l = 0; l < COROSYNC_LINKS; l++)
			free(c->nodes[i].addr[l]);
	}
	free(c->nodes);
	free(c->cluster_name);
	memset(c, 0, sizeof(*c));
}
