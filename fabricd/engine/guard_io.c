// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * engine/guard_io.c - the nftables guard's changes: replace or remove the
 * `inet fabricd` table, or change its set elements, in one transaction
 * (libnftables, no nft process). Reading it is engine/guard_nl.c's.
 * What the table should hold and whether it differs is kinds/guard.c's.
 */
#include <errno.h>
#include <stdbool.h>
#include <nftables/libnftables.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "engine/guard_io.h"
#include "engine/guard_prints.h"
#include "kinds/guard_priv.h"

/*
 * nft's error text on one line: its "Error: ..." messages, without the input
 * it echoes and the caret marks (for a buffer, libnftables may echo the
 * wrong line). Errors from the kernel start "Could not process rule: ".
 */
static void nft_error_text(struct nft_ctx *ctx, char *out, size_t len)
{
	const char *all = nft_ctx_get_error_buffer(ctx), *e = all;
	size_t used = 0;

	out[0] = '\0';
	while (e && *e) {
		size_t n = strcspn(e, "\n");

		for (size_t i = 0; i + 7 <= n; i++) {
			int w;

			if (strncmp(e + i, "Error: ", 7))
				continue;
			w = snprintf(out + used, len - used, "%s%.*s", used ? "; " : "",
				     (int)(n - i - 7), e + i + 7);
			if (w > 0)
				used = used + (size_t)w >= len ? len - 1 : used + (size_t)w;
			break;
		}
		e += n + (e[n] == '\n');
	}
	if (!out[0])
		snprintf(out, len, "%s", all && *all ? all : "failed without a message");
}

/* Runs cmd with output (and errors) into buffers. 0 or -1, err filled. */
static int nft_run(unsigned int flags, const char *cmd, char **output, char *err, size_t errlen)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	int ret;

	err[0] = '\0';
	if (output)
		*output = NULL;
	if (!ctx) {
		snprintf(err, errlen, "libnftables could not start");
		return -1;
	}
	nft_ctx_output_set_flags(ctx, flags);
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		snprintf(err, errlen, "libnftables could not buffer its output");
		nft_ctx_free(ctx);
		return -1;
	}
	ret = nft_run_cmd_from_buffer(ctx, cmd);
	if (ret) {
		nft_error_text(ctx, err, errlen);
	} else if (output) {
		*output = strdup(nft_ctx_get_output_buffer(ctx));
		if (!*output) {
			snprintf(err, errlen, "%s", strerror(ENOMEM));
			ret = -1;
		}
	}
	nft_ctx_free(ctx);
	return ret ? -1 : 0;
}

/* An errno for nft's words (libnftables reports text only). */
static int nft_errno(const char *err)
{
	if (strstr(err, "Operation not permitted"))
		return -EPERM;
	if (strstr(err, "not supported"))
		return -EOPNOTSUPP; /* no nf_tables, or not this feature of it */
	/* what nft checks itself, before the kernel: a ruleset fabricd should never render */
	if (!strstr(err, "Could not process rule") && !strstr(err, "cache initialization"))
		return -EINVAL;
	if (strstr(err, "No such file or directory"))
		return -ENOENT; /* the kernel lacks an expression (module) the rules use */
	if (strstr(err, "Cannot allocate memory"))
		return -ENOMEM;
	return -EIO;
}

/* Set elements a new table's first transaction leaves out, loaded this many at a time. */
#define LOAD_CHUNK 2048 /* what one netlink send holds (engine/guard_delta.c) */

/*
 * A table that does not exist yet, in steps (kinds/guard_render.c,
 * firewall_load_steps): "create table" with the comment, and the table with
 * plain_members and fabric_members empty when they are large, then their
 * elements in chunks, one transaction each, so that libnftables never
 * parses them all at once (at 64,512 elements it took 25 MiB of heap). A
 * chunk goes over netlink as a delta does (engine/guard_delta.c: parsing the
 * 64,512 elements of 64 nodes x 1024 vnets in 4,096-element chunks made
 * libnftables most of a build's user CPU, 0.24 of 0.25 s against 0.06-0.09
 * now, and 3 MiB of its peak RSS); only a chunk that code leaves goes
 * through nft. A chunk that fails leaves a table stricter than the wanted
 * one; the next pass adds what is missing. 0, -1 (nft's words in err), or
 * -errno (the kernel refused a chunk sent over netlink, its words in err).
 */
static int load_chunk(const char *step, size_t *by_netlink, char *err, size_t errlen)
{
	int ret = firewall_load_send(step, err, errlen);

	*by_netlink += ret == 0;
	return ret == 1 ? nft_run(0, step, NULL, err, errlen) : ret;
}

static int load_new_table(const struct op *op, const char *mark, char *err, size_t errlen)
{
	struct strlist steps;
	struct sbuf b = {0};
	size_t by_netlink = 0;
	char *cmd;
	int ret;

	if (firewall_load_steps(op->text, LOAD_CHUNK, &steps) < 0)
		return snprintf(err, errlen, "%s", strerror(ENOMEM)), -1;
	sbuf_printf(&b, "create table " TABLE_NAME " {%.*s\n}\n%s",
		    (int)strcspn(mark + 1, "\n") + 1, mark, steps.v[0]);
	cmd = sbuf_take(&b);
	ret = cmd ? nft_run(0, cmd, NULL, err, errlen) : -1;
	if (!cmd)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	free(cmd);
	for (size_t i = 1; !ret && i < steps.n; i++) {
		ret = load_chunk(steps.v[i], &by_netlink, err, errlen);
		if (ret)
			log_error(
			    "%s: sets plain_members and fabric_members loaded in part (%zu of "
			    "%zu chunks of %d); the next pass adds the rest",
			    OBJECT, i - 1, steps.n - 1, LOAD_CHUNK);
	}
	log_debug("%s: loaded in %zu transactions (%zu of them set elements over netlink)", OBJECT,
		  steps.n, by_netlink);
	strlist_free(&steps);
	return ret;
}

/* What the rules are now that fabricd wrote them (engine/guard_prints.h); none after a delete. */
static void remember_rules(const struct op *op, bool delta)
{
	int ret;

	if (op->type == OP_FIREWALL_DELETE) {
		guard_prints_forget();
		return;
	}
	if (delta)
		return; /* the rules stayed */
	ret = firewall_learn_prints();
	if (ret < 0)
		log_warn("%s: cannot record its rules' prints: %s; a rule rewritten by hand with "
			 "fabricd's comment copied goes unnoticed until they are",
			 OBJECT, strerror(-ret));
}

/*
 * The table's text with the counters as the kernel has them just before it
 * is replaced (*text NULL: none to carry). The pass read them when it was
 * planned, and the old table went on counting while the pass changed links,
 * and between the two tables of a pass that switches one zone out of secure
 * and another into it: what it counted meanwhile (another zone's drops, say)
 * was lost, and the counters went back. 0 or -errno (logged: not read).
 */
static int recounted(const struct op *op, char **text)
{
	struct firewall_obs *now = NULL;
	int ret;

	*text = NULL;
	if (op->type != OP_FIREWALL_SET)
		return 0;
	ret = firewall_observe_counters(&now);
	if (ret < 0 || !now)
		return ret;
	*text = firewall_text_recount(op->text, now);
	firewall_obs_free(now);
	return *text ? 0 : -ENOMEM;
}

/*
 * The op in one transaction: the old table is never gone without the new one.
 * 0, -1 (nft's words in err), or -errno: the counters not read (said), ENOMEM.
 */
static int nft_replace(const struct op *op, bool delta, char *err, size_t errlen)
{
	/* the empty declaration makes the delete succeed when there is no table yet */
	static const char replace[] = "table " TABLE_NAME "\ndelete table " TABLE_NAME "\n";
	struct sbuf b = {0};
	char *text = NULL, *cmd;
	int ret;

	if (!delta && (ret = recounted(op, &text)) < 0)
		return ret;
	if (!delta)
		sbuf_printf(&b, "%s", replace);
	sbuf_printf(&b, "%s", text ? text : op->type == OP_FIREWALL_SET ? op->text : "");
	free(text);
	cmd = sbuf_take(&b);
	if (!cmd)
		return -ENOMEM;
	ret = nft_run(0, cmd, NULL, err, errlen);
	free(cmd);
	return ret;
}

int firewall_apply(struct op *op)
{
	/*
	 * Planned as missing: "create table" fails, changing nothing, when a table
	 * appeared since. It carries the comment (the ownership mark, which only a
	 * create sets); the declaration that follows fills the new table.
	 */
	const char *mark = NULL;
	char err[1024];
	bool delta;
	int ret;

	if (op->type != OP_FIREWALL_SET && op->type != OP_FIREWALL_DELETE)
		return -EINVAL;
	if (op->type == OP_FIREWALL_SET && !op->text)
		return -EINVAL;
	/* set elements only: the rest of the table, and its counters, stay */
	delta = op->type == OP_FIREWALL_SET &&
		!strncmp(op->text, FIREWALL_DELTA_MARK, strlen(FIREWALL_DELTA_MARK));
	if (op->type == OP_FIREWALL_SET && op->verb == VERB_CREATE && !delta)
		mark = strstr(op->text, "\n\tcomment \"");
	if (delta) {
		/* over netlink; a shape it does not send (or too many elements) goes through nft */
		ret = firewall_delta_send(op->text, err, sizeof(err));
		if (ret == 0)
			return 0;
		if (ret < 0) {
			log_error(
			    "%s: the kernel refused the change of its set elements: %s; the "
			    "table changed since it was read: apply again (the daemon reads it "
			    "again by itself)",
			    OBJECT, err);
			return ret;
		}
	}
	if (mark) {
		ret = load_new_table(op, mark, err, sizeof(err));
	} else {
		ret = nft_replace(op, delta, err, sizeof(err));
		if (ret < -1)
			return ret;
	}
	if (ret == 0) {
		remember_rules(op, delta);
		return 0;
	}
	if (ret < -1) {
		log_error("%s: the kernel refused its set elements: %s", OBJECT, err);
		return ret;
	}
	ret = nft_errno(err);
	if (op->type == OP_FIREWALL_DELETE)
		log_error("%s: cannot be removed: %s", OBJECT, err);
	else if (ret == -EOPNOTSUPP || ret == -ENOENT)
		log_error("%s: the kernel refused it: %s; the guard needs nf_tables (modprobe "
			  "nf_tables); no VXLAN or WireGuard device is made without it",
			  OBJECT, err);
	else if (ret == -EPERM)
		log_error("%s: not allowed: %s; fabricd needs CAP_NET_ADMIN", OBJECT, err);
	else if (ret == -EINVAL)
		log_error("%s: nft refused the ruleset fabricd rendered (please report this, with "
			  "`fabricd plan` output): %s",
			  OBJECT, err);
	else
		log_error("%s: the kernel refused it: %s", OBJECT, err);
	return ret;
}
