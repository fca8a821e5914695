// SPDX-License-Identifier: GPL-2.0-or-later
/* kinds/frr.c - render fabricd's FRR fragment and splice it into frr.conf. */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "definition/desired.h"
#include "definition/evpn.h"
#include "engine/plan.h"
#include "kinds/frr.h"
#include "kinds/kind.h"
#include "engine/observe.h"

/*
 * A BGP router ID is an IPv4 address: the fabric address, else the
 * underlay, else one derived from the node's index (unique in the cluster).
 */
static void router_id(const struct cluster *c, size_t self, char *buf, size_t len)
{
	const struct node *n = &c->nodes[self];
	uint32_t id = (uint32_t)self + 1;

	if (n->fabric_address.family == AF_INET)
		ip_addr_str(&n->fabric_address, buf, len);
	else if (n->underlay.family == AF_INET)
		ip_addr_str(&n->underlay, buf, len);
	else
		snprintf(buf, len, "0.%u.%u.%u", (id >> 16) & 255, (id >> 8) & 255, id & 255);
}

static void marker(FILE *f, const char *owner, const char *what)
{
	fprintf(f, "! %s %s\n", owner, what);
}

static void render_router(FILE *f, const struct cluster *c, size_t self)
{
	const char *g = FRR_PEER_GROUP;
	char id[IP_ADDR_STRLEN], src[IP_ADDR_STRLEN], a[IP_ADDR_STRLEN];

	router_id(c, self, id, sizeof(id));
	ip_addr_str(&c->nodes[self].fabric_address, src, sizeof(src));
	fprintf(f, "router bgp %u\n", c->fabric.evpn.asn);
	fprintf(f, " bgp router-id %s\n", id);
	fprintf(f, " no bgp default ipv4-unicast\n");
	fprintf(f, " neighbor %s peer-group\n", g);
	fprintf(f, " neighbor %s remote-as internal\n", g);
	fprintf(f, " neighbor %s update-source %s\n", g, src);
	/* the datacenter profile's values, whatever profile the operator's FRR runs */
	fprintf(f, " neighbor %s timers 3 9\n", g);
	fprintf(f, " neighbor %s timers connect 2\n", g);
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (evpn_peers(c, self, i))
			fprintf(f, " neighbor %s peer-group %s\n",
				ip_addr_str(&c->nodes[i].fabric_address, a, sizeof(a)), g);
	}
	fprintf(f, " !\n address-family l2vpn evpn\n");
	fprintf(f, "  neighbor %s activate\n", g);
	if (evpn_is_reflector(c, self))
		fprintf(f, "  neighbor %s route-reflector-client\n", g);
	fprintf(f, "  advertise-all-vni\n exit-address-family\nexit\n");
}

int frr_render(const struct cluster *c, size_t self, const char *owner, char **out)
{
	size_t len;
	FILE *f;

	*out = NULL;
	if (self >= c->n_nodes || !evpn_node_speaks(c, self))
		return 0;
	f = open_memstream(out, &len);
	if (!f)
		return -ENOMEM;
	marker(f, owner, "begin (written by fabricd from the cluster definition; edits are lost)");
	render_router(f, c, self);
	marker(f, owner, "end");
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Whether the line at p (up to a newline) is owner's marker what ("begin" or "end"). */
static bool is_marker(const char *p, const char *owner, const char *what)
{
	size_t lo = strlen(owner), lw = strlen(what);

	if (strncmp(p, "! ", 2) || strncmp(p + 2, owner, lo) || p[2 + lo] != ' ')
		return false;
	p += 3 + lo;
	return !strncmp(p, what, lw) && (p[lw] == ' ' || p[lw] == '\n' || !p[lw]);
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : p + strlen(p);
}

/*
 * fabricd's part without its markers: vtysh `write` (by an operator, or by
 * frr-reload.py for a pathspace) rewrites frr.conf from the running config
 * and drops comments. It is the default-VRF router bgp with fabricd's peer
 * group, up to its "exit".
 */
static bool find_unmarked(const char *conf, const char **start, const char **end)
{
	const char *prev = "";
	unsigned long asn;
	char rest[2];

	for (const char *p = conf; *p; prev = p, p = next_line(p)) {
		const char *q;
		bool ours = false;

		/* a marked part (another cluster's) starts right before its router bgp */
		if (!strncmp(prev, "! " OWNER_PREFIX, strlen("! " OWNER_PREFIX)) ||
		    sscanf(p, "router bgp %lu%1[\n]", &asn, rest) != 2)
			continue;
		for (q = next_line(p); *q && strncmp(q, "exit\n", 5) && strcmp(q, "exit");
		     q = next_line(q)) {
			if (!strncmp(q, " neighbor " FRR_PEER_GROUP " peer-group\n",
				     strlen(" neighbor " FRR_PEER_GROUP " peer-group\n")))
				ours = true;
		}
		if (!ours)
			continue;
		*start = p;
		*end = next_line(q);
		return true;
	}
	return false;
}

static bool is_exit(const char *p)
{
	return !strncmp(p, "exit\n", 5) || !strcmp(p, "exit");
}

/*
 * The span [*start, *end) of owner's block; false when conf has none. A
 * block whose end marker is gone (deleted by hand) ends with its router's
 * "exit": the operator's lines after it are theirs (until 2026-12-06 it ran
 * to the end of the file, and apply and down removed them); a file cut
 * short inside the router runs to its end.
 */
static bool find_block(const char *conf, const char *owner, const char **start, const char **end)
{
	const char *p = conf, *exit_end = NULL;

	*start = NULL;
	for (; *p; p = next_line(p)) {
		if (!*start && is_marker(p, owner, "begin")) {
			*start = p;
		} else if (*start && is_marker(p, owner, "end")) {
			*end = next_line(p);
			return true;
		} else if (*start && !exit_end && is_exit(p)) {
			exit_end = next_line(p);
		}
	}
	if (*start) {
		*end = exit_end ? exit_end : p;
		return true;
	}
	return find_unmarked(conf, start, end);
}

int frr_extract(const char *conf, const char *owner, char **block)
{
	const char *start, *end;

	*block = NULL;
	if (!find_block(conf, owner, &start, &end))
		return 0;
	*block = strndup(start, (size_t)(end - start));
	return *block ? 0 : -ENOMEM;
}

int frr_splice(const char *conf, const char *owner, const char *block, char **out)
{
	const char *start, *end;
	size_t len;
	FILE *f;

	*out = NULL;
	f = open_memstream(out, &len);
	if (!f)
		return -ENOMEM;
	if (find_block(conf, owner, &start, &end)) {
		fwrite(conf, 1, (size_t)(start - conf), f);
		if (block)
			fputs(block, f);
		fputs(end, f);
	} else {
		fputs(conf, f);
		if (*conf && conf[strlen(conf) - 1] != '\n')
			fputc('\n', f);
		if (block)
			fputs(block, f);
	}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

int frr_foreign_bgp(const char *conf, const char *owner, char *line, size_t len)
{
	const char *start = NULL, *end = NULL, *p;
	int no = 1;

	find_block(conf, owner, &start, &end);
	for (p = conf; *p; p = next_line(p), no++) {
		const char *nl = next_line(p);
		size_t n = (size_t)(nl - p);
		unsigned long asn;
		char rest[2];

		if (start && p >= start && p < end)
			continue;
		if (n && p[n - 1] == '\n')
			n--;
		if (n >= len)
			continue; /* longer than any "router bgp N" */
		memcpy(line, p, n);
		line[n] = '\0';
		/* "router bgp N" alone; "router bgp N vrf X" is another instance and fine */
		if (sscanf(line, "router bgp %lu %1s", &asn, rest) == 1)
			return no;
	}
	if (len)
		line[0] = '\0';
	return 0;
}

size_t frr_block_neighbors(const char *block)
{
	size_t n = 0;

	for (const char *p = block; p && *p; p = next_line(p)) {
		const char *hit = strstr(p, " peer-group " FRR_PEER_GROUP "\n");

		if (!strncmp(p, " neighbor ", 10) && hit && hit < next_line(p))
			n++;
	}
	return n;
}

/* The line at p without its leading blanks and trailing blanks; its length in *n. */
static const char *trimmed(const char *p, size_t *n)
{
	const char *e = next_line(p);

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*n = (size_t)(e - p);
	return p;
}

/*
 * Whether a block line is compared with FRR's running configuration: not
 * comments, markers and exits, which FRR does not show, nor settings that
 * another FRR version or defaults profile may take as its default and then
 * not show (`no bgp default ipv4-unicast`, the timers): a line FRR never
 * shows would make every plan load the part again, and the daemon reload
 * FRR every second. Losing one of those by hand does not stop EVPN.
 */
static bool frr_shown(const char *s, size_t n)
{
	return n && s[0] != '!' && !(n == 4 && !strncmp(s, "exit", 4)) &&
	       !(n == 19 && !strncmp(s, "exit-address-family", 19)) &&
	       !(n >= 3 && !strncmp(s, "no ", 3)) && !memmem(s, n, " timers ", 8);
}

/* Whether running (from the block's first line, its router, to that router's exit) has s. */
static bool router_has(const char *router, const char *s, size_t n)
{
	for (const char *p = router; *p; p = next_line(p)) {
		size_t m;
		const char *t = trimmed(p, &m);

		if (m == n && !strncmp(t, s, n))
			return true;
		if (p != router && !strncmp(p, "exit", 4) && (p[4] == '\n' || !p[4]))
			return false; /* the router's own exit, at column 0 */
	}
	return false;
}

/* The line of running that is s at column 0 (a router's first line), or NULL. */
static const char *find_router(const char *running, const char *s, size_t n)
{
	for (const char *q = running; *q; q = next_line(q)) {
		size_t m;
		const char *t = trimmed(q, &m);

		if (q == t && m == n && !strncmp(t, s, n))
			return q;
	}
	return NULL;
}

bool frr_running_lacks(const char *running, const char *block, char *line, size_t len)
{
	const char *router = NULL;

	for (const char *p = block; *p; p = next_line(p)) {
		size_t n;
		const char *s = trimmed(p, &n);
		bool found;

		if (!frr_shown(s, n))
			continue;
		if (!router) /* the block's first line is its router: the rest is inside */
			found = (router = find_router(running, s, n)) != NULL;
		else
			found = router_has(router, s, n);
		if (!found) {
			snprintf(line, len, "%.*s", (int)n, s);
			return true;
		}
	}
	return false;
}

/* Whether text has a line equal to the len bytes at line. */
static bool has_line(const char *text, const char *line, size_t len)
{
	for (const char *p = text; *p; p = next_line(p)) {
		size_t n = (size_t)(next_line(p) - p);

		if (n && p[n - 1] == '\n')
			n--;
		if (n == len && !memcmp(p, line, len))
			return true;
	}
	return false;
}

/* The lines of from that to lacks, as "sign line" notes on op (as many as fit). */
static void detail_lines(struct op *op, const char *from, const char *to, char sign)
{
	for (const char *p = from; *p; p = next_line(p)) {
		size_t n = (size_t)(next_line(p) - p);
		const char *s = p;

		if (n && p[n - 1] == '\n')
			n--;
		if (!n || p[0] == '!' || has_line(to, p, n))
			continue;
		while (n && *s == ' ') { /* indentation says nothing in one line */
			s++;
			n--;
		}
		op_detail(op, "%c%.*s", sign, (int)n, s);
	}
}

int frr_plan(const struct node_state *want, const char *conf, const char *block, struct plan *p,
	     struct diag *diag)
{
	const struct cluster *c = want->cluster;
	char *text = NULL, line[128];
	struct op *op;
	int ret = frr_render(c, want->self, want->owner, &text);

	if (ret < 0)
		return ret;
	if (!conf)
		conf = ""; /* no frr.conf read (unit tests of the planner) */
	if ((!text && !block) || (text && block && !strcmp(text, block))) {
		free(text);
		return 0;
	}
	if (text && frr_foreign_bgp(conf, want->owner, line, sizeof(line))) {
		diag_add(
		    diag, "frr.conf",
		    "has \"%s\" outside fabricd's part; FRR allows one default-VRF BGP "
		    "instance, so the evpn control plane cannot be added: remove it, or move it "
		    "into a VRF (router bgp N vrf NAME)",
		    line);
		free(text);
		return 0;
	}
	op = plan_add(p, KIND_FRR, OP_FRR_CONFIG, PHASE_FRR,
		      text ? (block ? VERB_CHANGE : VERB_CREATE) : VERB_DELETE, NULL);
	if (!op) {
		free(text);
		return -ENOMEM;
	}
	op->text = text;
	if (text && block) {
		op_detail(op, "via frr-reload.py");
		detail_lines(op, block, text, '-');
		detail_lines(op, text, block, '+');
	} else if (text) {
		op_detail(
		    op, "router bgp %u, %zu evpn neighbors%s, advertise-all-vni, via frr-reload.py",
		    c->fabric.evpn.asn, frr_block_neighbors(text),
		    evpn_is_reflector(c, want->self) ? " (route-reflector clients)" : "");
	} else
		op_detail(op, "fabricd's part of frr.conf, via frr-reload.py");
	return 0;
}

int frr_plan_down(const struct frr_obs *frr, struct plan *p)
{
	struct op *op;

	/*
	 * A reload cut short: FRR may run a part the file no longer has. An
	 * unread file may hold one: planned, so that down fails saying why.
	 */
	if (!frr->block && !frr->reload_cut_short && !frr->read_error)
		return 0;
	op = plan_add(p, KIND_FRR, OP_FRR_CONFIG, PHASE_FRR, VERB_DELETE, NULL);
	if (!op)
		return -ENOMEM;
	if (frr->read_error)
		op_detail(op, "fabricd's part of frr.conf, if it holds one: %s cannot be read (%s)",
			  frr->path, strerror(frr->read_error));
	else
		op_detail(op, "fabricd's part of frr.conf, via frr-reload.py");
	return 0;
}

const char *frr_read_why(int err, char *buf, size_t len)
{
	if (err == EPERM)
		return "it is a symbolic link of another user's (or leads through one): fabricd "
		       "reads frr.conf only through links root made, never through one the frr "
		       "user (who owns " FRR_CONF_DIR ") may have planted to choose which file of "
		       "root's it reads and rewrites; remove the link, or make it anew as root";
	snprintf(buf, len, "%s; fabricd keeps the rest of that file, so it must read it first",
		 strerror(err));
	return buf;
}

/*
 * frr.conf unread: nothing planned from a file fabricd does not know (the
 * rest of it is kept, so it must be read first), and said: an error where
 * the definition wants fabricd's part in it, a warning where it does not.
 */
static int frr_plan_unread(const struct kind_input *in, const struct frr_obs *frr)
{
	char *text = NULL, buf[256];
	const char *why = frr_read_why(frr->read_error, buf, sizeof(buf));
	int ret = frr_render(in->want->cluster, in->want->self, in->want->owner, &text);

	if (ret < 0)
		return ret;
	if (text)
		diag_add(in->diag, frr->path, "cannot read it: %s", why);
	else
		diag_warn(in->diag, frr->path,
			  "cannot read it, so whether it still holds a part of fabricd's is "
			  "unknown: %s",
			  why);
	free(text);
	return 0;
}

/*
 * FRR's part is one kind like the others, but it is read from frr.conf
 * (engine/frr.c), not parsed from a dump, and applied by frr-reload.py: in:
 * want, have->frr (the file and fabricd's block in it), diag.
 */
static int frr_kind_plan(const struct kind_input *in, struct plan *p)
{
	const struct frr_obs *frr = &in->have->frr;
	size_t before = p->n;
	/*
	 * A reload cut short, or FRR running without a line of the part: the
	 * part in the file is not what FRR runs, so not compared (loaded again)
	 */
	bool again = frr->reload_cut_short || frr->running_lacks[0];
	struct op *op;
	int ret;

	if (frr->read_error)
		return frr_plan_unread(in, frr);
	ret = frr_plan(in->want, frr->conf, again ? NULL : frr->block, p, in->diag);

	if (ret == 0 && frr->reload_cut_short && p->n == before) {
		/* nothing of fabricd's wanted: FRR may still run what the file no longer has */
		op = plan_add(p, KIND_FRR, OP_FRR_CONFIG, PHASE_FRR, VERB_DELETE, NULL);
		if (!op)
			return -ENOMEM;
		op_detail(op, "fabricd's part of frr.conf, via frr-reload.py");
	}
	if (ret == 0 && frr->reload_cut_short && p->n > before)
		op_detail(&p->ops[p->n - 1], "again: fabricd was stopped during the last reload");
	else if (ret == 0 && frr->running_lacks[0] && p->n > before)
		op_detail(&p->ops[p->n - 1],
			  "again: FRR's running configuration lacks \"%s\" of frr.conf (changed "
			  "by vtysh by hand?)",
			  frr->running_lacks);

	/* in place and unchanged, so nothing refuses: said, as status says it */
	if (ret == 0 && p->n == before && frr->block && frr->not_running[0])
		diag_warn(in->diag, "frr",
			  "%s; until it runs, this node's EVPN zones learn and announce nothing",
			  frr->not_running);
	return ret;
}

/* Its op is one a pass: the detail is in op.note. */
static void frr_describe(const struct op *op, char *buf, size_t len)
{
	(void)op;
	if (len)
		buf[0] = '\0';
}

const struct kind frr_kind = {.name = "frr",
			      .noun = "frr bgp evpn",
			      .parse = NULL,
			      .plan = frr_kind_plan,
			      .encode = NULL,
			      .describe = frr_describe};
